import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import DiligenceTime
import Testing

@testable import DiligenceDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The current streak and the report grid are computed by fast paths (completed sessions only;
/// day starts 24 hours apart where no clock change is near): they must agree with the full
/// computation, across a DST change and with `day_starts_at`.
@Suite struct StreakFastPathTests {
    @Test(arguments: [("Europe/Berlin", "02:30"), ("America/New_York", "04:00"), ("Australia/Lord_Howe", "00:00")])
    func gridStartsEveryDayWhereMktimeSays(zone: String, dayStartsAt: String) {
        withTimeZone(zone) {
            let parts = dayStartsAt.split(separator: ":").map { Int($0)! }
            let minute = parts[0] * 60 + parts[1]
            let first = CalendarDay(year: 2024, month: 1, day: 1)!
            let last = CalendarDay(year: 2026, month: 12, day: 31)!
            let grid = LocalDay.grid(from: first, through: last, dayStartsAt: minute)
            var shifted = 0
            for i in 0...grid.count {
                #expect(
                    grid.boundaries[i] == LocalDay.start(of: first.adding(days: i), dayStartsAt: minute),
                    "\(zone): day \(first.adding(days: i))")
            }
            for i in 0..<grid.count {
                // A day with a clock change has a shift (its length may still be 24 hours
                // when its start was moved out of a DST gap).
                let changes = utcOffset(grid.boundaries[i]) != utcOffset(grid.boundaries[i + 1])
                #expect((grid.clockShifts[i] != nil) == changes, "\(zone): \(grid.dates[i])")
                if grid.clockShifts[i] != nil { shifted += 1 }
            }
            #expect(shifted == 6, "\(zone): two clock changes a year for three years")
        }
    }

    func utcOffset(_ wall: Double) -> Int {
        var t = time_t(wall)
        var local = tm()
        localtime_r(&t, &local)
        return local.tm_gmtoff
    }

    @Test func currentStreakFromCompletedSessionsEqualsTheFullAccumulation() throws {
        try withTimeZone("Europe/Berlin") {
            // 02:30 happens twice on the last Sunday of October: a day start on the DST change.
            let d = try InProcessDaemon(config: "[stats]\nday_starts_at = 02:30\n")
            defer { d.stop() }
            let today = LocalDay.date(containing: Double(time(nil)), dayStartsAt: 150)
            // Goal days 1 to 299 days back (over a spring and an autumn change), missing day 300:
            // longer than the first windows (32, then 256 days) the streak looks back in.
            // Each session starts 10 minutes before its day does (it counts for the day it ends).
            var sessions = ""
            for back in 1...310 where back != 300 {
                let dayStart = LocalDay.start(of: today.adding(days: -back), dayStartsAt: 150)
                sessions +=
                    #"{"task":"Study","start":"\#(RFC3339.format(dayStart - 600))","end":"\#(RFC3339.format(dayStart + 900))","#
                    + #""planned_seconds":1500,"focused_seconds":1500,"pauses":0,"outcome":"completed"}"# + "\n"
            }
            let imported = try d.request(Request(command: "import", arguments: [("content", .string(sessions))]).body.serialized)
            try #require(imported["result"]?["imported"]?.intValue == 309, "\(imported.serialized)")

            let daemon = d.daemon
            let (streak, fast, full) = try daemon.queue.sync {
                Result { () throws(DiligenceError) -> (Int, [Bool], [Bool]) in
                    let tasks = try daemon.store.tasks()
                    let grid = daemon.records.stats.grid(today.adding(days: -320), today)
                    let full = daemon.records.stats.goalDays(try daemon.records.stats.accumulate(grid, tasks: tasks), tasks: tasks)
                    let fast = try daemon.records.stats.goalDays(grid, tasks: tasks, only: nil)
                    return (try daemon.records.stats.currentStreak(tasks: tasks, only: nil), fast, full)
                }
            }.get()
            #expect(fast == full)
            #expect(streak == Statistics.streaks(full).current)
            #expect(streak == 299)
            // Reports reach it through the period's own goal days first (the year's, the week's).
            for period in ["week", "year", "all"] {
                let report = try d.request(Request(command: "stats", arguments: [("period", .string(period))]).body.serialized)
                #expect(report["result"]?["streak"]?["current"]?.intValue == 299, "\(period)")
            }
        }
    }
}
