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
    ///
    /// Only the first day's start comes from mktime (which re-reads the zone file on every
    /// call): each next start is tried as 24 hours later, kept when the UTC offset is the same at
    /// both ends and through the day after (no clock change near it, so the time is unique and
    /// it is what mktime gives) and it falls at `day_starts_at`; otherwise mktime decides.
    static func grid(from first: CalendarDay, through last: CalendarDay, dayStartsAt minute: Int) -> DayGrid {
        let count = max(0, last.daysSince1970 - first.daysSince1970 + 1)
        var dates: [CalendarDay] = []
        var boundaries: [Double] = []
        var offsets: [Int] = []
        var shifts: [DayGrid.ClockShift?] = []
        dates.reserveCapacity(count)
        boundaries.reserveCapacity(count + 1)
        offsets.reserveCapacity(count + 1)
        shifts.reserveCapacity(count)
        var boundary = start(of: first, dayStartsAt: minute)
        var offset = localClock(boundary).utcOffset
        boundaries.append(boundary)
        offsets.append(offset)
        for i in 0..<count {
            let day = first.adding(days: i + 1)
            let candidate = boundary + 86400
            let local = localClock(candidate)
            if local.utcOffset == offset, local.minuteOfDay == minute, localClock(candidate + 86400).utcOffset == offset {
                boundary = candidate
            } else {
                boundary = start(of: day, dayStartsAt: minute)
                offset = localClock(boundary).utcOffset
            }
            boundaries.append(boundary)
            offsets.append(offset)
        }
        for i in 0..<count {
            dates.append(first.adding(days: i))
            let change = offsets[i + 1] - offsets[i]
            shifts.append(change == 0 ? nil : DayGrid.ClockShift(at: transition(after: boundaries[i], before: boundaries[i + 1]), seconds: change))
        }
        return DayGrid(dates: dates, boundaries: boundaries, dayStartMinute: minute, clockShifts: shifts)
    }

    /// Seconds east of UTC of local time at `wall`, and the local minute of the day there
    /// (nil when `wall` is not on a whole minute).
    private static func localClock(_ wall: Double) -> (utcOffset: Int, minuteOfDay: Int?) {
        var t = time_t(wall)
        var local = tm()
        localtime_r(&t, &local)
        let minuteOfDay = local.tm_sec == 0 && wall == wall.rounded(.down) ? Int(local.tm_hour) * 60 + Int(local.tm_min) : nil
        return (local.tm_gmtoff, minuteOfDay)
    }

    /// The first second in (`from`, `to`] whose UTC offset differs from `from`'s (binary search).
    private static func transition(after from: Double, before to: Double) -> Double {
        let offset = localClock(from).utcOffset
        var low = from
        var high = to
        while high - low > 1 {
            let mid = ((low + high) / 2).rounded(.down)
            if localClock(mid).utcOffset == offset { low = mid } else { high = mid }
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
