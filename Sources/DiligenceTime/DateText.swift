/// Dates and times as people type them into commands (`plan set`, `history`, `history add`,
/// `export`), read in the local time zone. The daemon names the argument in its error messages.
public enum DateText {
    /// A day: `YYYY-MM-DD`, `today`, `tomorrow`, `yesterday`, or a weekday (`monday`, `mon`) of
    /// the week `weekOffset` weeks from `today`'s; nil for anything else.
    public static func day(_ text: String, today: CalendarDay, weekOffset: Int = 0) -> CalendarDay? {
        if let date = CalendarDay(text) { return date }
        let word = text.lowercased()
        switch word {
        case "today": return today
        case "tomorrow": return today.adding(days: 1)
        case "yesterday": return today.adding(days: -1)
        default: break
        }
        if word.count >= 3, let index = CalendarDay.weekdayNames.firstIndex(where: { $0.hasPrefix(word) }) {
            // Checked: any offset saturates at the calendar's ends rather than trapping.
            let (days, overflow) = weekOffset.multipliedReportingOverflow(by: 7)
            return overflow ? (weekOffset > 0 ? .latest : .earliest) : today.monday.adding(days: index).adding(days: days)
        }
        return nil
    }

    /// A bound of a time range: a date `YYYY-MM-DD` (the start of its statistics day, or of the
    /// next one when `endOfDay`, so that an end bound includes the day), or an RFC 3339 time.
    public static func bound(_ text: String, endOfDay: Bool, dayStartsAt: Int) -> Double? {
        if let day = CalendarDay(text) {
            return LocalDay.start(of: endOfDay ? day.adding(days: 1) : day, dayStartsAt: dayStartsAt)
        }
        return RFC3339.parse(text)
    }

    /// A moment: RFC 3339, or local `YYYY-MM-DDTHH:MM[:SS]` / `YYYY-MM-DD HH:MM[:SS]`, or
    /// `HH:MM[:SS]` on `today`'s calendar date.
    public static func moment(_ text: String, today: CalendarDay) -> Double? {
        if let wall = RFC3339.parse(text) { return wall }
        let parts = text.split(whereSeparator: { $0 == "T" || $0 == " " })
        var date = today
        var time = Substring(text)
        if parts.count == 2, let d = CalendarDay(String(parts[0])) {
            date = d
            time = parts[1]
        }
        let fields = time.split(separator: ":")
        if (2...3).contains(fields.count), fields.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCII) }),
           let h = Int(fields[0]), let m = Int(fields[1]), let s = fields.count == 3 ? Int(fields[2]) : 0,
           h < 24, m < 60, s < 60 {
            return LocalDay.wall(of: date, hour: h, minute: m, second: s)
        }
        return nil
    }
}
