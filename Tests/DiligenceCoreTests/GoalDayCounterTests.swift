import DiligenceCore
import DiligenceTestSupport
import DiligenceTime
import Testing

/// The streak's fast path (completed sessions only) against the full accumulator.
@Suite struct GoalDayCounterTests {
    @Test func goalDaysEqualTheAccumulatorsOnTheSameSessions() {
        // Uneven days (a 23- and a 25-hour one), three tasks with goals 0, 2 and 3, and one task
        // outside the report; sessions before, inside and after the grid, some not completed.
        let first = CalendarDay(year: 2026, month: 3, day: 1)!
        var boundaries = [0.0]
        for day in 0..<30 { boundaries.append(boundaries[day] + (day == 7 ? 82800 : day == 20 ? 90000 : 86400)) }
        let grid = DayGrid(dates: (0..<30).map { first.adding(days: $0) }, boundaries: boundaries)
        let taskIDs: [Int64] = [1, 2, 3]
        let goals = [0, 2, 3]
        var acc = StatsAccumulator(grid: grid, taskIDs: taskIDs)
        var counter = GoalDayCounter(grid: grid, taskIDs: taskIDs, goals: goals)
        var random = SeededRandom(seed: 0x60A1_DA75)
        for _ in 0..<60 {
            let task = Int64.random(in: 1...4, using: &random)
            let start = Double.random(in: -86400...(boundaries[30] + 3600), using: &random).rounded()
            let end = start + Double(Int.random(in: 0...7200, using: &random))
            let completed = Int.random(in: 0..<5, using: &random) > 0
            acc.add(taskID: task, start: start, end: end, focusedSeconds: 1500, pauses: 0, completed: completed)
            if completed { counter.addCompleted(taskID: task, end: end) }
        }
        let expected = acc.goalDays(goals: goals)
        #expect(counter.goalDays == expected)
        #expect(expected.contains(true) && expected.contains(false), "the sessions should meet some days and miss others")
        // The accumulator's goal days follow Statistics.metGoal day by day.
        for day in 0..<grid.count {
            #expect(
                expected[day]
                    == Statistics.metGoal(completed: taskIDs.indices.map { acc.tally(day: day, task: $0).completed }, goals: goals))
        }
        // Each task's own goal days, over the whole grid and over its first days (a period not over).
        for first in [grid.count, 17, 0] {
            let counts = taskIDs.indices.map { task in
                (0..<first).count { Statistics.reachesGoal(acc.tally(day: $0, task: task).completed, goal: goals[task]) }
            }
            #expect(acc.goalDayCounts(goals: goals, days: first) == counts, "first \(first) days")
            if first == grid.count { #expect(counts.contains { $0 > 0 }, "some task should reach its goal") }
        }
    }

    /// The streak counts a session ending at midnight on the day that ends there, as reports do.
    @Test func aSessionEndingAtMidnightMeetsTheEarlierDay() {
        let grid = DayGrid(
            dates: [CalendarDay(year: 2026, month: 6, day: 8)!, CalendarDay(year: 2026, month: 6, day: 9)!],
            boundaries: [0, 86400, 172800])
        var counter = GoalDayCounter(grid: grid, taskIDs: [1], goals: [0])
        counter.addCompleted(taskID: 1, end: 86400)
        #expect(counter.goalDays == [true, false])
        counter.addCompleted(taskID: 1, end: 0) // the day before the grid's
        counter.addCompleted(taskID: 1, end: 172800) // the grid's last day
        #expect(counter.goalDays == [true, true])
    }

    @Test func aTaskWithoutAGoalNeedsOneCompletedSession() {
        let grid = DayGrid(
            dates: [CalendarDay(year: 2026, month: 6, day: 8)!, CalendarDay(year: 2026, month: 6, day: 9)!],
            boundaries: [0, 86400, 172800])
        var counter = GoalDayCounter(grid: grid, taskIDs: [1, 2], goals: [0, 2])
        counter.addCompleted(taskID: 2, end: 100) // one of two: not met
        counter.addCompleted(taskID: 1, end: 90000) // no goal: one is enough
        counter.addCompleted(taskID: 2, end: 172801) // after the grid: ignored
        #expect(counter.goalDays == [false, true])
        #expect(Statistics.reachesGoal(1, goal: 0) && !Statistics.reachesGoal(1, goal: 2) && Statistics.reachesGoal(2, goal: 2))
    }
}
