// The built-in Timewarrior mirror (issue 31) with Debian's real `timew` in a private database and
// HOME, the daemon on simulated clocks: whatever door changes the history, timew ends up holding
// exactly diligence's focus segments, also after a time without timew and a restart.

import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Foundation
import Testing

extension EndToEnd {
    @Suite("Timewarrior mirror, with the real timew")
    struct TimewarriorMirror {
        /// A daemon on simulated clocks whose only PATH entry holds `timew` as a link the test
        /// removes and puts back, and the private database it writes through it.
        final class Rig {
            let d: DaemonUnderTest
            let clock: SimulatedClock
            let bin: String
            let database: String
            let timew: String

            init() throws {
                timew = try requireProgram("timewarrior", "/usr/bin/timew")
                d = try DaemonUnderTest(launch: false)
                clock = try SimulatedClock(directory: d.root)
                bin = d.root + "/bin"
                database = d.root + "/timew"
                try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
                d.daemonEnvironment = try clock.environment.merging(["PATH": bin]) { $1 }
                d.extraEnvironment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(d.root)/no-system-bus"
                try FileManager.default.createDirectory(atPath: d.configHome + "/diligence", withIntermediateDirectories: true)
                try "[timer]\nsuspend = continue\nmin_session = 60s\n[timewarrior]\nenabled = yes\ndata = \(database)\ntags = pomodoro\n"
                    .write(toFile: d.configHome + "/diligence/diligenced.conf", atomically: true, encoding: .utf8)
                try present(true)
            }

            /// Puts `timew` on the daemon's PATH, or takes it away.
            func present(_ yes: Bool) throws {
                unlink(bin + "/timew")
                if yes { try FileManager.default.createSymbolicLink(atPath: bin + "/timew", withDestinationPath: timew) }
            }

            /// `timew ARGS :yes` on the private database, as the user would run it.
            @discardableResult
            func run(_ arguments: [String]) throws -> ProgramRun {
                let environment = ["TIMEWARRIORDB": database, "HOME": d.home, "TZ": "UTC", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
                let run = try runProgram([timew] + arguments + [":yes"], environment: environment, directory: d.root)
                guard run.succeeded else { throw HarnessError("timew failed: \(run)") }
                return run
            }

            /// `timew export` as [start, end, sorted tags] lines, sorted.
            func exported() throws -> [String] {
                let json = try JSON.parse(try run(["export"]).stdout)
                return (json.arrayValue ?? []).map { i in
                    let tags = (i["tags"]?.arrayValue ?? []).compactMap(\.stringValue).sorted()
                    return "\(i["start"]?.stringValue ?? "?") \(i["end"]?.stringValue ?? "-") \(tags.joined(separator: "|"))"
                }.sorted()
            }

            /// What timew must hold: every session's segments from the database (start to the
            /// second, its whole seconds), tagged task, diligence:<uuid>, pomodoro; plus the user's own.
            func expected(own: [String]) throws -> [String] {
                var lines = own
                let rows = try d.sqlite(
                    "SELECT s.uuid, t.name, coalesce(s.segments, json_array(json_array(s.start, s.focused_seconds))) FROM sessions s JOIN tasks t ON t.id = s.task_id"
                )
                for row in rows {
                    let tags = [row[1], "diligence:" + row[0], "pomodoro"].sorted().joined(separator: "|")
                    for segment in try JSON.parse(row[2]).arrayValue ?? [] where segment.arrayValue?.last?.intValue != 0 {
                        guard let start = segment.arrayValue?.first?.doubleValue, let seconds = segment.arrayValue?.last?.intValue else {
                            throw HarnessError("a segment that is not [start, seconds]: \(row[2])")
                        }
                        let from = start.rounded()
                        lines.append("\(Self.compact(from)) \(Self.compact(from + Double(seconds))) \(tags)")
                    }
                }
                return lines.sorted()
            }

            static func compact(_ wall: Double) -> String {
                let f = DateFormatter()
                f.locale = Locale(identifier: "en_US_POSIX")
                f.timeZone = TimeZone(identifier: "UTC")
                f.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
                return f.string(from: Date(timeIntervalSince1970: wall))
            }

            /// Waits until timew holds `expected` (the outbox is worked off the daemon's queue).
            func waitMirrored(own: [String], timeout: Double = 20) throws {
                try waitUntil("timew holds diligence's segments", timeout: timeout, diagnostics: d.diagnostics) {
                    try exported() == expected(own: own)
                }
            }

            /// `timew summary DAY - DAY+1 TAG`'s total, in seconds.
            func summarySeconds(day: String, next: String, tag: String) throws -> Int {
                let text = try run(["summary", day, "-", next, tag]).stdout
                if text.contains("No filtered data") { return 0 }
                let lines = text.split(separator: "\n").map { String($0).trimmingWhitespace() }
                guard let last = lines.last(where: { !$0.isEmpty }) else { return 0 }
                let parts = last.split(separator: ":").compactMap { Int($0) }
                guard parts.count == 3 else { return -1 }
                return parts[0] * 3600 + parts[1] * 60 + parts[2]
            }
        }

        @Test("timer, history add/edit/remove, min_session, timew missing and a restart: timew export equals the segments")
        func mirrorStaysExact() throws {
            let rig = try Rig()
            let d = rig.d
            try rig.run(["track", "20250602T080000Z", "-", "20250602T083000Z", "mine"])
            let own = ["20250602T080000Z 20250602T083000Z mine"]
            try d.start()
            try d.addTask("Deep work")

            // Timer work with a pause in it; a suspend while paused is no focus.
            try d.call("start", [("task", .string("Study"))])
            try rig.clock.suspend(300, pid: d.process!.pid)
            try d.call("pause")
            try rig.clock.suspend(120, pid: d.process!.pid)
            try d.call("resume")
            try rig.clock.suspend(1300, pid: d.process!.pid)
            try waitUntil("the work is recorded", timeout: 5, diagnostics: d.diagnostics) {
                try d.sqlite("SELECT count(*) FROM sessions").first?.first == "1"
            }
            _ = try? d.call("stop")
            // Under min_session: not recorded, so no interval.
            try d.call("start", [("task", .string("Deep work"))])
            try rig.clock.suspend(30, pid: d.process!.pid)
            try d.call("stop")

            try d.addSession("Study", "2025-06-02T09:00:00Z", "2025-06-02T09:25:00Z")
            let moved = try d.call(
                "history_add",
                [("task", .string("Deep work")), ("start", .string("2025-06-02T10:00:00Z")), ("end", .string("2025-06-02T10:50:00Z"))])
            try d.call("history_edit", [("id", moved["id"]!), ("task", .string("Study")), ("start", .string("2025-06-02T10:10:00Z"))])
            let gone = try d.call(
                "history_add",
                [("task", .string("Study")), ("start", .string("2025-06-02T13:00:00Z")), ("end", .string("2025-06-02T13:25:00Z"))])
            try d.call("history_remove", [("id", gone["id"]!)])
            try rig.waitMirrored(own: own)
            let segments = try d.sqlite("SELECT segments FROM sessions WHERE source = 'timer'").first?.first ?? ""
            #expect((try JSON.parse(segments).arrayValue ?? []).count == 2, "the paused session has two segments: \(segments)")

            // timew gone for a while, and a restart meanwhile: the outbox keeps the changes.
            try rig.present(false)
            try d.addSession("Deep work", "2025-06-03T09:00:00Z", "2025-06-03T09:50:00Z")
            try d.call("history_edit", [("id", moved["id"]!), ("end", .string("2025-06-02T10:40:00Z"))])
            sleepFor(1)
            #expect(try rig.exported() != rig.expected(own: own), "timew was missing, yet it holds the changes")
            let missing = try d.call("doctor")["checks"]?.arrayValue?.first { $0["name"]?.stringValue == "timewarrior" }
            #expect(missing?["state"]?.stringValue == "problem", "\(missing?.serialized ?? "no timewarrior check")")
            #expect(missing?["detail"]?.stringValue?.contains("2 session(s) wait") == true, "\(missing?.serialized ?? "")")
            try d.restart()
            sleepFor(0.5)
            try rig.present(true)
            try rig.waitMirrored(own: own, timeout: 30)
            for (index, path) in d.stderrPaths.enumerated() {
                let failures = readTextFile(path).components(separatedBy: "timewarrior_failed").count - 1
                #expect(failures == 1, "launch \(index + 1) logged \(failures) failures, not one: \(tail(readTextFile(path)))")
            }

            let fine = try d.call("doctor")["checks"]?.arrayValue?.first { $0["name"]?.stringValue == "timewarrior" }
            #expect(fine?["state"]?.stringValue == "ok", "\(fine?.serialized ?? "no timewarrior check")")
            // The timer's two segments, three history sessions (one removed), the user's own.
            let mirrored = try rig.exported()
            #expect(mirrored.count == 6, "\(mirrored)")
            #expect(try rig.summarySeconds(day: "2025-06-02", next: "2025-06-03", tag: "Study") == 1500 + 1800)

            // Totals per task and day: timew summary equals stats.
            let timerStart = Double(try d.sqlite("SELECT start FROM sessions WHERE source = 'timer'").first?.first ?? "") ?? 0
            let today = String(Rig.compact(timerStart).prefix(8))
            let tomorrow = String(Rig.compact(timerStart + 86400).prefix(8))
            func dashed(_ compact: String) -> String {
                let c = Array(compact)
                return String(c[0..<4]) + "-" + String(c[4..<6]) + "-" + String(c[6..<8])
            }
            for (day, next) in [("2025-06-02", "2025-06-03"), ("2025-06-03", "2025-06-04"), (dashed(today), dashed(tomorrow))] {
                for task in ["Study", "Deep work"] {
                    let stats = try d.call("stats", [("period", .string("day")), ("date", .string(day)), ("task", .string(task))])
                    let focused = Int(stats["focused_seconds"]?.intValue ?? -1)
                    #expect(try rig.summarySeconds(day: day, next: next, tag: task) == focused, "\(task) on \(day)")
                }
            }

            // Twice: nothing to change; the user's interval untouched.
            for _ in 0..<2 {
                let sync = try d.ctl("timewarrior", "sync")
                #expect(sync.exitCode == 0 && sync.stdout.contains("holds the history already"), "\(sync)")
            }
            #expect(try rig.exported().contains(own[0]))
        }

        @Test("timewarrior sync repairs by hand-made drift (dry run first), and refuses what is not timew's JSON")
        func syncRepairs() throws {
            let rig = try Rig()
            let d = rig.d
            try d.start()
            try d.addSession("Study", "2025-06-02T09:00:00Z", "2025-06-02T09:25:00Z")
            try d.addSession("Study", "2025-06-02T10:00:00Z", "2025-06-02T10:25:00Z")
            try rig.waitMirrored(own: [])
            // Drift: one interval deleted by hand, a stray one of a session that does not exist, one of the user's.
            try rig.run(["delete", "@1"])
            try rig.run(["track", "20250601T090000Z", "-", "20250601T091000Z", "Study", "diligence:0b7e9a52-4c1d-4f0e-9a3b-5d6c7e8f9012"])
            try rig.run(["track", "20250601T100000Z", "-", "20250601T101000Z", "mine", "Study"])
            let own = ["20250601T100000Z 20250601T101000Z Study|mine"]
            let before = try rig.exported()
            let dry = try d.call("timewarrior_sync", [("dry_run", .bool(true))])
            #expect(dry["tracked"]?.arrayValue?.count == 1 && dry["deleted"]?.arrayValue?.count == 1, "\(dry.serialized)")
            #expect(try rig.exported() == before, "a dry run changed timew")
            let shown = try d.ctl("timewarrior", "sync")
            #expect(
                shown.stdout.contains("tracked 2025-06-02T10:00:00") && shown.stdout.contains("deleted 2025-06-01T09:00:00"), "\(shown)")
            #expect(try rig.exported() == rig.expected(own: own))
            #expect(try rig.exported().count == 3)
            let again = try d.call("timewarrior_sync")
            #expect(again["tracked"]?.arrayValue?.isEmpty == true && again["deleted"]?.arrayValue?.isEmpty == true, "\(again.serialized)")

            // A timew whose export is not JSON: a clear error, and nothing deleted.
            unlink(rig.bin + "/timew")
            try "#!/bin/sh\necho 'Create new database? (yes/no)'\n".write(toFile: rig.bin + "/timew", atomically: true, encoding: .utf8)
            chmod(rig.bin + "/timew", 0o755)
            let refused = try d.failure("timewarrior_sync")
            #expect(refused.message.contains("not its JSON"), "\(refused)")
            try rig.present(true)
            #expect(try rig.exported() == rig.expected(own: own))
        }
    }
}
