import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import DiligenceTime
import Testing

@testable import DiligenceDaemon

/// One "today" and one rule for the day a session counts on, through the control socket of an
/// in-process daemon on a fake clock (docs/statistics.md, "Days").
@Suite struct TodayTests {
    /// Sets the fake clock to `hour`:`minute` local time on the date it shows (2027-01-15 in the
    /// zones used here); returns that date.
    func setLocalTime(_ clock: FakeClock, hour: Int, minute: Int = 0) -> CalendarDay {
        let date = LocalDay.date(containing: clock.wall, dayStartsAt: 0)
        clock.stepWall(LocalDay.wall(of: date, hour: hour, minute: minute, second: 0) - clock.wall)
        return date
    }

    /// A session ending exactly at midnight is yesterday's, in `status` and in `stats today`
    /// alike, its count with its focused time.
    @Test func aSessionEndingAtMidnightIsYesterdaysEverywhere() throws {
        try withTimeZone("Europe/Berlin") {
            let clock = FakeClock()
            let today = setLocalTime(clock, hour: 0, minute: 10)
            let d = try InProcessDaemon(clocks: clock.clocks)
            defer { d.stop() }
            let yesterday = today.adding(days: -1)
            try d.addSession("Work", "\(yesterday) 23:35", "\(today) 00:00")
            #expect(try d.status()["today_completed"] == .int(0))
            let stats = try d.call("stats", [("period", .string("today"))])
            #expect(stats["completed"] == .int(0) && stats["focused_seconds"] == .int(0), "\(stats.serialized)")
            #expect(stats["sessions"]?.arrayValue?.isEmpty == true, "\(stats.serialized)")
            let before = try d.call("stats", [("period", .string("today")), ("offset", .int(-1))])
            #expect(before["completed"] == .int(1) && before["focused_seconds"] == .int(1500), "\(before.serialized)")
        }
    }

    /// With days starting at 04:00, 02:00 is still yesterday's date: `history add` with bare
    /// times, `stats today`, `plan set today` and `status` all mean that day.
    @Test func bareTimesBelongToTodayUnderDayStartsAt() throws {
        try withTimeZone("Europe/Berlin") {
            let clock = FakeClock()
            let calendarToday = setLocalTime(clock, hour: 2)
            let statisticsToday = calendarToday.adding(days: -1)
            let d = try InProcessDaemon(config: "[stats]\nday_starts_at = 04:00\n", clocks: clock.clocks)
            defer { d.stop() }
            try d.addSession("Work", "23:00", "23:30")
            let session = try #require(d.sessions().first)
            #expect(RFC3339.format(session.start).hasPrefix("\(statisticsToday)T23:00:00"))
            // 01:00 is an hour ago: the same statistics day, on the next calendar date.
            try d.addSession("Work", "01:00", "01:25")
            #expect(d.sessions().count == 2)
            #expect(RFC3339.format(d.sessions()[1].start).hasPrefix("\(calendarToday)T01:00:00"))
            // 03:00 is an hour ahead.
            #expect(
                try d.failure("history_add", [("task", .string("Work")), ("start", .string("03:00")), ("end", .string("03:30"))]).code
                    == "invalid_session")
            let stats = try d.call("stats", [("period", .string("today"))])
            #expect(stats["from"] == .string(statisticsToday.description))
            #expect(stats["completed"] == .int(2), "\(stats.serialized)")
            #expect(try d.status()["today_completed"] == .int(2))
            let plan = try d.call("plan_set", [("day", .string("today")), ("task", .string("Work"))])
            #expect(plan["day"] == .string(statisticsToday.description))
        }
    }

    /// A local time the clocks skip is refused, naming the gap; one they show twice is refused
    /// unless its offset says which, and the message offers both.
    @Test func timesInADSTGapOrRepeatedAreNotGuessed() throws {
        try withTimeZone("Europe/Berlin") {
            let d = try InProcessDaemon(clocks: FakeClock().clocks)
            defer { d.stop() }
            func refusal(_ start: String, _ end: String) throws -> (code: String, message: String) {
                try d.failure("history_add", [("task", .string("Work")), ("start", .string(start)), ("end", .string(end))])
            }
            let gap = try refusal("2026-03-29 02:30", "2026-03-29 04:00")
            #expect(gap.code == "nonexistent_time", "\(gap)")
            #expect(
                gap.message.contains("2026-03-29 02:30") && gap.message.contains("02:00") && gap.message.contains("03:00"), "\(gap.message)"
            )
            let twice = try refusal("2026-10-25 02:30", "2026-10-25 03:30")
            #expect(twice.code == "ambiguous_time", "\(twice)")
            #expect(
                twice.message.contains("2026-10-25 02:30+02:00") && twice.message.contains("2026-10-25 02:30+01:00"), "\(twice.message)")
            #expect(d.sessions().isEmpty)

            // With the offset: 01:50 (CEST) to the first 02:30 is 40 minutes...
            try d.addSession("Work", "2026-10-25 01:50", "2026-10-25 02:30+02:00")
            let first = try #require(d.sessions().first)
            #expect(first.end - first.start == 2400)
            #expect(RFC3339.format(first.end) == "2026-10-25T02:30:00+02:00")
            // ...and the second 02:30 (CET) to 03:30 is one hour.
            try d.addSession("Study", "2026-10-25 02:30+01:00", "2026-10-25 03:30")
            let second = try #require(d.sessions().last)
            #expect(d.sessions().count == 2 && second.end - second.start == 3600)
            #expect(RFC3339.format(second.start) == "2026-10-25T02:30:00+01:00")
        }
    }
}
