import DiligenceTestSupport
import DiligenceTime
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Property tests of the calendar functions over the whole date window and far beyond it
/// (finding 1: an offset of 2^40 trapped in the calendar code and killed the daemon). Nothing
/// reachable from any input may trap: out-of-range values saturate at the calendar's ends
/// (0001-01-01 … 9999-12-31), and the date window refuses them before they are used.
@Suite("Checked calendar arithmetic")
struct CheckedArithmeticTests {
    /// Numbers at which conversions and additions trap.
    static let extremeInts: [Int] = [
        0, 1, -1, 7, -7, 12, -12, 100_000, -100_000, 1 << 31, -(1 << 31), (1 << 31) - 1, 1 << 40, -(1 << 40),
        1 << 53, -(1 << 53), 1 << 62, -(1 << 62), Int.max, Int.min, Int.max - 1, Int.min + 1,
    ]

    static let extremeWalls: [Double] = [
        0, -1, 1e9, 1.8e9, -1e9, 1e12, -1e12, 2.5e11, -6.3e10, 1e15, -1e15, 1e17, -1e17, 9.2e18, -9.2e18,
        9.3e18, -9.3e18, 1e300, -1e300, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
        .infinity, -.infinity, .nan, .leastNonzeroMagnitude, -0.0,
    ]

    static let zones = ["UTC", "Europe/Berlin", "America/Sao_Paulo", "Australia/Lord_Howe", "Pacific/Kiritimati", "America/St_Johns"]

    static func inCalendar(_ day: CalendarDay) -> Bool { CalendarDay.earliest <= day && day <= CalendarDay.latest }

    @Test("every day from 0001-01-01 to 9999-12-31 round-trips through its day number, its text and its neighbours")
    func wholeCalendar() throws {
        var day = CalendarDay.earliest
        var number = day.daysSince1970
        var weekday = day.weekday
        // Every day of the window and the years around it; every 37th day of the rest.
        let denseFrom = CalendarDay(year: 1980, month: 1, day: 1)!.daysSince1970
        let denseTo = CalendarDay(year: 2110, month: 1, day: 1)!.daysSince1970
        while day < CalendarDay.latest {
            #expect(CalendarDay(daysSince1970: number) == day)
            #expect(CalendarDay(day.description) == day, "\(day)")
            let step = (denseFrom...denseTo).contains(number) ? 1 : 37
            let next = day.adding(days: step)
            #expect(next.daysSince1970 == min(number + step, CalendarDay.latest.daysSince1970))
            #expect(next.adding(days: -step) == day || next == CalendarDay.latest)
            if next != CalendarDay.latest {
                #expect(next.weekday == (weekday - 1 + step) % 7 + 1, "\(next)")
            }
            day = next
            number = next.daysSince1970
            weekday = next.weekday
        }
    }

    @Test("adding days, months and offsets far past the calendar saturates, never traps", arguments: extremeInts)
    func saturatingOffsets(_ n: Int) {
        for day in [CalendarDay.earliest, CalendarDay(year: 2026, month: 6, day: 10)!, CalendarDay.latest] {
            #expect(Self.inCalendar(day.adding(days: n)))
            #expect(Self.inCalendar(day.firstOfMonth(adding: n)))
            #expect(day.firstOfMonth(adding: n).day == 1)
            if n > 0 { #expect(day.adding(days: n) >= day) } else { #expect(day.adding(days: n) <= day) }
        }
        #expect(Self.inCalendar(CalendarDay(daysSince1970: n)))
        #expect((CalendarDay(year: n, month: 1, day: 1) != nil) == (1...9999).contains(n))
    }

    @Test("years outside 0001…9999 are not calendar days")
    func calendarDomain() {
        #expect(CalendarDay(year: 0, month: 12, day: 31) == nil)
        #expect(CalendarDay(year: 10_000, month: 1, day: 1) == nil)
        #expect(CalendarDay(year: Int.max, month: 1, day: 1) == nil)
        #expect(CalendarDay("0000-01-01") == nil)
        #expect(CalendarDay("0001-01-01") == CalendarDay.earliest)
        #expect(CalendarDay("9999-12-31") == CalendarDay.latest)
        #expect(RFC3339.parse("0000-01-01T00:00:00Z") == nil)
    }

    @Test("local-time functions take any wall-clock value, NaN and infinities included", arguments: zones)
    func localTimeOfAnyWall(_ zone: String) {
        withTimeZone(zone) {
            for wall in Self.extremeWalls {
                let date = LocalDay.date(containing: wall, dayStartsAt: 240)
                #expect(Self.inCalendar(date))
                let bounds = LocalDay.bounds(containing: wall, dayStartsAt: 0)
                #expect(bounds.start < bounds.end, "\(wall)")
                #expect(RFC3339.format(wall).count >= 25, "\(wall)")
                #expect(RFC3339.compactUTC(wall).count == 16, "\(wall)")
                _ = LocalDay.minuteOfDay(wall)
                _ = LocalDay.nextOccurrence(minute: 90, after: wall)
            }
            for day in [CalendarDay.earliest, CalendarDay.latest] {
                #expect(LocalDay.start(of: day, dayStartsAt: 0).isFinite)
                #expect(LocalDay.wall(of: day, hour: 23, minute: 59, second: 59).isFinite)
            }
        }
    }

    @Test(
        "every day of the date window and the year after: its start lies in it and names it",
        arguments: ["Europe/Berlin", "America/Sao_Paulo", "Australia/Lord_Howe"])
    func everyDayOfTheWindow(_ zone: String) {
        withTimeZone(zone) {
            let last = CalendarDay(year: 2040, month: 1, day: 1)!
            for minute in [0, 240] {
                var day = DateWindow.firstDay
                let grid = LocalDay.grid(from: day, through: last, dayStartsAt: minute)
                var index = 0
                while day <= last {
                    let start = LocalDay.start(of: day, dayStartsAt: minute)
                    #expect(grid.boundaries[index] == start, "\(zone) \(day) \(minute)")
                    #expect(LocalDay.date(containing: start, dayStartsAt: minute) == day, "\(zone) \(day) \(minute)")
                    #expect(LocalDay.date(containing: start - 1, dayStartsAt: minute) == day.adding(days: -1), "\(zone) \(day) \(minute)")
                    day = day.adding(days: 1)
                    index += 1
                }
            }
        }
    }

    @Test("Int(saturating:) takes every double")
    func saturatingIntegers() {
        #expect(Int(saturating: 1.9) == 1)
        #expect(Int(saturating: -1.9) == -1)
        #expect(Int(saturating: .nan) == 0)
        #expect(Int(saturating: .infinity) == .max)
        #expect(Int(saturating: -.infinity) == .min)
        #expect(Int(saturating: 9.3e18) == .max)
        #expect(Int(saturating: -9.3e18) == .min)
        #expect(Int(saturating: 9_007_199_254_740_992) == 9_007_199_254_740_992)
        #expect(Int(saturating: -0.0) == 0)
    }

    // MARK: The date window

    static let today = CalendarDay(year: 2026, month: 6, day: 10)!

    @Test("a period is inside the window or refused, for any offset", arguments: extremeInts)
    func periodsInTheWindow(_ offset: Int) {
        for kind in ReportPeriod.allCases {
            guard let period = DateWindow.period(kind, offset: offset, today: Self.today) else { continue }
            #expect(period.first >= DateWindow.firstDay, "\(kind) \(offset)")
            #expect(period.first <= DateWindow.lastDay(today: Self.today), "\(kind) \(offset)")
            #expect(period.first <= period.last)
            #expect(period.last.daysSince1970 - period.first.daysSince1970 < 366)
        }
    }

    @Test func periods() throws {
        let day = try #require(DateWindow.period(.day, offset: -1, today: Self.today))
        #expect(day.first.description == "2026-06-09" && day.last == day.first)
        let week = try #require(DateWindow.period(.week, offset: 1, today: Self.today))
        #expect(week.first.description == "2026-06-15" && week.last.description == "2026-06-21")
        let month = try #require(DateWindow.period(.month, offset: -6, today: Self.today))
        #expect(month.first.description == "2025-12-01" && month.last.description == "2025-12-31")
        let year = try #require(DateWindow.period(.year, offset: 1, today: Self.today))
        #expect(year.first.description == "2027-01-01" && year.last.description == "2027-12-31")
        // The first period of the window, and the one before it.
        #expect(DateWindow.period(.year, offset: 1990 - 2026, today: Self.today)?.first == DateWindow.firstDay)
        #expect(DateWindow.period(.year, offset: 1989 - 2026, today: Self.today) == nil)
        #expect(DateWindow.period(.week, offset: 2, today: Self.today) != nil)
        #expect(DateWindow.period(.year, offset: 2, today: Self.today) == nil)
    }

    @Test func daysAndSessions() {
        #expect(DateWindow.contains(DateWindow.firstDay, today: Self.today))
        #expect(!DateWindow.contains(DateWindow.firstDay.adding(days: -1), today: Self.today))
        #expect(DateWindow.contains(Self.today.adding(days: DateWindow.daysAhead), today: Self.today))
        #expect(!DateWindow.contains(Self.today.adding(days: DateWindow.daysAhead + 1), today: Self.today))
        withTimeZone("Europe/Berlin") {
            let now = localTime(2026, 6, 10, 12)
            let window = DateWindow.sessions(now: now)
            #expect(window.lowerBound == localTime(1990, 1, 1))
            #expect(window.upperBound == now + 86400)
        }
    }
}
