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

/// The figures the client's pictures draw (docs/statistics.md): per-month totals, the previous
/// period, plans beside what was done, goal days, a day chosen by `date`, recent days per task.
@Suite struct PictureFiguresTests {
    func int(_ j: JSON?, _ key: String) -> Int? { j?[key]?.intValue.flatMap { Int(exactly: $0) } }

    @Test func monthsAndThePreviousYear() throws {
        try withTimeZone("Europe/Berlin") {
            let d = try InProcessDaemon()
            defer { d.stop() }
            try d.addSession("Work", "2025-03-30 10:00", "2025-03-30 10:25")
            try d.addSession("Work", "2025-03-31 10:00", "2025-03-31 10:50")
            try d.addSession("Study", "2025-12-31 23:50", "2026-01-01 00:10") // split across the years
            try d.addSession("Study", "2024-07-01 09:00", "2024-07-01 09:30")
            let year = try d.call("stats", [("period", .string("year")), ("date", .string("2025-06-10"))])
            #expect(year["from"]?.stringValue == "2025-01-01" && year["to"]?.stringValue == "2025-12-31")
            let months = year["months"]?.arrayValue ?? []
            #expect(months.map { $0["month"]?.stringValue ?? "" } == (1...12).map { $0 < 10 ? "2025-0\($0)" : "2025-\($0)" })
            #expect(int(months[2], "focused_seconds") == 4500 && int(months[2], "completed") == 2 && int(months[2], "active_days") == 2)
            #expect(int(months[11], "focused_seconds") == 600 && int(months[11], "completed") == 0)
            #expect(months.reduce(0) { $0 + (int($1, "focused_seconds") ?? 0) } == int(year, "focused_seconds"))
            let previous = year["previous"]
            #expect(previous?["from"]?.stringValue == "2024-01-01" && previous?["to"]?.stringValue == "2024-12-31")
            #expect(int(previous, "focused_seconds") == 1800 && int(previous, "completed") == 1)
            // Kept totals are not kept past a write: a session added to last year shows.
            try d.addSession("Study", "2024-08-01 09:00", "2024-08-01 09:25")
            let again = try d.call("stats", [("period", .string("year")), ("date", .string("2025-06-10"))])
            #expect(int(again["previous"], "focused_seconds") == 3300 && int(again["previous"], "completed") == 2)
            _ = try d.call("history_remove", [("id", .int(5))])
            let removed = try d.call("stats", [("period", .string("year")), ("date", .string("2025-06-10"))])
            #expect(int(removed["previous"], "focused_seconds") == 1800)
            // offset counts from the period of `date`.
            let before = try d.call("stats", [("period", .string("year")), ("date", .string("2025-06-10")), ("offset", .int(-1))])
            #expect(before["from"]?.stringValue == "2024-01-01" && int(before, "focused_seconds") == 1800)
            #expect(int(before["previous"], "focused_seconds") == 0)
        }
    }

    @Test("a period under way is also compared with the period before up to the same point: as many days in, the same time of day")
    func previousToDate() throws {
        try withTimeZone("Europe/Berlin") {
            let clock = FakeClock()
            // Wednesday 2026-12-02, 10:30 in Berlin (09:30 UTC).
            clock.stepWall(1_796_203_800 - clock.wall)
            let d = try InProcessDaemon(clocks: clock.clocks)
            defer { d.stop() }
            try d.addSession("Work", "2026-11-01 09:00", "2026-11-01 09:25")
            try d.addSession("Work", "2026-11-02 09:00", "2026-11-02 09:25")
            try d.addSession("Work", "2026-11-02 10:20", "2026-11-02 10:45") // across the point: 10 of its 25 minutes
            try d.addSession("Work", "2026-11-20 09:00", "2026-11-20 09:25")
            try d.addSession("Work", "2026-11-25 09:00", "2026-11-25 09:25") // the Wednesday of the week before
            try d.addSession("Work", "2026-11-26 09:00", "2026-11-26 09:25")
            try d.addSession("Work", "2026-12-01 09:00", "2026-12-01 09:25")
            let month = try d.call("stats", [("period", .string("month"))])
            #expect(int(month["previous"], "completed") == 6, "the whole month before still: \(month["previous"]?.serialized ?? "")")
            let toDate = month["previous_to_date"]
            #expect(toDate?["from"]?.stringValue == "2026-11-01" && toDate?["to"]?.stringValue == "2026-11-02")
            #expect(toDate?["until"]?.stringValue == "2026-11-02T10:30:00+01:00", "\(toDate?.serialized ?? "")")
            #expect(int(toDate, "completed") == 2 && int(toDate, "focused_seconds") == 1500 + 1500 + 600, "\(toDate?.serialized ?? "")")
            let week = try d.call("stats", [("period", .string("week"))])
            #expect(week["previous_to_date"]?["to"]?.stringValue == "2026-11-25" && int(week["previous_to_date"], "completed") == 1)
            let today = try d.call("stats", [("period", .string("today"))])
            #expect(today["previous_to_date"]?["to"]?.stringValue == "2026-12-01" && int(today["previous_to_date"], "completed") == 1)
            // A period that does not hold today is compared whole only.
            let past = try d.call("stats", [("period", .string("month")), ("offset", .int(-1))])
            #expect(past["previous_to_date"]?.isNull == true && past["previous"]?.isNull == false)
            #expect(try d.call("stats", [("period", .string("all"))])["previous_to_date"]?.isNull == true)
            // The 31st of a month after a month of 30 days: the whole month before.
            clock.stepWall(1_798_707_600 - clock.wall) // 2026-12-31 10:00 in Berlin
            let late = try d.call("stats", [("period", .string("month"))])
            #expect(late["previous_to_date"]?["to"]?.stringValue == "2026-11-30" && int(late["previous_to_date"], "completed") == 6)
        }
    }

    @Test("previous is what the report of the period before says, sessions across its edges split alike")
    func previousMatchesThePeriodBefore() throws {
        try withTimeZone("Europe/Berlin") {
            let d = try InProcessDaemon(config: "[stats]\nday_starts_at = 04:00\n")
            defer { d.stop() }
            try d.addSession("Work", "2025-03-30 01:30", "2025-03-30 03:30") // across the DST change
            try d.addSession("Work", "2025-03-31 03:40", "2025-03-31 04:20") // across the day's start
            try d.addSession("Study", "2025-02-28 23:50", "2025-03-01 00:20")
            try d.addSession("Study", "2025-03-31 23:50", "2025-04-01 04:30") // across the month's end
            try d.addSession("Work", "2024-12-31 20:00", "2025-01-01 20:00")
            for period in ["day", "week", "month", "year"] {
                for date in ["2025-03-31", "2025-04-01", "2025-03-30", "2025-01-01", "2025-04-02"] {
                    for task: JSON in [.null, .string("Study")] {
                        let now = try d.call("stats", [("period", .string(period)), ("date", .string(date)), ("task", task)])
                        let before = try d.call(
                            "stats", [("period", .string(period)), ("date", .string(date)), ("offset", .int(-1)), ("task", task)])
                        #expect(now["previous"]?["from"] == before["from"] && now["previous"]?["to"] == before["to"])
                        #expect(int(now["previous"], "completed") == int(before, "completed"), "\(period) \(date)")
                        #expect(int(now["previous"], "focused_seconds") == int(before, "focused_seconds"), "\(period) \(date)")
                    }
                }
            }
        }
    }

    @Test func aDayByDateHasItsSessionsAndTheDayBefore() throws {
        try withTimeZone("UTC0") {
            let d = try InProcessDaemon()
            defer { d.stop() }
            try d.addSession("Work", "2025-03-29 09:00", "2025-03-29 09:25")
            try d.addSession("Work", "2025-03-30 08:00", "2025-03-30 08:25", pauses: 1)
            try d.addSession("Study", "2025-03-30 14:00", "2025-03-30 14:50")
            let day = try d.call("stats", [("period", .string("day")), ("date", .string("2025-03-30"))])
            #expect(day["period"]?.stringValue == "day")
            #expect(
                day["starts_at"]?.stringValue == "2025-03-30T00:00:00+00:00" && day["ends_at"]?.stringValue == "2025-03-31T00:00:00+00:00")
            #expect(day["today"]?.stringValue == LocalDay.date(containing: Double(time(nil)), dayStartsAt: 0).description)
            #expect(day["from"]?.stringValue == "2025-03-30" && day["to"]?.stringValue == "2025-03-30")
            let sessions = day["sessions"]?.arrayValue ?? []
            #expect(sessions.map { $0["start"]?.stringValue ?? "" } == ["2025-03-30T08:00:00+00:00", "2025-03-30T14:00:00+00:00"])
            #expect(int(day["previous"], "focused_seconds") == 1500 && day["previous"]?["from"]?.stringValue == "2025-03-29")
            let weekOfIt = try d.call("stats", [("period", .string("week")), ("date", .string("2025-03-30"))])
            #expect(weekOfIt["from"]?.stringValue == "2025-03-24" && weekOfIt["sessions"] == nil)
            #expect(try d.failure("stats", [("period", .string("all")), ("date", .string("2025-03-30"))]).code == "invalid_argument")
            #expect(try d.failure("stats", [("period", .string("day")), ("date", .string("2025-02-30"))]).code == "invalid_date")
            #expect(try d.failure("stats", [("date", .string("someday"))]).code == "invalid_date")
        }
    }

    @Test func plansBesideWhatWasDoneAndGoalDays() throws {
        try withTimeZone("UTC0") {
            let d = try InProcessDaemon()
            defer { d.stop() }
            _ = try d.call("task_edit", [("task", .string("Work")), ("goal", .int(2))])
            _ = try d.call("plan_set", [("day", .string("2025-03-30")), ("task", .string("Work"))])
            _ = try d.call("plan_set", [("day", .string("2025-03-31")), ("task", .string("Work"))])
            try d.addSession("Work", "2025-03-30 08:00", "2025-03-30 08:25")
            try d.addSession("Work", "2025-03-30 09:00", "2025-03-30 09:25")
            try d.addSession("Study", "2025-03-31 09:00", "2025-03-31 09:25")
            let month = try d.call("stats", [("period", .string("month")), ("date", .string("2025-03-01"))])
            let days = month["days"]?.arrayValue ?? []
            #expect(days.count == 31)
            let byDate = Dictionary(days.map { ($0["date"]?.stringValue ?? "", $0) }, uniquingKeysWith: { a, _ in a })
            #expect(byDate["2025-03-30"]?["planned"]?.stringValue == "Work" && int(byDate["2025-03-30"], "planned_completed") == 2)
            #expect(byDate["2025-03-31"]?["planned"]?.stringValue == "Work" && int(byDate["2025-03-31"], "planned_completed") == 0)
            #expect(byDate["2025-03-29"]?["planned"] == nil && byDate["2025-03-29"]?["planned_completed"] == nil)
            let tasks = month["tasks"]?.arrayValue ?? []
            #expect(int(tasks.first { $0["task"]?.stringValue == "Work" }, "goal_days") == 1) // goal 2: only the 30th
            #expect(int(tasks.first { $0["task"]?.stringValue == "Study" }, "goal_days") == 1) // no goal: one session
            // A report of another task leaves Work's plans out.
            let study = try d.call("stats", [("period", .string("month")), ("date", .string("2025-03-01")), ("task", .string("Study"))])
            #expect(study["days"]?.arrayValue?.allSatisfy { $0["planned"] == nil } == true)
        }
    }

    @Test func recentDaysPerTask() throws {
        try withTimeZone("UTC0") {
            let d = try InProcessDaemon()
            defer { d.stop() }
            let today = LocalDay.date(containing: Double(time(nil)), dayStartsAt: 0)
            let yesterday = today.adding(days: -1).description
            let earlier = today.adding(days: -2).description
            try d.addSession("Work", "\(yesterday) 10:00", "\(yesterday) 10:25")
            try d.addSession("Work", "\(earlier) 10:00", "\(earlier) 10:50")
            try d.addSession("Work", "\(today.adding(days: -5).description) 10:00", "\(today.adding(days: -5).description) 10:50")
            let plain = try d.call("task_list")
            #expect(plain["tasks"]?.arrayValue?.allSatisfy { $0["recent"] == nil } == true)
            let list = try d.call("task_list", [("recent_days", .int(3))])
            let work = list["tasks"]?.arrayValue?.first { $0["name"]?.stringValue == "Work" }
            #expect(work?["recent"]?.arrayValue?.map { $0.intValue ?? -1 } == [3000, 1500, 0])
            #expect(try d.failure("task_list", [("recent_days", .int(367))]).code == "out_of_range")
        }
    }
}
