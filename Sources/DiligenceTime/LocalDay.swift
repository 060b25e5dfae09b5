#if canImport(Glibc)
    import Glibc
#endif

/// Statistics days in local time (TZ) with `day_starts_at`: which date a moment belongs to, when a
/// date's day begins, and the grid of days a report covers. DST-correct through mktime.
public enum LocalDay {
    /// Wall-clock bounds [start, end) of the statistics day that contains `wall`.
    public static func bounds(containing wall: Double, dayStartsAt minute: Int) -> (start: Double, end: Double) {
        var t = timeT(wall)
        var today = Glibc.tm()
        localtime_r(&t, &today)
        var start = at(today, minute: minute, dayOffset: 0)
        if start > wall { start = at(today, minute: minute, dayOffset: -1) }
        // The next day's start, through mktime so a DST change makes the day 23 or 25 hours long.
        var startTm = Glibc.tm()
        var s = timeT(start)
        localtime_r(&s, &startTm)
        return (start, at(startTm, minute: minute, dayOffset: 1))
    }

    /// Wall-clock seconds of `minute` after midnight on the day `dayOffset` days after `day`
    /// (mktime with tm_isdst = -1: the local time as the zone has it that day).
    private static func at(_ day: tm, minute: Int, dayOffset: Int32) -> Double {
        var t = day
        t.tm_mday += dayOffset
        t.tm_hour = Int32(clamping: minute / 60)
        t.tm_min = Int32(clamping: minute % 60)
        t.tm_sec = 0
        t.tm_isdst = -1
        return Double(mktime(&t))
    }

    /// The statistics day holding `wall` (with days starting at 04:00, 01:30 on the 11th belongs
    /// to the 10th): "today" is `day(containing: now)`.
    public static func day(containing wall: Double, dayStartsAt minute: Int) -> StatisticsDay {
        let (start, end) = bounds(containing: wall, dayStartsAt: minute)
        var t = timeT(start)
        var local = tm()
        localtime_r(&t, &local)
        let year = Int(local.tm_year) + 1900
        let date = CalendarDay(year: year, month: Int(local.tm_mon) + 1, day: Int(local.tm_mday)) ?? (year < 1 ? .earliest : .latest)
        return StatisticsDay(date: date, start: start, end: end)
    }

    /// The date of the statistics day holding `wall`.
    public static func date(containing wall: Double, dayStartsAt minute: Int) -> CalendarDay {
        day(containing: wall, dayStartsAt: minute).date
    }

    /// Makes local time follow the system's zone again after it changed (/etc/localtime replaced
    /// or rewritten): glibc's localtime_r keeps the zone it read first, and only tzset() looks
    /// again (when TZ is unset; a TZ in the environment names the zone for good).
    public static func reloadZone() {
        tzset()
    }

    /// The wall-clock instant at which `day`'s statistics day begins.
    public static func start(of day: CalendarDay, dayStartsAt minute: Int) -> Double {
        wall(of: day, hour: minute / 60, minute: minute % 60, second: 0)
    }

    /// The days `first` through `last` (inclusive) with their bounds and DST shifts.
    ///
    /// Only the first day's start comes from mktime (which re-reads the zone file on every
    /// call): each next start is tried as 24 hours later, kept when the UTC offset is the same at
    /// both ends and through the day after (no clock change near it, so the time is unique and
    /// it is what mktime gives) and it falls at `day_starts_at`; otherwise mktime decides.
    public static func grid(from first: CalendarDay, through last: CalendarDay, dayStartsAt minute: Int) -> DayGrid {
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
            shifts.append(
                change == 0 ? nil : DayGrid.ClockShift(at: transition(after: boundaries[i], before: boundaries[i + 1]), seconds: change))
        }
        return DayGrid(dates: dates, boundaries: boundaries, dayStartMinute: minute, clockShifts: shifts)
    }

    /// Seconds east of UTC of local time at `wall`, and the local minute of the day there
    /// (nil when `wall` is not on a whole minute).
    private static func localClock(_ wall: Double) -> (utcOffset: Int, minuteOfDay: Int?) {
        var t = timeT(wall)
        var local = tm()
        localtime_r(&t, &local)
        let minuteOfDay = local.tm_sec == 0 && wall == wall.rounded(.down) ? Int(local.tm_hour) * 60 + Int(local.tm_min) : nil
        return (local.tm_gmtoff, minuteOfDay)
    }

    /// The instant the UTC offset changes: the first second in (`from`, `to`] whose offset
    /// differs from `from`'s (binary search).
    public static func transition(after from: Double, before to: Double) -> Double {
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
    public static func wall(of day: CalendarDay, hour: Int, minute: Int, second: Int) -> Double {
        var t = tm()
        t.tm_year = Int32(day.year - 1900)
        t.tm_mon = Int32(day.month - 1)
        t.tm_mday = Int32(day.day)
        t.tm_hour = Int32(clamping: hour)
        t.tm_min = Int32(clamping: minute)
        t.tm_sec = Int32(clamping: second)
        t.tm_isdst = -1
        return Double(mktime(&t))
    }

    /// What a local date and time names in the current zone: one instant, none (the clocks
    /// jumped over it), or two (the clocks went back over it). Exact to the second, for any
    /// zone's changes (DST, and a zone's own offset changes), found from the offsets the zone
    /// has within two days of it.
    public static func meaning(of day: CalendarDay, hour: Int, minute: Int, second: Int) -> LocalTimeMeaning {
        let naive = Double(day.daysSince1970 * 86400 + hour * 3600 + minute * 60 + second)
        var offsets: [Int] = []
        for probe in stride(from: -8, through: 8, by: 1) {
            let offset = localClock(naive + Double(probe * 21600)).utcOffset
            if !offsets.contains(offset) { offsets.append(offset) }
        }
        let instants = offsets.map { naive - Double($0) }.filter { localNaive($0) == naive }.sorted()
        switch instants.count {
        case 0:
            // The transition lies between the instants the earliest and latest offsets would give.
            let low = naive - Double(offsets.max()!)
            let high = naive - Double(offsets.min()!)
            let at = transition(after: low, before: high)
            return .skipped(at: at, offsetBefore: localClock(at - 1).utcOffset, offsetAfter: localClock(at).utcOffset)
        case 1:
            return .unique(instants[0])
        default:
            let first = instants[0]
            let second = instants[instants.count - 1]
            return .repeated(
                first: first, firstOffset: localClock(first).utcOffset,
                second: second, secondOffset: localClock(second).utcOffset)
        }
    }

    /// Local time at `wall` as seconds since 1970-01-01 00:00 of the local calendar (what
    /// `naive` is in `meaning`).
    public static func localNaive(_ wall: Double) -> Double {
        wall.rounded(.down) + Double(localClock(wall).utcOffset)
    }

    /// The zone's abbreviation at `wall` (`CET`, `CEST`; `+0530` where the zone has none).
    public static func zoneAbbreviation(at wall: Double) -> String {
        var t = timeT(wall)
        var local = tm()
        localtime_r(&t, &local)
        return local.tm_zone.map { String(cString: $0) } ?? ""
    }

    /// The next local `minute`-after-midnight strictly after `wall`: today's if still ahead,
    /// else tomorrow's. On a spring-forward day a time in the skipped hour comes an hour later
    /// (02:30 → 03:30); on a fall-back day a repeated time comes once.
    public static func nextOccurrence(minute: Int, after wall: Double) -> Double {
        var t = timeT(wall)
        var today = tm()
        localtime_r(&t, &today)
        let candidate = at(today, minute: minute, dayOffset: 0)
        if candidate > wall { return candidate }
        var next = at(today, minute: minute, dayOffset: 1)
        // A fall-back day repeats an hour: mktime may answer the second 02:30 of the same day.
        if bounds(containing: next, dayStartsAt: 0).start == bounds(containing: wall, dayStartsAt: 0).start {
            next = at(today, minute: minute, dayOffset: 2)
        }
        return next
    }

    /// The local time of `wall` as minutes after midnight.
    public static func minuteOfDay(_ wall: Double) -> Int {
        var t = timeT(wall)
        var local = tm()
        localtime_r(&t, &local)
        return Int(local.tm_hour) * 60 + Int(local.tm_min)
    }
}

/// What a local date and time names (`LocalDay.meaning`).
public enum LocalTimeMeaning: Equatable, Sendable {
    /// One instant.
    case unique(Double)
    /// None: at the instant `at` the clocks jumped forward, from `offsetBefore` to `offsetAfter`
    /// seconds east of UTC, over it.
    case skipped(at: Double, offsetBefore: Int, offsetAfter: Int)
    /// Two instants, an offset apart: the first at `firstOffset`, the second at `secondOffset`.
    case repeated(first: Double, firstOffset: Int, second: Double, secondOffset: Int)
}
