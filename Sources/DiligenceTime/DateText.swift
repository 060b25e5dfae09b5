/// Dates and times as people type them into commands, read in the local time zone: one
/// vocabulary for every command (`stats DATE`, `plan set DAY`, `history`/`export --since/--until`,
/// `history add START END`). The daemon names the argument in its error messages.
///
/// - a day: `YYYY-MM-DD`, `today`, `yesterday`, `tomorrow`, a weekday (`monday`, `mon`), or days
///   or weeks from today (`-3d`, `+2d`, `-1w`);
/// - a moment: a day and a time (`yesterday 14:00`, `2026-03-01 09:30`), a time alone (`14:00`,
///   today), or RFC 3339;
/// - a bound of a range (`--since`, `--until`): a day (its whole statistics day) or a moment.
public enum DateText {
    /// What a day may be written as, for error messages.
    public static let dayForms = "today, yesterday, a weekday such as monday, -3d, or YYYY-MM-DD"
    /// What a moment may be written as, for error messages.
    public static let momentForms = "HH:MM (today), a day and a time such as \"yesterday 14:00\" or \"2026-03-01 09:30\", or RFC 3339"

    /// A day (see the type's summary), or nil. A weekday is that day of the week `weekOffset`
    /// weeks from `today`'s (weeks run Monday to Sunday: `plan set friday`); without an offset it
    /// is the latest such day up to today (`history --since friday` on a Wednesday: last Friday).
    public static func day(_ text: String, today: CalendarDay, weekOffset: Int? = nil) -> CalendarDay? {
        if let date = CalendarDay(text) { return date }
        let word = text.lowercased()
        switch word {
        case "today": return today
        case "tomorrow": return today.adding(days: 1)
        case "yesterday": return today.adding(days: -1)
        default: break
        }
        if let days = relativeDays(word) { return today.adding(days: days) }
        guard word.count >= 3, let index = CalendarDay.weekdayNames.firstIndex(where: { $0.hasPrefix(word) }) else { return nil }
        guard let weekOffset else {
            // Back from today to the latest day with that weekday (today itself when it has it).
            return today.adding(days: -((today.weekday - 1 - index + 7) % 7))
        }
        // Checked: any offset saturates at the calendar's ends rather than trapping.
        let (days, overflow) = weekOffset.multipliedReportingOverflow(by: 7)
        return overflow ? (weekOffset > 0 ? .latest : .earliest) : today.monday.adding(days: index).adding(days: days)
    }

    /// `-3d`, `+2d`, `-1w`, `+1w` as days from today; nil for anything else. At most 6 digits:
    /// a million days is past any date the calendar holds.
    static func relativeDays(_ word: String) -> Int? {
        guard let sign = word.first, sign == "-" || sign == "+", let unit = word.last, unit == "d" || unit == "w" else { return nil }
        let digits = word.dropFirst().dropLast()
        guard (1...6).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(digits) else { return nil }
        return (sign == "-" ? -n : n) * (unit == "w" ? 7 : 1)
    }

    /// A bound of a time range: a day (the start of its statistics day, or of the next one when
    /// `endOfDay`, so that an end bound includes the day), or a moment (`moment`'s rules,
    /// refusals included).
    public static func bound(
        _ text: String, endOfDay: Bool, today: StatisticsDay, dayStartsAt: Int
    ) throws(DateTextError) -> Double {
        if let day = day(text, today: today.date) {
            return LocalDay.start(of: endOfDay ? day.adding(days: 1) : day, dayStartsAt: dayStartsAt)
        }
        do {
            return try moment(text, today: today, dayStartsAt: dayStartsAt)
        } catch  where error.code == .invalidDate {
            if let why = impossibleDate(Substring(text)) {
                throw DateTextError(.invalidDate, "\(text.debugDescription) is not a day: \(why).")
            }
            throw DateTextError(.invalidDate, "\(text.debugDescription) is not a day or a time: give \(dayForms); or \(momentForms).")
        }
    }

    static let monthNames = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December",
    ]

    /// Why `text`, written as a date (`YYYY-MM-DD`), is no day: "there is no month 13",
    /// "November has 30 days", "February 2026 has 28 days"; nil for a day or another form.
    public static func impossibleDate(_ text: Substring) -> String? {
        let b = Array(text.utf8)
        guard b.count == 10, b[4] == 45, b[7] == 45 else { return nil }
        let digits = [0, 1, 2, 3, 5, 6, 8, 9]
        guard digits.allSatisfy({ (48...57).contains(b[$0]) }) else { return nil }
        let value = { (range: [Int]) in range.reduce(0) { $0 * 10 + Int(b[$1] - 48) } }
        let (year, month, day) = (value([0, 1, 2, 3]), value([5, 6]), value([8, 9]))
        guard year >= 1 else { return "there is no year 0" }
        guard (1...12).contains(month) else { return "there is no month \(month)" }
        guard day >= 1 else { return "there is no day 0" }
        let days = CalendarDay.daysInMonth(year, month)
        guard day > days else { return nil }
        return month == 2 ? "February \(year) has \(days) days" : "\(monthNames[month - 1]) has \(days) days"
    }

    /// `impossibleDate` for a day of a request: `2026-13-01` is no day, for that reason.
    public static func impossibleDate(_ text: String) -> String? { impossibleDate(Substring(text)) }

    /// A moment: RFC 3339; or a day (any form of `day`) and a local time, `DAY HH:MM[:SS]`
    /// (`YYYY-MM-DDTHH:MM` too); or `HH:MM[:SS]` alone, the moment of `today` (a statistics day)
    /// whose clock reads so — on its date from `day_starts_at` on, on the next date before it
    /// (with days starting at 04:00, `23:00` at 02:00 is yesterday evening, `01:00` an hour ago).
    /// A local time may carry its offset (`2026-10-25 02:30+02:00`, `Z`); without one, a time the
    /// clocks skip (DST gap) or show twice (the hour after a fall back) is refused: nothing is guessed.
    /// `now` (any case) is the moment `now`, when given.
    public static func moment(
        _ text: String, today: StatisticsDay, dayStartsAt: Int, now: Double? = nil
    ) throws(DateTextError) -> Double {
        if let now, text.lowercased() == "now" { return now }
        if let wall = RFC3339.parse(text) { return wall }
        guard let local = LocalMoment(text, day: { day(String($0), today: today.date) }) else {
            let datePart = text.split(whereSeparator: { $0 == " " || $0 == "T" }).first ?? ""
            if let why = impossibleDate(datePart) { throw DateTextError(.invalidDate, "\(text.debugDescription) is not a time: \(why).") }
            throw DateTextError(.invalidDate, "\(text.debugDescription) is not a time: give \(momentForms).")
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
                .nonexistentTime,
                "\(shown) does not exist here: the clocks jumped from \(from) straight to \(to) "
                    + "(\(zoneName(at - 1, before)) to \(zoneName(at, after))). Give a time before \(from) or from \(to) on.")
        case .repeated(let first, let firstOffset, let second, let secondOffset):
            let back = LocalDay.transition(after: first, before: second)
            throw DateTextError(
                .ambiguousTime,
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
    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The raw values are the protocol's codes for these refusals.
    public enum Code: String, Sendable, CaseIterable {
        case invalidDate = "invalid_date"
        case nonexistentTime = "nonexistent_time"
        case ambiguousTime = "ambiguous_time"
    }
}

/// `[DAY ]HH:MM[:SS][Z|±HH:MM]` (or `YYYY-MM-DDTHH:MM…`), taken apart.
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

    /// `day` reads the part before the time (`2026-03-01`, `yesterday`).
    init?(_ text: String, day: (Substring) -> CalendarDay?) {
        let parts = text.split(whereSeparator: { $0 == " " })
        var time: Substring
        switch parts.count {
        case 1:
            // `2026-03-01T09:30`, or a time alone.
            let halves = parts[0].split(separator: "T", maxSplits: 1, omittingEmptySubsequences: false)
            if halves.count == 2 {
                guard let d = CalendarDay(String(halves[0])) else { return nil }
                date = d
            }
            time = halves[halves.count - 1]
        case 2:
            guard let d = day(parts[0]) else { return nil }
            date = d
            time = parts[1]
        default:
            return nil
        }
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
        // The hour may have one digit (`9:00`), as people write it; minutes and seconds have two.
        guard (2...3).contains(fields.count), (1...2).contains(fields[0].count),
            fields.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }), fields.dropFirst().allSatisfy({ $0.count == 2 }),
            let h = Int(fields[0]), let m = Int(fields[1]), let s = fields.count == 3 ? Int(fields[2]) : 0,
            h < 24, m < 60, s < 60
        else { return nil }
        (hour, minute, second, clock) = (h, m, s, time)
    }
}
