/// The days of a report, in order, with the wall-clock instants that separate them: day `i`
/// runs from `boundaries[i]` to `boundaries[i + 1]`. Days are 23 or 25 hours long across a DST
/// change and begin at `dayStartMinute` local time (`day_starts_at`).
public struct DayGrid: Sendable {
    /// A change of the local clock during a day (DST): from `at` on, local time reads
    /// `seconds` more (+3600 in spring, −3600 in autumn) than the time elapsed since the day began.
    public struct ClockShift: Equatable, Sendable {
        public var at: Double
        public var seconds: Int
        public init(at: Double, seconds: Int) {
            self.at = at
            self.seconds = seconds
        }
    }

    public let dates: [CalendarDay]
    public let boundaries: [Double]
    /// Minutes after midnight at which each day begins.
    public let dayStartMinute: Int
    /// One entry per day: nil where the local clock runs evenly.
    public let clockShifts: [ClockShift?]

    /// `boundaries` has one entry more than `dates`; `clockShifts` one per day (or none at all).
    public init(dates: [CalendarDay], boundaries: [Double], dayStartMinute: Int = 0, clockShifts: [ClockShift?] = []) {
        precondition(boundaries.count == dates.count + 1, "a grid of n days has n + 1 boundaries")
        self.dates = dates
        self.boundaries = boundaries
        self.dayStartMinute = dayStartMinute
        self.clockShifts = clockShifts.isEmpty ? Array(repeating: nil, count: dates.count) : clockShifts
    }

    public var count: Int { dates.count }
    public var start: Double { boundaries[0] }
    public var end: Double { boundaries[boundaries.count - 1] }

    /// The index of the day holding `wall`, nil outside the grid.
    public func index(of wall: Double) -> Int? {
        guard count > 0, wall >= start, wall < end else { return nil }
        return lastDay { $0 <= wall }
    }

    /// The index of the day a session ending at `end` counts on, nil outside the grid: the day
    /// it ends in, where an end exactly at a boundary belongs to the day that ends there (the
    /// earlier one). The one rule for completed counts, goals, streaks and `today_completed`;
    /// `StatisticsDay.holdsSessionEnd` says the same for a single day.
    public func index(ofEnd end: Double) -> Int? {
        guard count > 0, end > start, end <= self.end else { return nil }
        return lastDay { $0 < end }
    }

    /// The last day whose first boundary `begun` accepts (a binary search: boundaries ascend,
    /// and the callers have checked that the first one is accepted).
    @inline(__always)
    private func lastDay(_ begun: (Double) -> Bool) -> Int {
        var low = 0
        var high = count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if begun(boundaries[mid]) { low = mid } else { high = mid - 1 }
        }
        return low
    }

    /// Seconds since local midnight of `wall`, which lies in day `day` (0 ..< 86400).
    public func secondOfDay(_ wall: Double, day: Int) -> Double {
        var local = Double(dayStartMinute * 60) + (wall - boundaries[day])
        if let shift = clockShifts[day], wall >= shift.at { local += Double(shift.seconds) }
        local = local.truncatingRemainder(dividingBy: 86400)
        return local < 0 ? local + 86400 : local
    }
}

/// One statistics day: its date and the wall-clock instants [`start`, `end`) it spans (local
/// time, `day_starts_at`; 23 or 25 hours across a DST change).
public struct StatisticsDay: Equatable, Sendable {
    public var date: CalendarDay
    public var start: Double
    public var end: Double

    public init(date: CalendarDay, start: Double, end: Double) {
        self.date = date
        self.start = start
        self.end = end
    }

    public func contains(_ wall: Double) -> Bool { start <= wall && wall < end }

    /// Whether a session ending at `end` counts on this day (the rule of `DayGrid.index(ofEnd:)`:
    /// an end exactly at `start` belongs to the day before, one exactly at `end` to this one).
    public func holdsSessionEnd(_ end: Double) -> Bool { start < end && end <= self.end }
}
