// Statistics over plain values: recorded sessions in, per-day, per-task, per-weekday and
// per-hour figures out. The daemon reads the sessions (SQLite selects the time range) and
// supplies the local days (a `DayGrid`, DiligenceTime); nothing here reads a clock or a time zone.

import DiligenceTime

/// Completed work sessions and focused time.
public struct Tally: Equatable, Sendable {
    public var completed: Int
    public var focusedSeconds: Double

    public init(completed: Int = 0, focusedSeconds: Double = 0) {
        self.completed = completed
        self.focusedSeconds = focusedSeconds
    }

    /// Focused time in whole seconds, as reports show it.
    public var seconds: Int { Int(saturating: focusedSeconds.rounded()) }
}

/// Time that sessions of two devices share (a timer left running on each, docs/statistics.md,
/// "Overlapping sessions") is counted once: the session that began first keeps it, a later one
/// counts only its time past the end of every earlier one, and of its focus and its time away
/// the same share. The one place of this rule: reports (`StatsAccumulator`) and the store's
/// totals and time away go through it. Sessions must come in start order;
/// as every earlier session began before this one, what they cover from its start on is one
/// span, from its start to the latest end seen, so one number is all that is kept.
public struct SharedTime: Sendable {
    /// The latest end of the sessions seen so far.
    private var coveredUntil = -Double.infinity

    public init() {}

    /// As after sessions of which the latest ended at `coveredUntil` (none: -infinity).
    public init(coveredUntil: Double) { self.coveredUntil = coveredUntil }

    /// The part of the session [`start`, `end`) that no earlier session covered — it begins at
    /// `start` — and its share of the session's wall-clock time (0 to 1): the share of the
    /// session's focus and of its time away it keeps, as both are spread evenly over a session.
    /// A session of no length keeps all.
    public mutating func uncovered(start: Double, end: Double) -> (start: Double, share: Double) {
        guard end > start else { return (start, 1) }
        let from = min(max(start, coveredUntil), end)
        coveredUntil = max(coveredUntil, end)
        guard from > start else { return (start, 1) }
        return (from, (end - from) / (end - start))
    }
}

/// Collects the figures of one report, one session at a time, without allocating per session.
///
/// Rules (docs/statistics.md):
/// - Focused time of every recorded work session (completed, skipped or abandoned) counts, split
///   between the days (and hours) the session touches in proportion to its wall-clock time there.
/// - A completed session counts once, for the day it ended in, an end exactly at a boundary
///   belonging to the day that ends there (`DayGrid.index(ofEnd:)`, as `today_completed` does).
/// - The focus score of a completed session is 100 − 5 × pauses, at least 0.
/// - Time two sessions share (two devices' timers, `SharedTime`) counts once, for the one that
///   began first; sessions come in start order.
public struct StatsAccumulator: Sendable {
    public let grid: DayGrid
    public let taskIDs: [Int64]
    public private(set) var days: [Tally]
    /// Per day and task: `dayTasks[day * taskIDs.count + task]`.
    public private(set) var dayTasks: [Tally]
    /// Per task, in `taskIDs` order.
    public private(set) var tasks: [Tally]
    /// Monday first.
    public private(set) var weekdays: [Tally]
    /// Focused seconds per local hour of the day, 0 to 23.
    public private(set) var hours: [Double]
    /// Sessions of any outcome that touch the grid.
    public private(set) var recorded = 0
    private var scoreSum = 0
    private var scoreCount = 0
    private let taskIndex: [Int64: Int]
    /// Per day of the grid, its weekday as an index into `weekdays` (computed once, not per session).
    private let weekdayOfDay: [Int]
    /// The day `day(of:)` found last: sessions come in start order, so the next one mostly lies
    /// in the same day or the next, and needs no binary search.
    private var lastDay = 0
    private var shared = SharedTime()

    public init(grid: DayGrid, taskIDs: [Int64]) {
        self.grid = grid
        self.taskIDs = taskIDs
        var index: [Int64: Int] = [:]
        for (i, id) in taskIDs.enumerated() { index[id] = i }
        taskIndex = index
        weekdayOfDay = grid.dates.map { $0.weekday - 1 }
        days = Array(repeating: Tally(), count: grid.count)
        dayTasks = Array(repeating: Tally(), count: grid.count * taskIDs.count)
        tasks = Array(repeating: Tally(), count: taskIDs.count)
        weekdays = Array(repeating: Tally(), count: 7)
        hours = Array(repeating: 0, count: 24)
    }

    /// The focus score of one completed session.
    public static func focusScore(pauses: Int) -> Int { max(0, 100 - 5 * pauses) }

    /// Mean focus score of the completed sessions counted; nil when there are none.
    public var focusScore: Int? {
        scoreCount == 0 ? nil : Int(saturating: (Double(scoreSum) / Double(scoreCount)).rounded())
    }

    public var total: Tally {
        Tally(completed: days.reduce(0) { $0 + $1.completed }, focusedSeconds: days.reduce(0) { $0 + $1.focusedSeconds })
    }

    /// Days with any focused time or completed session.
    public var activeDays: Int { days.count { $0.completed > 0 || $0.focusedSeconds > 0 } }

    /// Per day, whether it counts towards a streak (`Statistics.metGoal`); `goals[i]` is the
    /// daily goal of task `taskIDs[i]`. A goal needs a completed session (`reachesGoal`), so
    /// only days with one look at their tasks: years of days times many tasks stay cheap.
    public func goalDays(goals: [Int]) -> [Bool] {
        (0..<grid.count).map { day in
            days[day].completed > 0
                && goals.indices.contains { Statistics.reachesGoal(dayTasks[day * taskIDs.count + $0].completed, goal: goals[$0]) }
        }
    }

    /// Per task, the days among the first `days` of the grid on which it reached its own goal.
    public func goalDayCounts(goals: [Int], days first: Int) -> [Int] {
        var counts = Array(repeating: 0, count: taskIDs.count)
        for day in 0..<min(first, grid.count) where days[day].completed > 0 {
            for task in goals.indices where Statistics.reachesGoal(dayTasks[day * taskIDs.count + task].completed, goal: goals[task]) {
                counts[task] += 1
            }
        }
        return counts
    }

    /// The tally of task `task` (an index into `taskIDs`) on day `day`.
    public func tally(day: Int, task: Int) -> Tally { dayTasks[day * taskIDs.count + task] }

    /// Adds one recorded session, in start order (`SharedTime`). Sessions of tasks not in
    /// `taskIDs`, and parts outside the grid, are ignored.
    public mutating func add(taskID: Int64, start: Double, end: Double, focusedSeconds: Int, pauses: Int, completed: Bool) {
        guard let task = index(ofTask: taskID) else { return }
        var touched = false
        if completed, let day = day(ofEnd: end) {
            touched = true
            days[day].completed += 1
            dayTasks[day * taskIDs.count + task].completed += 1
            tasks[task].completed += 1
            weekdays[weekdayOfDay[day]].completed += 1
            scoreSum += Self.focusScore(pauses: pauses)
            scoreCount += 1
        }
        // Recorded in the grid whether or not any of its time is its own (`SharedTime`).
        if end > start, start < grid.end, end > grid.start { touched = true }
        let kept = shared.uncovered(start: start, end: end)
        if end > start, kept.start >= end {
            if touched { recorded += 1 }
            return
        }
        let (start, focused) = (kept.start, Double(focusedSeconds) * kept.share)
        let span = end - start
        if span <= 0 {
            // No wall-clock extent: all of it on the day it counts on.
            if let day = day(ofEnd: end) {
                touched = true
                addFocus(focused, day: day, task: task, from: start, to: start)
            }
        } else if start < grid.end, end > grid.start {
            touched = true
            var day = day(of: max(start, grid.start)) ?? 0
            while day < grid.count, grid.boundaries[day] < end {
                let low = max(start, grid.boundaries[day])
                let high = min(end, grid.boundaries[day + 1])
                if high > low {
                    addFocus(focused * (high - low) / span, day: day, task: task, from: low, to: high)
                }
                day += 1
            }
        }
        if touched { recorded += 1 }
    }

    /// `grid.index(of:)`, trying the day found last and the one after it first.
    private mutating func day(of wall: Double) -> Int? {
        let grid = self.grid
        return nearLastDay(holds: { start, end in start <= wall && wall < end }, else: { grid.index(of: wall) })
    }

    /// `grid.index(ofEnd:)`, trying the day found last and the one after it first.
    private mutating func day(ofEnd end: Double) -> Int? {
        let grid = self.grid
        return nearLastDay(holds: { start, dayEnd in start < end && end <= dayEnd }, else: { grid.index(ofEnd: end) })
    }

    /// The day found last or the one after it when `holds` accepts its bounds (sessions come
    /// in start order, so mostly one of them), else what `search` finds; remembered.
    @inline(__always)
    private mutating func nearLastDay(holds: (Double, Double) -> Bool, else search: () -> Int?) -> Int? {
        var day = lastDay
        while day < grid.count, day <= lastDay + 1 {
            if holds(grid.boundaries[day], grid.boundaries[day + 1]) {
                lastDay = day
                return day
            }
            day += 1
        }
        guard let found = search() else { return nil }
        lastDay = found
        return found
    }

    /// The index of `taskID` in `taskIDs`: a plain search for the usual handful of tasks
    /// (cheaper than hashing, once per session), the dictionary beyond.
    private func index(ofTask taskID: Int64) -> Int? {
        if taskIDs.count <= 16 { return taskIDs.firstIndex(of: taskID) }
        return taskIndex[taskID]
    }

    /// `seconds` of focus in day `day` between the instants `from` and `to`.
    private mutating func addFocus(_ seconds: Double, day: Int, task: Int, from: Double, to: Double) {
        days[day].focusedSeconds += seconds
        dayTasks[day * taskIDs.count + task].focusedSeconds += seconds
        tasks[task].focusedSeconds += seconds
        weekdays[weekdayOfDay[day]].focusedSeconds += seconds
        spreadOverHours(seconds, day: day, from: from, to: to)
    }

    /// Adds `seconds` to the local hours between `from` and `to` (in day `day`), in proportion
    /// to the time in each; a DST shift inside the piece splits it.
    private mutating func spreadOverHours(_ seconds: Double, day: Int, from: Double, to: Double) {
        if let shift = grid.clockShifts[day], from < shift.at, shift.at < to {
            let before = seconds * (shift.at - from) / (to - from)
            spreadOverHours(before, day: day, from: from, to: shift.at)
            spreadOverHours(seconds - before, day: day, from: shift.at, to: to)
            return
        }
        let length = to - from
        var clock = grid.secondOfDay(from, day: day)
        if length <= 0 {
            hours[Int(saturating: clock / 3600) % 24] += seconds
            return
        }
        var left = length
        while left > 0 {
            let hour = Int(saturating: clock / 3600) % 24
            let inHour = min(left, Double(hour + 1) * 3600 - clock)
            hours[hour] += seconds * inHour / length
            left -= inHour
            clock = Double((hour + 1) % 24) * 3600
        }
    }
}

/// Which days of a grid count towards a streak, from completed sessions alone: what
/// `StatsAccumulator.goalDays` gives for the same sessions, for the current streak, which may
/// look back years without needing focused time, hours or scores.
public struct GoalDayCounter: Sendable {
    public let grid: DayGrid
    private let goals: [Int]
    private let taskIndex: [Int64: Int]
    /// Completed sessions per day and task: `completed[day * goals.count + task]`.
    private var completed: [Int]
    /// Per day, whether any session completed on it (the only days `goalDays` looks into).
    private var anyCompleted: [Bool]

    /// `goals[i]` is the daily goal of task `taskIDs[i]`.
    public init(grid: DayGrid, taskIDs: [Int64], goals: [Int]) {
        precondition(taskIDs.count == goals.count, "one goal per task")
        self.grid = grid
        self.goals = goals
        var index: [Int64: Int] = [:]
        for (i, id) in taskIDs.enumerated() { index[id] = i }
        taskIndex = index
        completed = Array(repeating: 0, count: grid.count * goals.count)
        anyCompleted = Array(repeating: false, count: grid.count)
    }

    /// Counts a completed session of `taskID` that ended at `end` (as `StatsAccumulator.add`
    /// does: for the day it counts on; other tasks and days outside the grid are ignored).
    public mutating func addCompleted(taskID: Int64, end: Double) {
        guard let task = taskIndex[taskID], let day = grid.index(ofEnd: end) else { return }
        completed[day * goals.count + task] += 1
        anyCompleted[day] = true
    }

    /// Per day, whether some task reached its goal.
    public var goalDays: [Bool] {
        (0..<grid.count).map { day in
            anyCompleted[day]
                && goals.indices.contains { Statistics.reachesGoal(completed[day * goals.count + $0], goal: goals[$0]) }
        }
    }
}

// MARK: Figures over the tallies

/// The largest of some values and how far it lies above their average.
public struct Best: Equatable, Sendable {
    /// Index of the best value (the first one on a tie).
    public var index: Int
    public var value: Double
    /// (best − average) / average × 100, rounded, where the average is over the non-zero values.
    public var aboveAveragePercent: Int

    public init(index: Int, value: Double, aboveAveragePercent: Int) {
        self.index = index
        self.value = value
        self.aboveAveragePercent = aboveAveragePercent
    }
}

public enum Statistics {
    /// The best of `values`, nil when none is above zero.
    public static func best(_ values: [Double]) -> Best? {
        var bestIndex = -1
        var sum = 0.0
        var nonZero = 0
        for (i, v) in values.enumerated() where v > 0 {
            sum += v
            nonZero += 1
            if bestIndex < 0 || v > values[bestIndex] { bestIndex = i }
        }
        guard bestIndex >= 0 else { return nil }
        let average = sum / Double(nonZero)
        let above = Int(saturating: ((values[bestIndex] - average) / average * 100).rounded())
        return Best(index: bestIndex, value: values[bestIndex], aboveAveragePercent: above)
    }

    /// Whether a day counts towards a streak: some task reached its daily goal, or, for a task
    /// without a goal, had a completed session. `completed[i]` and `goals[i]` belong to task i.
    public static func metGoal(completed: some Collection<Int>, goals: some Collection<Int>) -> Bool {
        for (done, goal) in zip(completed, goals) where reachesGoal(done, goal: goal) {
            return true
        }
        return false
    }

    /// Whether `completed` sessions of a task in a day reach its daily `goal` (a task without a
    /// goal: one completed session). The rule of `metGoal`, for one task.
    public static func reachesGoal(_ completed: Int, goal: Int) -> Bool { completed >= max(goal, 1) }

    /// Streaks over `met` (one entry per day, oldest first, the last being today):
    /// `current` counts back from today, or from yesterday while today is not met yet (the day
    /// is not over); `longest` is the longest run anywhere in `met`.
    public static func streaks(_ met: [Bool]) -> (current: Int, longest: Int) {
        var longest = 0
        var run = 0
        for m in met {
            run = m ? run + 1 : 0
            longest = max(longest, run)
        }
        var current = 0
        var i = met.count - 1
        if i >= 0, !met[i] { i -= 1 }
        while i >= 0, met[i] {
            current += 1
            i -= 1
        }
        return (current, longest)
    }

    /// The run of goal days ending `today` (or yesterday while today is not met yet), looking
    /// back in growing windows (32 days, then 8 times as many) so a short streak reads only a
    /// few weeks: `goalDays(from)` gives the goal days from `from` through `today`. `firstDay()`:
    /// the first day anything is recorded (no window reaches further back; asked only when the
    /// days known do not settle the streak). `known`: goal days
    /// the caller has already computed for the days up to today; when the streak ends inside
    /// them, nothing more is read.
    public static func currentStreak<Failure: Error>(
        today: CalendarDay, known: [Bool] = [], firstDay: () throws(Failure) -> CalendarDay?,
        goalDays: (_ from: CalendarDay) throws(Failure) -> [Bool]
    ) throws(Failure) -> Int {
        // A streak shorter than the days looked at (less today and yesterday) ended among them.
        if !known.isEmpty, case let current = streaks(known).current, current < known.count - 1 {
            return current
        }
        var window = max(32, known.count * 2)
        let firstDay = try firstDay()
        while true {
            var from = today.adding(days: 1 - window)
            let reachedFirst = firstDay.map { from <= $0 } ?? true
            if let firstDay, reachedFirst { from = min(from, firstDay) }
            let met = try goalDays(from)
            let current = streaks(met).current
            if current < met.count - 1 || reachedFirst { return current }
            window *= 8
        }
    }
}
