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

/// The statistics commands through the control socket of an in-process daemon, in fixed time
/// zones (the daemon computes days in local time, so each test holds the time-zone lock).
@Suite struct StatsCommandTests {
    /// The `offset` of the ISO week holding `day`, as the daemon counts weeks from today.
    func weekOffset(_ day: String, dayStartsAt: Int = 0) -> Int {
        let today = LocalDay.date(containing: Double(time(nil)), dayStartsAt: dayStartsAt)
        return (CalendarDay(day)!.monday.daysSince1970 - today.monday.daysSince1970) / 7
    }

    func day(_ report: JSON, _ date: String) -> JSON? {
        report["days"]?.arrayValue?.first { $0["date"]?.stringValue == date }
    }

    @Test func dstChangeDayHasTwentyThreeHoursAndItsHoursAreLocal() throws {
        try withTimeZone("Europe/Berlin") {
            let d = try InProcessDaemon()
            defer { d.stop() }
            // 2025-03-30: clocks jump from 02:00 to 03:00. 01:30 to 03:30 local is one real hour.
            try d.addSession("Work", "2025-03-30 01:30", "2025-03-30 03:30", pauses: 2)
            try d.addSession("Study", "2025-03-29T10:00:00+01:00", "2025-03-29T10:25:00+01:00")
            let week = try d.call("stats", [("period", .string("week")), ("offset", .int(weekOffset("2025-03-30")))])
            #expect(week["from"]?.stringValue == "2025-03-24")
            #expect(week["completed"]?.intValue == 2)
            #expect(week["focused_seconds"]?.intValue == 5100)
            #expect(day(week, "2025-03-30")?["focused_seconds"]?.intValue == 3600)
            #expect(day(week, "2025-03-29")?["focused_seconds"]?.intValue == 1500)
            let hours = week["hours"]?.arrayValue?.map { $0["focused_seconds"]?.intValue ?? -1 } ?? []
            #expect(hours[1] == 1800 && hours[2] == 0 && hours[3] == 1800 && hours[10] == 1500, "\(hours)")
            #expect(week["best_hour"]?["hour"]?.intValue == 1)
            #expect(week["best_task"]?["task"]?.stringValue == "Work")
            // Work 3600 vs average (3600 + 1500) / 2: 41% above.
            #expect(week["best_task"]?["above_average_percent"]?.intValue == 41)
            #expect(week["best_weekday"]?["weekday"]?.stringValue == "sunday")
            #expect(week["focus_score"]?.intValue == 95) // (90 + 100) / 2
            #expect(week["active_days"]?.intValue == 2)
            #expect(week["average_seconds_per_active_day"]?.intValue == 2550)
            #expect(week["streak"]?["longest"]?.intValue == 2)
            let tasks = week["tasks"]?.arrayValue ?? []
            #expect(tasks.first { $0["task"]?.stringValue == "Work" }?["completed"]?.intValue == 1)
        }
    }

    /// Issue 32, item 9: "Days reached 6 of 335": a goal's days were counted from the period's
    /// start, before any history existed. They count from the task's first recorded session.
    @Test func goalDaysAreCountedFromTheTasksFirstSession() throws {
        try withTimeZone("Europe/Berlin") {
            let d = try InProcessDaemon()
            defer { d.stop() }
            _ = try d.call("task_edit", [("task", .string("Study")), ("goal", .int(1))])
            try d.addSession("Study", "2025-03-10 09:00", "2025-03-10 09:25")
            try d.addSession("Study", "2025-03-12 09:00", "2025-03-12 09:25")
            try d.addSession("Work", "2025-03-20 09:00", "2025-03-20 09:25")
            let month = try d.call("stats", [("period", .string("month")), ("date", .string("2025-03-15"))])
            let tasks = month["tasks"]?.arrayValue ?? []
            func row(_ name: String) -> JSON? { tasks.first { $0["task"]?.stringValue == name } }
            #expect(
                row("Study")?["goal_days"]?.intValue == 2 && row("Study")?["goal_days_counted"]?.intValue == 22,
                "\(tasks.map(\.serialized))")
            #expect(row("Work")?["goal_days_counted"]?.intValue == 12)
            #expect(
                tasks.filter { $0["completed"]?.intValue == 0 }.allSatisfy { $0["goal_days_counted"]?.intValue == 0 }, "no session: no day")
        }
    }

    @Test func sessionAcrossDayStartsAtIsSplit() throws {
        try withTimeZone("America/New_York") {
            let d = try InProcessDaemon(config: "[stats]\nday_starts_at = 04:00\n")
            defer { d.stop() }
            // 03:30 to 04:30: half on the 9th's day, half on the 10th's; it ended on the 10th.
            try d.addSession("Work", "2025-06-10 03:30", "2025-06-10 04:30")
            // 23:50 to 00:20 crosses midnight but not 04:00: all of it on the 10th.
            try d.addSession("Work", "2025-06-10 23:50", "2025-06-11 00:20")
            let week = try d.call("stats", [("period", .string("week")), ("offset", .int(weekOffset("2025-06-10", dayStartsAt: 240)))])
            #expect(day(week, "2025-06-09")?["focused_seconds"]?.intValue == 1800)
            #expect(day(week, "2025-06-09")?["completed"]?.intValue == 0)
            #expect(day(week, "2025-06-10")?["focused_seconds"]?.intValue == 3600)
            #expect(day(week, "2025-06-10")?["completed"]?.intValue == 2)
            #expect(day(week, "2025-06-11")?["focused_seconds"]?.intValue == 0)

            let history = try d.call("history", [("since", .string("2025-06-10")), ("until", .string("2025-06-10"))])
            #expect(history["sessions"]?.arrayValue?.count == 1, "the 03:30 session began on the 9th's day: \(history.serialized)")
        }
    }

    @Test func theLongestStreakIsNeverShorterThanTheCurrentOne() throws {
        try withTimeZone("UTC0") {
            let d = try InProcessDaemon()
            defer { d.stop() }
            // Three days in a row up to yesterday: the current streak (today is not over yet),
            // which today's report does not hold a single day of.
            let today = LocalDay.date(containing: Double(time(nil)), dayStartsAt: 0)
            for back in [3, 2, 1] {
                let date = today.adding(days: -back).description
                try d.addSession("Study", "\(date)T10:00:00Z", "\(date)T10:25:00Z")
            }
            let report = try d.call("stats", [("period", .string("today"))])
            #expect(report["streak"]?["current"]?.intValue == 3)
            #expect(report["streak"]?["longest"]?.intValue == 3)
        }
    }

    @Test func weekWithAPlanAndStartWithoutATask() throws {
        try withTimeZone("Europe/Berlin") {
            let d = try InProcessDaemon()
            defer { d.stop() }
            let planned = try d.call("plan_set", [("day", .string("today")), ("task", .string("study"))])
            #expect(planned["task"]?.stringValue == "Study")
            // Another day of this week than today: on a Monday, Tuesday.
            let todayIsMonday = LocalDay.date(containing: Double(time(nil)), dayStartsAt: 0).weekday == 1
            let other = todayIsMonday ? 1 : 0
            _ = try d.call("plan_set", [("day", .string(todayIsMonday ? "tue" : "mon")), ("task", .string("Exercise"))])
            let week = try d.call("week")
            let days = week["days"]?.arrayValue ?? []
            #expect(days.count == 7)
            #expect(days.first?["weekday"]?.stringValue == "monday")
            #expect(days.count == 7 && days[other]["planned"]?.stringValue == "Exercise")
            let today = days.first { $0["today"]?.boolValue == true }
            #expect(today?["planned"]?.stringValue == "Study")
            let status = try d.call("start")
            #expect(status["task"]?.stringValue == "Study", "start without a task takes today's plan")
            _ = try d.call("stop")
            _ = try d.call("plan_clear", [("day", .string("today"))])
            let cleared = try d.call("week")["days"]?.arrayValue?.first { $0["today"]?.boolValue == true }
            #expect(cleared?["planned"]?.isNull == true)
            #expect(try d.failure("plan_set", [("day", .string("someday")), ("task", .string("Work"))]).code == "invalid_date")
            #expect(try d.failure("plan_set", [("day", .string("today")), ("task", .string("Nope"))]).code == "unknown_task")
        }
    }

    @Test("a range whose since is not before its until is refused (history, export), not answered with nothing")
    func invertedRangeIsAnError() throws {
        let d = try InProcessDaemon()
        defer { d.stop() }
        let range: [(String, JSON)] = [("since", .string("tomorrow")), ("until", .string("yesterday"))]
        let history = try d.failure("history", range)
        #expect(history.code == "inverted_range", "\(history)")
        #expect(history.message.contains("\"since\" (tomorrow") && history.message.contains("\"until\" (yesterday"), "\(history.message)")
        #expect(try d.failure("export", range + [("format", .string("csv"))]).code == "inverted_range")
        #expect(try d.failure("history", [("since", .string("12:00")), ("until", .string("11:00"))]).code == "inverted_range")
        // A range of one day, given as that day twice, holds the day.
        #expect(try d.call("history", [("since", .string("today")), ("until", .string("today"))])["sessions"] != nil)
    }

    @Test("history edit --start 10:00 is of the session's own day; 9:00 and now are times; an impossible day says why")
    func timesOfASession() throws {
        try withTimeZone("UTC") {
            let d = try InProcessDaemon()
            defer { d.stop() }
            let added = try d.call(
                "history_add", [("task", .string("Study")), ("start", .string("yesterday 9:00")), ("end", .string("yesterday 9:25"))])
            let day = String(added["start"]?.stringValue?.prefix(10) ?? "")
            #expect(added["start"]?.stringValue?.hasSuffix("T09:00:00+00:00") == true, "\(added.serialized)")
            let edited = try d.call("history_edit", [("id", added["id"] ?? .null), ("start", .string("9:10"))])
            #expect(edited["start"]?.stringValue == "\(day)T09:10:00+00:00", "\(edited.serialized)")
            #expect(edited["end"]?.stringValue == "\(day)T09:25:00+00:00")
            let month = try d.failure(
                "history_add", [("task", .string("Study")), ("start", .string("2026-13-01 09:00")), ("end", .string("now"))])
            #expect(month.code == "invalid_date" && month.message.contains("there is no month 13"), "\(month)")
            let november = try d.failure("stats", [("period", .string("day")), ("date", .string("2026-11-31"))])
            #expect(november.message.contains("November has 30 days"), "\(november)")
        }
    }

    @Test("a mistyped value gets a did you mean: stats weak, plan set mondy, export --format CSV")
    func didYouMeanForValues() throws {
        let d = try InProcessDaemon()
        defer { d.stop() }
        let period = try d.failure("stats", [("period", .string("weak"))])
        #expect(period.code == "invalid_period" && period.message.contains("Did you mean \"week\"?"), "\(period)")
        let format = try d.failure("export", [("format", .string("CSV"))])
        #expect(format.code == "unknown_format" && format.message.contains("Did you mean \"csv\"?"), "\(format)")
        let day = try d.failure("plan_set", [("day", .string("mondy")), ("task", .string("Study"))])
        #expect(day.code == "invalid_date" && day.message.contains("Did you mean \"monday\"?"), "\(day)")
        let date = try d.failure("stats", [("period", .string("day")), ("date", .string("yesterdy"))])
        #expect(date.message.contains("Did you mean \"yesterday\"?"), "\(date)")
    }

    @Test func badManualSessionsAreRefusedAndNothingIsWritten() throws {
        try withTimeZone("UTC") {
            let d = try InProcessDaemon()
            defer { d.stop() }
            try d.addSession("Work", "2025-05-01 09:00", "2025-05-01 09:25")
            let id = try d.call("history")["sessions"]?.arrayValue?.first?["id"]?.intValue ?? -1
            let overlap = try d.failure(
                "history_add", [("task", .string("Study")), ("start", .string("2025-05-01 09:20")), ("end", .string("2025-05-01 09:45"))])
            #expect(overlap.code == "overlapping_session")
            #expect(overlap.message.contains("session \(id) (Work"), "\(overlap.message)")
            let backwards = try d.failure(
                "history_add", [("task", .string("Work")), ("start", .string("2025-05-02 10:00")), ("end", .string("2025-05-02 09:00"))])
            #expect(backwards.code == "invalid_session")
            #expect(
                try d.failure(
                    "history_add",
                    [("task", .string("Work")), ("start", .string("2025-02-30 10:00")), ("end", .string("2025-02-30 11:00"))]
                ).code == "invalid_date")
            #expect(
                try d.failure(
                    "history_add",
                    [("task", .string("Nope")), ("start", .string("2025-05-02 10:00")), ("end", .string("2025-05-02 11:00"))]
                ).code == "unknown_task")
            #expect(try d.failure("stats", [("period", .string("decade"))]).code == "invalid_period")
            #expect(try d.failure("export", [("format", .string("xml"))]).code == "unknown_format")
            #expect(try d.call("history")["sessions"]?.arrayValue?.count == 1)

            let edited = try d.call("history_edit", [("id", .int(id)), ("task", .string("Study"))])
            #expect(edited["task"]?.stringValue == "Study")
            _ = try d.call("history_remove", [("id", .int(id))])
            #expect(try d.failure("history_remove", [("id", .int(id))]).code == "unknown_session")
        }
    }

    @Test func importRejectsTheWholeFileOnOneBadLine() throws {
        try withTimeZone("UTC") {
            let d = try InProcessDaemon()
            defer { d.stop() }
            let good =
                #"{"task":"Work","start":"2025-05-01T09:00:00Z","end":"2025-05-01T09:25:00+00:00","planned_seconds":1500,"focused_seconds":1500,"pauses":0,"outcome":"completed"}"#
            let backwards =
                #"{"task":"Work","start":"2025-05-01T11:00:00Z","end":"2025-05-01T10:00:00Z","planned_seconds":1500,"focused_seconds":1500,"pauses":0,"outcome":"completed"}"#
            let first = try d.call("import", [("content", .string(good + "\n\n")), ("more", .bool(true))])
            let importID = try #require(first["import_id"]?.intValue)
            let bad = try d.failure("import", [("content", .string(good + "\n" + backwards + "\n")), ("import_id", .int(Int(importID)))])
            #expect(bad.code == "invalid_import")
            #expect(bad.message.contains("\nline 4: "), "lines count across chunks: \(bad.message)")
            #expect(!bad.message.contains("line 3"), "line 3 repeats line 1: skipped, not refused: \(bad.message)")
            #expect(try d.call("history")["sessions"]?.arrayValue?.isEmpty == true)
            #expect(try d.failure("import", [("content", .string("{\"task\":\"Work\"}\n"))]).message.contains("line 1"))
            let done = try d.call("import", [("content", .string(good + "\n"))])
            #expect(done["imported"]?.intValue == 1)
        }
    }

    @Test func removingATaskTakesItsStatisticsWithIt() throws {
        try withTimeZone("UTC") {
            let d = try InProcessDaemon()
            defer { d.stop() }
            _ = try d.call("task_add", [("name", .string("Side")), ("goal", .int(1))])
            try d.addSession("Side", "2025-05-01 09:00", "2025-05-01 09:25")
            try d.addSession("Work", "2025-05-01 10:00", "2025-05-01 10:25")
            var all = try d.call("stats", [("period", .string("all"))])
            #expect(all["completed"]?.intValue == 2)
            #expect(all["from"]?.stringValue == "2025-05-01")
            _ = try d.call("task_remove", [("task", .string("Side")), ("confirm", .bool(true))])
            all = try d.call("stats", [("period", .string("all"))])
            #expect(all["completed"]?.intValue == 1)
            #expect(all["tasks"]?.arrayValue?.contains { $0["task"]?.stringValue == "Side" } == false)
        }
    }
}
