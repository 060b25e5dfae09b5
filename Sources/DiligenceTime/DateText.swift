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

    /// A moment: RFC 3339; or a local date and time, `YYYY-MM-DD HH:MM[:SS]` (or with `T`);
    /// or `HH:MM[:SS]` alone, the moment of `today` (a statistics day) whose clock reads so — on
    /// its date from `day_starts_at` on, on the next date before it (with days starting at
    /// 04:00, `23:00` at 02:00 is yesterday evening, `01:00` an hour ago). A local time may carry
    /// its offset (`2026-10-25 02:30+02:00`, `Z`); without one, a time the clocks skip (DST gap)
    /// or show twice (the hour after a fall back) is refused: nothing is guessed.
    public static func moment(_ text: String, today: StatisticsDay, dayStartsAt: Int) throws(DateTextError) -> Double {
        if let wall = RFC3339.parse(text) { return wall }
        guard let local = LocalMoment(text) else {
            throw DateTextError(
                "invalid_date", "\(text.debugDescription) is not a time: give HH:MM (today), YYYY-MM-DD HH:MM, or RFC 3339.")
        }
        let date = local.date ?? (local.hour * 60 + local.minute >= dayStartsAt ? today.date : today.date.adding(days: 1))
        if let offset = local.offset {
            return Double(date.daysSince1970 * 86400 + local.secondOfDay - offset)
        }
        let shown = "\(date) \(local.clock)"
        switch LocalDay.meaning(of: date, hour: local.hour, minute: local.minute, second: local.second) {
        case .unique(let wall):
            return wall
        case .skipped(let at, let before, let after):
            let from = clockText(at, offset: before)
            let to = clockText(at, offset: after)
            throw DateTextError(
                "nonexistent_time",
                "\(shown) does not exist here: the clocks jumped from \(from) straight to \(to) "
                    + "(\(zoneName(at - 1, before)) to \(zoneName(at, after))). Give a time before \(from) or from \(to) on.")
        case .repeated(let first, let firstOffset, let second, let secondOffset):
            let back = LocalDay.transition(after: first, before: second)
            throw DateTextError(
                "ambiguous_time",
                "\(shown) happens twice here (the clocks went back from \(clockText(back, offset: firstOffset)) "
                    + "to \(clockText(back, offset: secondOffset))): say which with its offset, \(shown)\(RFC3339.offsetText(firstOffset)) "
                    + "(\(zoneName(first, firstOffset)), the first) or \(shown)\(RFC3339.offsetText(secondOffset)) (\(zoneName(second, secondOffset)), the second)."
            )
        }
    }

    /// `HH:MM` of local time at `wall` with `offset` seconds east of UTC.
    private static func clockText(_ wall: Double, offset: Int) -> String {
        let second = ((Int(wall.rounded(.down)) + offset) % 86400 + 86400) % 86400
        return TimeOfDay.format(second / 60)
    }

    /// The zone's abbreviation at `wall`, or the offset where it has none.
    private static func zoneName(_ wall: Double, _ offset: Int) -> String {
        let abbreviation = LocalDay.zoneAbbreviation(at: wall)
        let offsetText = "UTC" + RFC3339.offsetText(offset)
        return abbreviation.isEmpty || abbreviation.hasPrefix("+") || abbreviation.hasPrefix("-")
            ? offsetText : "\(abbreviation), \(offsetText)"
    }
}

/// Why a date or time typed into a command was refused: a protocol error code
/// (`invalid_date`, `nonexistent_time`, `ambiguous_time`) and a message saying what to give.
public struct DateTextError: Error, Equatable, Sendable {
    public var code: String
    public var message: String

    public init(_ code: String, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// `[YYYY-MM-DD(T| )]HH:MM[:SS][Z|±HH:MM]`, taken apart.
struct LocalMoment {
    var date: CalendarDay?
    var hour: Int
    var minute: Int
    var second: Int
    /// Seconds east of UTC, when given.
    var offset: Int?
    /// The time as typed, without its offset.
    var clock: Substring

    var secondOfDay: Int { hour * 3600 + minute * 60 + second }

    init?(_ text: String) {
        let parts = text.split(whereSeparator: { $0 == "T" || $0 == " " })
        guard (1...2).contains(parts.count) else { return nil }
        if parts.count == 2 {
            guard let d = CalendarDay(String(parts[0])) else { return nil }
            date = d
        }
        var time = parts[parts.count - 1]
        if time.last == "Z" || time.last == "z" {
            offset = 0
            time = time.dropLast()
        } else if let sign = time.firstIndex(where: { $0 == "+" || $0 == "-" }) {
            let fields = time[time.index(after: sign)...].split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count == 2, fields.allSatisfy({ $0.count == 2 && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
                let h = Int(fields[0]), let m = Int(fields[1]), h < 24, m < 60
            else { return nil }
            offset = (h * 3600 + m * 60) * (time[sign] == "-" ? -1 : 1)
            time = time[..<sign]
        }
        let fields = time.split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(fields.count), fields.allSatisfy({ $0.count == 2 && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let h = Int(fields[0]), let m = Int(fields[1]), let s = fields.count == 3 ? Int(fields[2]) : 0,
            h < 24, m < 60, s < 60
        else { return nil }
        (hour, minute, second, clock) = (h, m, s, time)
    }
}
