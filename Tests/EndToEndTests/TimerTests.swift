import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EndToEnd {
    @Suite("Timer: phases on time, sd_notify STATUS, autostart, controls")
    struct Timer {
        /// Sessions in the database, oldest first: task name, planned, focused, pauses, outcome.
        static func sessions(_ d: DaemonUnderTest) throws -> [[String]] {
            try d.sqlite(
                """
                SELECT t.name, s.planned_seconds, s.focused_seconds, s.pauses, s.outcome
                FROM sessions s JOIN tasks t ON t.id = s.task_id ORDER BY s.start, s.rowid
                """)
        }

        @Test("work 2 s → short break 1 s → work → long break, each within 300 ms of its absolute deadline; sessions recorded as completed")
        func phasesOnTime() throws {
            let d = try DaemonUnderTest()
            try d.addTask(
                "Fast",
                [
                    ("work", .int(2)), ("short_break", .string("1s")), ("long_break", .int(2)),
                    ("long_break_every", .int(2)), ("autostart", .string("all")),
                ])
            let watcher = try d.watch()
            let started = try d.call("start", [("task", .string("Fast"))])
            let t0 = monotonicNow() // deadlines count from the start response
            #expect(started["state"]?.stringValue == "running", "start: \(started.serialized)")
            #expect(started["phase"]?.stringValue == "work", "start: \(started.serialized)")
            #expect(started["task"]?.stringValue == "Fast", "start: \(started.serialized)")
            #expect(started["duration_seconds"]?.intValue == 2, "start: \(started.serialized)")

            // Each phase change must be visible on the watch stream within 300 ms of
            // t0 + the planned durations so far (2, 2+1, 2+1+2).
            let plan: [(phase: String, round: Int64, at: Double)] = [
                ("short_break", 1, 2), ("work", 2, 3), ("long_break", 2, 5),
            ]
            var cursor = 0
            for step in plan {
                let wait = t0 + step.at + 3 - monotonicNow()
                guard
                    let (index, event) = watcher.waitFor(
                        after: cursor, timeout: wait,
                        where: {
                            $0.state == "running" && $0.phase == step.phase
                        })
                else {
                    Issue.record(
                        "\(step.phase) (round \(step.round)) never started running; watch stream:\n\(watcher.transcript)\n\(d.diagnostics)")
                    return
                }
                cursor = index + 1
                let late = event.time - (t0 + step.at)
                #expect(
                    abs(late) <= 0.3,
                    "\(step.phase) became visible \(Int(late * 1000)) ms from its deadline (t0 + \(step.at) s); allowed ±300 ms\n\(watcher.transcript)"
                )
                #expect(
                    event.status?["round"]?.intValue == step.round,
                    "\(step.phase) should be in round \(step.round): \(event.json.serialized)")
            }

            // Both work phases were recorded as completed sessions (watch, then database).
            // (session_recorded may come just before or just after the next phase_started.)
            _ = watcher.waitForCount(of: "session_recorded", count: 2, timeout: 1)
            let recorded = watcher.events.filter { $0.name == "session_recorded" }
            #expect(recorded.count == 2, "expected 2 session_recorded events by now\n\(watcher.transcript)")
            let session = try #require(recorded.first?.json["session"], "\(watcher.transcript)")
            #expect(session["task"]?.stringValue == "Fast", "\(session.serialized)")
            #expect(session["outcome"]?.stringValue == "completed", "\(session.serialized)")
            #expect(session["planned_seconds"]?.intValue == 2, "\(session.serialized)")
            #expect(session["focused_seconds"]?.intValue == 2, "\(session.serialized)")
            #expect(session["pauses"]?.intValue == 0, "\(session.serialized)")
            try d.call("stop") // gives up the long break: no work session is involved
            let rows = try Self.sessions(d)
            #expect(rows.count == 2, "sessions in the database: \(rows)\n\(d.diagnostics)")
            for row in rows {
                try #require(row.count == 5, "a row of five columns: \(row)")
                #expect(
                    row[0] == "Fast" && number(row[1]) == 2 && number(row[2]) == 2 && number(row[3]) == 0 && row[4] == "completed",
                    "expected Fast|2|2|0|completed, got \(row.joined(separator: "|"))")
            }
            let status = try d.status()
            #expect(status["today_completed"]?.intValue == 2, "today_completed: \(status.serialized)")
        }

        @Test("sd_notify STATUS= follows the phase: Focus, Break, Paused, Idle, with the task name")
        func notifyStatusFollowsPhase() throws {
            let d = try DaemonUnderTest()
            try d.addTask("Writing", [("work", .int(1)), ("short_break", .int(30)), ("autostart", .string("all"))])
            let c0 = d.notify.count
            try d.call("start", [("task", .string("Writing"))])
            let focus = d.notify.waitForStatus(containing: ["Focus", "Writing"], after: c0, timeout: 3)
            #expect(focus != nil, "no STATUS= with Focus and Writing after start; saw \(d.notify.statusLines)")
            let afterFocus = (focus?.message.index ?? c0) + 1
            let rest = d.notify.waitForStatus(containing: ["Break", "Writing"], after: afterFocus, timeout: 4)
            #expect(rest != nil, "no STATUS= with Break and Writing once the 1 s work phase ended; saw \(d.notify.statusLines)")

            let c1 = d.notify.count
            try d.call("pause")
            #expect(
                d.notify.waitForStatus(containing: ["Paused"], after: c1, timeout: 3) != nil,
                "no STATUS= with Paused after pause; saw \(d.notify.statusLines)")

            let c2 = d.notify.count
            try d.call("stop")
            #expect(
                d.notify.waitForStatus(containing: ["Idle"], after: c2, timeout: 3) != nil,
                "no STATUS= with Idle after stop; saw \(d.notify.statusLines)")
        }

        @Test("autostart none: after work the short break waits as pending until `diligencectl start`")
        func autostartNoneWaits() throws {
            let d = try DaemonUnderTest()
            try d.addTask("Manual", [("work", .int(1)), ("short_break", .int(60)), ("autostart", .string("none"))])
            let watcher = try d.watch()
            let start = try d.ctl("start", "Manual")
            #expect(start.exitCode == 0, "\(start)\n\(d.diagnostics)")
            let c0 = d.notify.count
            let pending = watcher.waitFor(timeout: 4) { $0.state == "pending" }
            #expect(pending != nil, "never became pending after the 1 s work phase\n\(watcher.transcript)\n\(d.diagnostics)")

            sleepFor(0.5) // and it stays pending: nothing starts by itself
            let status = try d.ctlStatus()
            #expect(status["state"]?.stringValue == "pending", "status: \(status.serialized)")
            #expect(status["phase"]?.stringValue == "short_break", "status: \(status.serialized)")
            #expect(status["task"]?.stringValue == "Manual", "status: \(status.serialized)")
            // STATUS= says so too (e.g. "Ready: Break · Manual"): the task name, no longer Focus.
            #expect(
                d.notify.waitFor(after: c0, timeout: 1) { $0.hasPrefix("STATUS=") && $0.contains("Manual") && !$0.contains("Focus") }
                    != nil,
                "STATUS= should show the pending break of Manual; saw \(d.notify.statusLines)")

            let go = try d.ctl("start")
            #expect(go.exitCode == 0, "\(go)\n\(d.diagnostics)")
            let running = try d.ctlStatus()
            #expect(running["state"]?.stringValue == "running", "after start: \(running.serialized)")
            #expect(running["phase"]?.stringValue == "short_break", "after start: \(running.serialized)")
            let remaining = running["remaining_seconds"]?.intValue ?? -1
            #expect((58...60).contains(remaining), "a fresh 60 s break should have 58…60 s left: \(running.serialized)")
        }

        @Test("pause, resume, toggle, extend, skip and stop through diligencectl")
        func controls() throws {
            let d = try DaemonUnderTest()
            try d.addTask("Long", [("work", .int(60)), ("short_break", .int(60)), ("autostart", .string("none"))])
            // min_session = 0: the seconds of work skipped and stopped here are recorded.
            try FileManager.default.createDirectory(atPath: d.configHome + "/diligence", withIntermediateDirectories: true)
            try "[timer]\nmin_session = 0\n".write(toFile: d.configHome + "/diligence/diligenced.conf", atomically: true, encoding: .utf8)
            #expect(try d.ctl("reload").exitCode == 0)
            func ok(_ args: String...) throws -> JSON {
                let r = try d.ctl(arguments: args)
                #expect(r.exitCode == 0, "\(r)\n\(d.diagnostics)")
                return try d.ctlStatus()
            }
            /// `args` exit 1, and the daemon refuses their `request` with `code`: what diligencectl
            /// says on stderr is the daemon's message for that code.
            func refused(_ code: String, _ request: String, _ args: String...) throws {
                let r = try d.ctl(arguments: args)
                #expect(r.exitCode == 1, "expected exit 1 (\(code)): \(r)")
                let raw = try d.request(request)
                #expect(raw.errorCode == code, "\(request) → \(raw.serialized)")
                let message = try #require(raw["error"]?["message"]?.stringValue, "\(raw.serialized)")
                #expect(r.stderr.contains(message), "diligencectl should say the daemon's \(code) message: \(r)")
            }

            var s = try ok("start", "Long")
            #expect(s["state"]?.stringValue == "running" && s["phase"]?.stringValue == "work", "\(s.serialized)")
            try refused("already_running", #"{"command":"start","task":"Long"}"#, "start", "Long")
            try refused("not_paused", #"{"command":"resume"}"#, "resume")

            s = try ok("pause")
            #expect(s["state"]?.stringValue == "paused", "\(s.serialized)")
            #expect(s["pauses"]?.intValue == 1, "\(s.serialized)")
            let frozen = try #require(s["remaining_seconds"]?.intValue, "a paused phase has remaining_seconds: \(s.serialized)")
            sleepFor(1.2)
            s = try d.ctlStatus()
            #expect(s["remaining_seconds"]?.intValue == frozen, "remaining must not move while paused: \(frozen) → \(s.serialized)")
            #expect(s["ends_at"]?.isNull == true, "ends_at is null while paused: \(s.serialized)")

            s = try ok("resume")
            #expect(s["state"]?.stringValue == "running", "\(s.serialized)")
            s = try ok("toggle")
            #expect(s["state"]?.stringValue == "paused", "toggle should pause: \(s.serialized)")
            s = try ok("toggle")
            #expect(s["state"]?.stringValue == "running", "toggle should resume: \(s.serialized)")

            s = try ok("extend", "30s")
            #expect(s["duration_seconds"]?.intValue == 90, "60 s + 30 s: \(s.serialized)")
            s = try ok("extend")
            #expect(s["duration_seconds"]?.intValue == 390, "90 s + the default 5 m: \(s.serialized)")
            let typo = try d.ctl("extend", "5x")
            #expect(typo.exitCode == 2 && typo.stderr.contains("5x"), "a usage error names what was typed: \(typo)")

            s = try ok("skip")
            #expect(
                s["state"]?.stringValue == "pending" && s["phase"]?.stringValue == "short_break",
                "skip of work with autostart none: pending short break: \(s.serialized)")
            s = try ok("start")
            #expect(s["state"]?.stringValue == "running" && s["phase"]?.stringValue == "short_break", "\(s.serialized)")
            s = try ok("stop")
            #expect(s["state"]?.stringValue == "idle", "\(s.serialized)")
            try refused("not_running", #"{"command":"stop"}"#, "stop")
            try refused("not_running", #"{"command":"pause"}"#, "pause")
            try refused("not_running", #"{"command":"skip"}"#, "skip")

            // toggle from idle starts the last task used; stop gives the work up.
            s = try ok("toggle")
            #expect(
                s["state"]?.stringValue == "running" && s["task"]?.stringValue == "Long" && s["phase"]?.stringValue == "work",
                "toggle from idle starts Long: \(s.serialized)")
            s = try ok("stop")
            #expect(s["state"]?.stringValue == "idle", "\(s.serialized)")

            let rows = try Self.sessions(d)
            #expect(rows.map { $0.last ?? "" } == ["skipped", "abandoned"], "session outcomes: \(rows)")
            let skipped = try #require(rows.first)
            #expect(skipped.count == 5 && number(skipped[3]) == 2, "the skipped work was paused twice (pause, toggle): \(skipped)")
            #expect(try d.status()["today_completed"]?.intValue == 0, "skipped and abandoned work are not pomodoros")
        }

        @Test("strict focus mode refuses pause during work (exit 1, code focus_mode)")
        func focusModeRefusesPause() throws {
            let d = try DaemonUnderTest()
            let add = try d.ctl("task", "add", "Strict", "--work", "60s", "--focus-mode", "on")
            #expect(add.exitCode == 0, "\(add)\n\(d.diagnostics)")
            let start = try d.ctl("start", "Strict")
            #expect(start.exitCode == 0, "\(start)")
            let pause = try d.ctl("pause")
            #expect(pause.exitCode == 1, "pause in focus mode should exit 1: \(pause)")
            let raw = try d.request(#"{"command":"pause","id":"p"}"#)
            #expect(raw.errorCode == "focus_mode" && raw["id"] == .string("p"), "\(raw.serialized)")
            let s = try d.ctlStatus()
            #expect(s["state"]?.stringValue == "running", "still running: \(s.serialized)")
            #expect(s["focus_mode"]?.boolValue == true, "\(s.serialized)")
        }
    }
}
