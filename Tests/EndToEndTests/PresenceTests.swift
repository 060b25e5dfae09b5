// Presence through the protocol: `diligencectl away` / `back`, as a swayidle or xss-lock line
// runs them — the very lines of contrib/swayidle and contrib/xss-lock (docs/presence.md). The daemon's own sources (logind, the screen saver) are in
// PresenceSourceTests.swift.

import DiligenceProtocol
import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EndToEnd {
    @Suite("Presence: away and back through the protocol")
    struct PresenceCommands {
        /// A daemon with `presence` lines under [presence] and a one-hour work task `Deep`.
        static func daemon(_ presence: String, focus: Bool = false, hooks: String = "") throws -> DaemonUnderTest {
            let d = try DaemonUnderTest(launch: false)
            try d.writeConfig("[timer]\nmin_session = 0\n[presence]\n\(presence)\n\(hooks)")
            try d.start()
            try d.addTask("Deep", [("work", .string("1h")), ("focus_mode", .bool(focus))])
            return d
        }

        func remaining(_ d: DaemonUnderTest) throws -> Int64 { try d.status()["remaining_seconds"]?.intValue ?? -1 }

        @Test("pause: away pauses the work, back resumes it with the time it had left; STATUS= says since when")
        func pauseAndResume() throws {
            let d = try Self.daemon("on_away = pause")
            let watcher = try d.watch()
            try d.call("start", [("task", .string("Deep"))])
            sleepFor(1.2)
            let away = try d.ctl("away")
            #expect(away.exitCode == 0, "\(away)")
            let status = try d.status()
            #expect(status["presence"]?.stringValue == "away")
            #expect(status["state"]?.stringValue == "paused")
            #expect(status["away_since"]?.stringValue != nil)
            let left = try remaining(d)
            #expect(d.notify.waitForStatus(containing: ["away since"], timeout: 3) != nil, "\(d.diagnostics)")
            #expect(try d.ctl("status").stdout.contains("away since"))
            sleepFor(2.2)
            #expect(try remaining(d) == left, "the time away was counted")
            #expect(try d.ctl("back").exitCode == 0)
            #expect(try d.status()["state"]?.stringValue == "running")
            #expect(try d.status()["presence"]?.stringValue == "here")
            #expect(abs(try remaining(d) - left) <= 1)
            let back = watcher.waitFor(timeout: 3) { $0.name == "back" }?.event
            #expect((back?.json["away_seconds"]?.intValue ?? 0) >= 2, "\(watcher.transcript)")
            #expect(back?.json["offer"]?.boolValue == false)
            #expect(watcher.events.contains { $0.name == "away" })
            try d.call("stop")
            let rows = try d.sqlite("SELECT outcome, away_seconds, reason IS NULL FROM sessions")
            #expect(rows.count == 1 && rows[0][0] == "abandoned" && (Int(rows[0][1]) ?? 0) >= 2 && rows[0][2] == "1", "\(rows)")
            // Reports show the time away during work.
            #expect((try d.call("stats")["away_seconds"]?.intValue ?? 0) >= 2)
            let text = try d.ctl("stats", "--plain")
            #expect(text.stdout.contains("during work"), "\(text)")
        }

        @Test("continue: the time away counts; discard-away takes it back out")
        func continueThenDiscard() throws {
            let d = try Self.daemon("on_away = continue")
            try d.call("start", [("task", .string("Deep"))])
            let before = try remaining(d)
            try d.call("away")
            sleepFor(2.5)
            #expect(try d.status()["state"]?.stringValue == "running")
            let answer = try d.call("back")
            #expect(answer["away_offered"]?.boolValue == true, "\(answer)")
            let counted = try remaining(d)
            #expect(before - counted >= 2)
            let discard = try d.ctl("discard-away")
            #expect(discard.exitCode == 0, "\(discard)")
            #expect(abs(try remaining(d) - before) <= 1)
            let again = try d.ctl("discard-away")
            #expect(again.exitCode == 1 && again.stderr.contains("No time away"), "\(again)")
        }

        @Test("abandon: leaving gives the work up, recorded as abandoned with reason left")
        func abandon() throws {
            let d = try Self.daemon("on_away = abandon")
            try d.call("start", [("task", .string("Deep"))])
            sleepFor(1.1)
            try d.call("away")
            #expect(try d.status()["state"]?.stringValue == "idle")
            let rows = try d.sqlite("SELECT outcome, reason FROM sessions")
            #expect(rows == [["abandoned", "left"]], "\(rows)")
        }

        @Test("strict focus: the work fails after strict_grace away, not before")
        func strictGrace() throws {
            let d = try Self.daemon("strict_grace = 2s", focus: true)
            try d.call("start", [("task", .string("Deep"))])
            sleepFor(1.1)
            try d.call("away")
            sleepFor(1.0)
            #expect(try d.status()["state"]?.stringValue == "running", "failed before the grace")
            let deadline = monotonicNow() + 5
            while try d.status()["state"]?.stringValue != "idle" && monotonicNow() < deadline { sleepFor(0.1) }
            #expect(try d.status()["state"]?.stringValue == "idle", "\(d.diagnostics)")
            let rows = try d.sqlite("SELECT outcome, reason FROM sessions")
            #expect(rows == [["abandoned", "left"]], "\(rows)")
        }

        @Test("an absence survives a restart: still paused and away, and back resumes the work")
        func absenceAcrossARestart() throws {
            let d = try Self.daemon("on_away = pause")
            try d.call("start", [("task", .string("Deep"))])
            sleepFor(1.1)
            try d.call("away")
            let left = try remaining(d)
            try d.restart()
            let status = try d.status()
            #expect(status["presence"]?.stringValue == "away" && status["state"]?.stringValue == "paused", "\(status)")
            #expect(status["away_since"]?.stringValue != nil)
            try d.call("back")
            #expect(try d.status()["state"]?.stringValue == "running")
            #expect(abs(try remaining(d) - left) <= 1)
        }

        @Test("hooks get DILIGENCE_EVENT=away and back")
        func hooks() throws {
            let d = try DaemonUnderTest(launch: false)
            let record = d.root + "/events"
            let script = try d.writeScript("record", "#!/bin/sh\necho \"$DILIGENCE_EVENT\" >> \"\(record)\"\n")
            try d.writeConfig("[hooks]\non_away = \(script)\non_back = \(script)\n")
            try d.start()
            try d.call("away")
            try d.call("back")
            let deadline = monotonicNow() + 5
            while readTextFile(record) != "away\nback\n" && monotonicNow() < deadline { sleepFor(0.05) }
            #expect(readTextFile(record) == "away\nback\n", "\(d.diagnostics)")
        }

        /// Runs `command` with sh as swayidle or xss-lock would: diligencectl on the PATH, the
        /// daemon found from XDG_RUNTIME_DIR. Waits `timeout` seconds at most.
        static func runLikeALocker(_ d: DaemonUnderTest, _ command: String, extra: [String: String] = [:], timeout: Double = 10) throws
            -> ChildProcess
        {
            var environment = d.environment.merging(extra) { $1 }
            environment["PATH"] = Binaries.directory + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
            return try ChildProcess(
                executable: "/bin/sh", arguments: ["-c", command], environment: environment,
                stdoutPath: d.root + "/locker.stdout", stderrPath: d.root + "/locker.stderr")
        }

        /// The commands of contrib/swayidle/config's `timeout` line: (away, back).
        static func swayidleLine() throws -> (String, String) {
            let text = readTextFile(Binaries.packageRoot + "/contrib/swayidle/config")
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("timeout ") }) else {
                throw HarnessError("contrib/swayidle/config has no timeout line")
            }
            let quoted = line.split(separator: "'", omittingEmptySubsequences: false)
            guard quoted.count >= 4 else { throw HarnessError("unexpected swayidle line: \(line)") }
            return (String(quoted[1]), String(quoted[3]))
        }

        @Test("contrib/swayidle/config: its timeout and resume commands pause and resume the work")
        func swayidleLines() throws {
            let d = try Self.daemon("on_away = pause")
            try d.call("start", [("task", .string("Deep"))])
            sleepFor(1.1)
            let (away, back) = try Self.swayidleLine()
            #expect(try Self.runLikeALocker(d, away).wait(timeout: 10) == .exited(0))
            #expect(try d.status()["state"]?.stringValue == "paused")
            let left = try remaining(d)
            sleepFor(1.5)
            #expect(try Self.runLikeALocker(d, back).wait(timeout: 10) == .exited(0))
            #expect(try d.status()["state"]?.stringValue == "running")
            #expect(abs(try remaining(d) - left) <= 1)
        }

        @Test("contrib/xss-lock/diligence-lock: away while the locker runs, back when it returns")
        func xssLockLocker() throws {
            let d = try Self.daemon("on_away = pause")
            try d.call("start", [("task", .string("Deep"))])
            let locker = try Self.runLikeALocker(
                d, Binaries.packageRoot + "/contrib/xss-lock/diligence-lock", extra: ["DILIGENCE_LOCKER": "sleep 2"])
            defer { locker.killAndReap() }
            let deadline = monotonicNow() + 5
            while try d.status()["presence"]?.stringValue != "away" && monotonicNow() < deadline { sleepFor(0.05) }
            #expect(try d.status()["state"]?.stringValue == "paused", "\(readTextFile(d.root + "/locker.stderr"))")
            #expect(locker.wait(timeout: 10) == .exited(0))
            #expect(try d.status()["presence"]?.stringValue == "here")
            #expect(try d.status()["state"]?.stringValue == "running")
        }

        @Test("the task's own --away wins over on_away, and shows in task show")
        func perTaskPolicy() throws {
            let d = try Self.daemon("on_away = pause")
            let edit = try d.ctl("task", "edit", "Deep", "--away", "abandon")
            #expect(edit.exitCode == 0, "\(edit)")
            #expect(try d.call("task_show", [("task", .string("Deep"))])["away"]?.stringValue == "abandon")
            try d.call("start", [("task", .string("Deep"))])
            sleepFor(1.1)
            try d.call("away")
            #expect(try d.status()["state"]?.stringValue == "idle")
            let bad = try d.ctl("task", "edit", "Deep", "--away", "sometimes")
            #expect(bad.exitCode == 2, "\(bad)")
        }
    }
}
