import DiligenceCore
import DiligenceTime
import Testing

/// Pure figures: days given as plain boundaries (no time zone), sessions as plain values.
@Suite struct StatisticsTests {
    /// `count` days of 24 hours from `CalendarDay(2026, 6, 8)` (a Monday) at wall 0.
    static func evenGrid(_ count: Int, dayStartMinute: Int = 0) -> DayGrid {
        let first = CalendarDay(year: 2026, month: 6, day: 8)!
        return DayGrid(
            dates: (0..<count).map { first.adding(days: $0) },
            boundaries: (0...count).map { Double($0 * 86400) }, dayStartMinute: dayStartMinute)
    }

    /// One rule for the count and the focus: a session ending exactly at a day boundary belongs
    /// to the day that ends there, its count as well as its focused time.
    @Test func aSessionEndingExactlyAtADayBoundaryBelongsToTheEarlierDay() {
        var acc = StatsAccumulator(grid: Self.evenGrid(2), taskIDs: [7])
        acc.add(taskID: 7, start: 86400 - 1500, end: 86400, focusedSeconds: 1500, pauses: 0, completed: true)
        #expect(acc.days[0] == Tally(completed: 1, focusedSeconds: 1500))
        #expect(acc.days[1] == Tally())
        // A session of no length at a boundary, too (it ended as the earlier day did).
        acc.add(taskID: 7, start: 2 * 86400, end: 2 * 86400, focusedSeconds: 0, pauses: 0, completed: true)
        #expect(acc.days[1] == Tally(completed: 1, focusedSeconds: 0))
        // One that ends a moment after the boundary is the next day's.
        acc.add(taskID: 7, start: 86400 - 1500, end: 86400.5, focusedSeconds: 1500, pauses: 0, completed: true)
        #expect(acc.days[1].completed == 2)
    }

    @Test func sessionAcrossMidnightIsSplitBetweenItsDays() {
        var acc = StatsAccumulator(grid: Self.evenGrid(2), taskIDs: [7])
        // 23:45 to 00:10: 15 minutes on Monday, 10 on Tuesday; completed on Tuesday.
        acc.add(taskID: 7, start: 86400 - 900, end: 86400 + 600, focusedSeconds: 1500, pauses: 0, completed: true)
        #expect(acc.days[0] == Tally(completed: 0, focusedSeconds: 900))
        #expect(acc.days[1] == Tally(completed: 1, focusedSeconds: 600))
        #expect(acc.hours[23] == 900)
        #expect(acc.hours[0] == 600)
        #expect(acc.weekdays[0].focusedSeconds == 900)
        #expect(acc.weekdays[1].completed == 1)
        #expect(acc.total == Tally(completed: 1, focusedSeconds: 1500))
        #expect(acc.activeDays == 2)
        #expect(acc.recorded == 1)
    }

    @Test func pausedTimeIsSharedInProportionToWallTime() {
        var acc = StatsAccumulator(grid: Self.evenGrid(2), taskIDs: [1])
        // 40 minutes of wall time (20 each side of midnight), 20 of them focused.
        acc.add(taskID: 1, start: 86400 - 1200, end: 86400 + 1200, focusedSeconds: 1200, pauses: 3, completed: false)
        #expect(acc.days[0].focusedSeconds == 600)
        #expect(acc.days[1].focusedSeconds == 600)
        #expect(acc.total.completed == 0)
        #expect(acc.focusScore == nil, "only completed sessions have a score")
    }

    @Test func dayStartsAtMovesHoursAndDays() {
        // Days begin at 04:00: wall 0 is 04:00 local; a session at wall 22 h is 02:00 local, same day.
        var acc = StatsAccumulator(grid: Self.evenGrid(2, dayStartMinute: 240), taskIDs: [1])
        acc.add(taskID: 1, start: 22 * 3600, end: 22 * 3600 + 1500, focusedSeconds: 1500, pauses: 0, completed: true)
        #expect(acc.days[0] == Tally(completed: 1, focusedSeconds: 1500))
        #expect(acc.hours[2] == 1500)
    }

    @Test func daylightSavingShiftMovesTheLocalHour() {
        // A 23-hour spring day: the clock jumps from 02:00 to 03:00 at wall 2 h.
        let dates = [CalendarDay(year: 2026, month: 3, day: 29)!]
        let grid = DayGrid(dates: dates, boundaries: [0, 23 * 3600], clockShifts: [.init(at: 2 * 3600, seconds: 3600)])
        var acc = StatsAccumulator(grid: grid, taskIDs: [1])
        // 01:30 to 03:30 local is one real hour: 30 min in hour 1, 30 min in hour 3.
        acc.add(taskID: 1, start: 1.5 * 3600, end: 2.5 * 3600, focusedSeconds: 3600, pauses: 0, completed: true)
        #expect(acc.hours[1] == 1800)
        #expect(acc.hours[2] == 0)
        #expect(acc.hours[3] == 1800)
        #expect(grid.secondOfDay(22.5 * 3600, day: 0) == 23.5 * 3600)
        #expect(grid.index(of: 23 * 3600) == nil)
    }

    @Test func focusScoreIsTheMeanOfOneHundredLessFivePerPause() {
        #expect(StatsAccumulator.focusScore(pauses: 0) == 100)
        #expect(StatsAccumulator.focusScore(pauses: 3) == 85)
        #expect(StatsAccumulator.focusScore(pauses: 30) == 0)
        var acc = StatsAccumulator(grid: Self.evenGrid(1), taskIDs: [1])
        for pauses in [0, 2, 25] {
            acc.add(taskID: 1, start: 3600, end: 5000, focusedSeconds: 1400, pauses: pauses, completed: true)
        }
        #expect(acc.focusScore == 63) // (100 + 90 + 0) / 3
    }

    @Test func sessionsOfOtherTasksAndOutsideTheGridAreIgnored() {
        var acc = StatsAccumulator(grid: Self.evenGrid(1), taskIDs: [1, 2])
        acc.add(taskID: 9, start: 100, end: 200, focusedSeconds: 100, pauses: 0, completed: true)
        acc.add(taskID: 1, start: -5000, end: -4000, focusedSeconds: 1000, pauses: 0, completed: true)
        acc.add(taskID: 2, start: 1000, end: 2000, focusedSeconds: 1000, pauses: 0, completed: true)
        #expect(acc.recorded == 1)
        #expect(acc.tasks[0] == Tally())
        #expect(acc.tasks[1] == Tally(completed: 1, focusedSeconds: 1000))
        #expect(acc.tally(day: 0, task: 1).completed == 1)
    }

    /// Two devices' timers ran at once (sync, docs/statistics.md): the time they share counts
    /// once, for the session that began first; both sessions are recorded and completed.
    @Test func timeTwoDevicesShareCountsOnceForTheSessionThatBeganFirst() {
        var acc = StatsAccumulator(grid: Self.evenGrid(1), taskIDs: [1, 2])
        // 09:00–09:25 on one device, 09:10–09:40 on the other: 40 minutes of union.
        acc.add(taskID: 1, start: 9 * 3600, end: 9 * 3600 + 1500, focusedSeconds: 1500, pauses: 0, completed: true)
        acc.add(taskID: 2, start: 9 * 3600 + 600, end: 9 * 3600 + 2400, focusedSeconds: 1800, pauses: 0, completed: true)
        // 09:05–09:20 on a third, wholly inside the first: no time of its own.
        acc.add(taskID: 2, start: 9 * 3600 + 300, end: 9 * 3600 + 1200, focusedSeconds: 900, pauses: 0, completed: false)
        #expect(acc.total == Tally(completed: 2, focusedSeconds: 2400))
        #expect(acc.tasks[0].focusedSeconds == 1500)
        #expect(acc.tasks[1].focusedSeconds == 900)
        #expect(acc.hours[9] == 2400)
        #expect(acc.recorded == 3)
        // A later session keeps its share of its focus and time away: 30 minutes, 20 of them its own.
        var shared = SharedTime()
        #expect(shared.uncovered(start: 0, end: 1200) == (start: 0, share: 1))
        let kept = shared.uncovered(start: 600, end: 2400)
        #expect(kept.start == 1200 && abs(kept.share - 2.0 / 3) < 1e-12, "\(kept)")
        // Wholly inside an earlier one: nothing of its own; of no length: all.
        #expect(shared.uncovered(start: 1800, end: 2000).share == 0)
        #expect(shared.uncovered(start: 2100, end: 2100) == (start: 2100, share: 1))
    }

    @Test func bestAndHowFarAboveTheAverage() {
        let best = Statistics.best([0, 10, 30, 20])
        #expect(best == Best(index: 2, value: 30, aboveAveragePercent: 50))
        #expect(Statistics.best([0, 0]) == nil)
        #expect(Statistics.best([5, 5])?.index == 0, "the first one on a tie")
    }

    @Test func goalDaysAndStreaks() {
        #expect(Statistics.metGoal(completed: [3, 0], goals: [4, 0]) == false)
        #expect(Statistics.metGoal(completed: [4, 0], goals: [4, 0]) == true)
        #expect(Statistics.metGoal(completed: [0, 1], goals: [4, 0]) == true, "a task without a goal counts with one session")
        #expect(Statistics.metGoal(completed: [0, 0], goals: [0, 0]) == false)

        let streak = Statistics.streaks([true, true, false, true, true, true, false])
        #expect(streak.current == 3, "today not met yet does not break the streak")
        #expect(streak.longest == 3)
        #expect(Statistics.streaks([true, false, false]).current == 0)
        #expect(Statistics.streaks([true, true]).current == 2)
        #expect(Statistics.streaks([]).longest == 0)
    }
}
