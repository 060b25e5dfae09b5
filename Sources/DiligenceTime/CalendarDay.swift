/// A date of the proleptic Gregorian calendar, free of time zones: the name of a statistics day
/// (`2026-06-10`). Which wall-clock instants belong to it is the daemon's business (local time and
/// `day_starts_at`); arithmetic on names is here (Howard Hinnant's days-from-civil algorithms).
public struct CalendarDay: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int

    /// An existing date; nil for 2026-02-30 and the like.
    public init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), day >= 1, day <= Self.daysInMonth(year, month) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// The date `days` days after 1970-01-01.
    public init(daysSince1970 days: Int) {
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

    public func adding(days: Int) -> CalendarDay { CalendarDay(daysSince1970: daysSince1970 + days) }

    /// The Monday of this date's ISO week.
    public var monday: CalendarDay { adding(days: 1 - weekday) }

    /// The ISO 8601 week of this date as `2026-W05`: weeks begin on Monday, and a week belongs
    /// to the year of its Thursday (so 2027-01-01 is in 2026-W53).
    public var isoWeekName: String {
        let thursday = monday.adding(days: 3)
        let week = (thursday.daysSince1970 - CalendarDay(year: thursday.year, month: 1, day: 1)!.daysSince1970) / 7 + 1
        return "\(thursday.year)-W" + (week < 10 ? "0" : "") + String(week)
    }

    /// The first day of this date's month, `months` months later (negative: earlier).
    public func firstOfMonth(adding months: Int = 0) -> CalendarDay {
        let index = year * 12 + (month - 1) + months
        let y = index >= 0 ? index / 12 : (index - 11) / 12
        return CalendarDay(year: y, month: index - y * 12 + 1, day: 1)!
    }

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
