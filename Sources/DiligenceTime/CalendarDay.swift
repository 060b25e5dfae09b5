/// A date of the proleptic Gregorian calendar, free of time zones: the name of a statistics day
/// (`2026-06-10`). Which wall-clock instants belong to it is the daemon's business (local time and
/// `day_starts_at`); arithmetic on names is here (Howard Hinnant's days-from-civil algorithms).
///
/// The calendar runs from 0001-01-01 to 9999-12-31 (what `YYYY-MM-DD` can write). Arithmetic
/// never traps: a result past either end saturates there. The date window (DateWindow) keeps
/// every date a request or a record may name far inside, so saturation is never seen in use.
public struct CalendarDay: Hashable, Comparable, Sendable, CustomStringConvertible {
    public private(set) var year: Int
    public private(set) var month: Int
    public private(set) var day: Int

    /// An existing date of years 1 to 9999; nil for 2026-02-30, year 0 and the like.
    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month), day >= 1, day <= Self.daysInMonth(year, month) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// The calendar's first and last day.
    public static let earliest = CalendarDay(daysSince1970: earliestNumber)
    public static let latest = CalendarDay(daysSince1970: latestNumber)
    /// `daysSince1970` of 0001-01-01 and 9999-12-31.
    static let earliestNumber = -719_162
    static let latestNumber = 2_932_896

    /// The date `days` days after 1970-01-01 (saturating at the calendar's ends).
    public init(daysSince1970 number: Int) {
        let days = min(max(number, Self.earliestNumber), Self.latestNumber)
        let z = days + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        day = doy - (153 * mp + 2) / 5 + 1
        month = mp < 10 ? mp + 3 : mp - 9
        year = yoe + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// Parses `YYYY-MM-DD`; nil when malformed or impossible.
    public init?(_ text: String) {
        let b = Array(text.utf8)
        guard b.count == 10, b[4] == 45, b[7] == 45 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for i in range {
                guard (48...57).contains(b[i]) else { return nil }
                value = value * 10 + Int(b[i] - 48)
            }
            return value
        }
        guard let y = number(0..<4), let m = number(5..<7), let d = number(8..<10) else { return nil }
        self.init(year: y, month: m, day: d)
    }

    public static func isLeap(_ y: Int) -> Bool { y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) }

    public static func daysInMonth(_ y: Int, _ m: Int) -> Int {
        switch m {
        case 2: isLeap(y) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01.
    public var daysSince1970: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    /// ISO weekday: 1 Monday ... 7 Sunday.
    public var weekday: Int {
        let d = daysSince1970
        // 1970-01-01 was a Thursday (4).
        return ((d % 7 + 7) % 7 + 3) % 7 + 1
    }

    /// The date `days` later (earlier when negative), saturating at the calendar's ends.
    public func adding(days: Int) -> CalendarDay {
        let (sum, overflow) = daysSince1970.addingReportingOverflow(days)
        if overflow { return days > 0 ? .latest : .earliest }
        return CalendarDay(daysSince1970: sum)
    }

    /// The Monday of this date's ISO week.
    public var monday: CalendarDay { adding(days: 1 - weekday) }

    /// The ISO 8601 week of this date as `2026-W05`: weeks begin on Monday, and a week belongs
    /// to the year of its Thursday (so 2027-01-01 is in 2026-W53).
    public var isoWeekName: String {
        let thursday = monday.adding(days: 3)
        let week = (thursday.daysSince1970 - CalendarDay(year: thursday.year, month: 1, day: 1)!.daysSince1970) / 7 + 1
        return "\(thursday.year)-W" + (week < 10 ? "0" : "") + String(week)
    }

    /// The first day of this date's month, `months` months later (negative: earlier),
    /// saturating at the calendar's first and last month.
    public func firstOfMonth(adding months: Int = 0) -> CalendarDay {
        let (index, overflow) = (year * 12 + (month - 1)).addingReportingOverflow(months)
        if overflow { return months > 0 ? Self.latestMonth : .earliest }
        if index < 12 { return .earliest }
        if index / 12 > 9999 { return Self.latestMonth }
        return CalendarDay(year: index / 12, month: index % 12 + 1, day: 1) ?? .earliest
    }

    /// 9999-12-01.
    private static var latestMonth: CalendarDay { latest.adding(days: 1 - latest.day) }

    /// `YYYY-MM-DD`.
    public var description: String {
        func pad(_ n: Int, _ width: Int) -> String {
            let s = String(n)
            return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    public static func < (a: CalendarDay, b: CalendarDay) -> Bool {
        (a.year, a.month, a.day) < (b.year, b.month, b.day)
    }

    /// English weekday names, Monday first (index = weekday − 1).
    public static let weekdayNames = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
}
