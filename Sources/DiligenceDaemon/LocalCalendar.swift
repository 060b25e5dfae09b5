#if canImport(Glibc)
import Glibc
#endif
import DiligenceCore

/// Statistics days in local time (TZ) with `day_starts_at`: which date a moment belongs to, when a
/// date's day begins, and the grid of days a report covers. DST-correct through mktime.
extension LocalDay {
    /// The date of the statistics day holding `wall` (with days starting at 04:00, 01:30 on the
    /// 11th belongs to the 10th).
    static func date(containing wall: Double, dayStartsAt minute: Int) -> CalendarDay {
        let start = bounds(containing: wall, dayStartsAt: minute).start
        var t = time_t(start)
        var local = tm()
        localtime_r(&t, &local)
        return CalendarDay(year: Int(local.tm_year) + 1900, month: Int(local.tm_mon) + 1, day: Int(local.tm_mday))!
    }

    /// The wall-clock instant at which `day`'s statistics day begins.
    static func start(of day: CalendarDay, dayStartsAt minute: Int) -> Double {
        var t = tm()
        t.tm_year = Int32(day.year - 1900)
        t.tm_mon = Int32(day.month - 1)
        t.tm_mday = Int32(day.day)
        t.tm_hour = Int32(minute / 60)
        t.tm_min = Int32(minute % 60)
        t.tm_isdst = -1
        return Double(mktime(&t))
    }

    /// The days `first` through `last` (inclusive) with their bounds and DST shifts.
    static func grid(from first: CalendarDay, through last: CalendarDay, dayStartsAt minute: Int) -> DayGrid {
        let count = max(0, last.daysSince1970 - first.daysSince1970 + 1)
        var dates: [CalendarDay] = []
        var boundaries: [Double] = []
        var shifts: [DayGrid.ClockShift?] = []
        dates.reserveCapacity(count)
        boundaries.reserveCapacity(count + 1)
        shifts.reserveCapacity(count)
        for i in 0...count {
            let day = first.adding(days: i)
            boundaries.append(start(of: day, dayStartsAt: minute))
            if i < count { dates.append(day) }
        }
        for i in 0..<count {
            let (from, to) = (boundaries[i], boundaries[i + 1])
            let change = utcOffset(to) - utcOffset(from)
            shifts.append(change == 0 ? nil : DayGrid.ClockShift(at: transition(after: from, before: to), seconds: change))
        }
        return DayGrid(dates: dates, boundaries: boundaries, dayStartMinute: minute, clockShifts: shifts)
    }

    /// Seconds east of UTC of local time at `wall`.
    private static func utcOffset(_ wall: Double) -> Int {
        var t = time_t(wall)
        var local = tm()
        localtime_r(&t, &local)
        return local.tm_gmtoff
    }

    /// The first second in (`from`, `to`] whose UTC offset differs from `from`'s (binary search).
    private static func transition(after from: Double, before to: Double) -> Double {
        let offset = utcOffset(from)
        var low = from
        var high = to
        while high - low > 1 {
            let mid = ((low + high) / 2).rounded(.down)
            if utcOffset(mid) == offset { low = mid } else { high = mid }
        }
        return high
    }

    /// The wall-clock instant of a local civil time (mktime normalises a time inside a DST gap).
    static func wall(of day: CalendarDay, hour: Int, minute: Int, second: Int) -> Double {
        var t = tm()
        t.tm_year = Int32(day.year - 1900)
        t.tm_mon = Int32(day.month - 1)
        t.tm_mday = Int32(day.day)
        t.tm_hour = Int32(hour)
        t.tm_min = Int32(minute)
        t.tm_sec = Int32(second)
        t.tm_isdst = -1
        return Double(mktime(&t))
    }
}
