import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Every end-to-end suite nests in this one: `.serialized` applies recursively, so no two tests
/// run daemons (and measure their timing) at the same time.
@Suite("diligenced end to end", .serialized)
struct EndToEnd {}

extension EndToEnd {
    @Suite("Lifecycle: readiness, signals, restart, one daemon per socket")
    struct Lifecycle {
        @Test("READY=1 comes once the socket listens and the database is open; socket 0600 in a 0700 directory")
        func readiness() throws {
            let d = try DaemonUnderTest()
            // READY=1 has arrived (start() waited for it): the socket must answer at once, no retry.
            let status = try d.status()
            #expect(status["state"]?.stringValue == "idle", "a fresh daemon should be idle: \(status.serialized)")
            #expect(status["phase"]?.isNull == true, "phase is null when idle: \(status.serialized)")

            let ready = try #require(d.notify.waitFor(prefix: "READY=1", timeout: 0))
            let all = d.notify.messages.flatMap(\.lines)
            #expect(
                all.contains { $0.hasPrefix("STATUS=") },
                "READY=1 should come with a STATUS= line (e.g. STATUS=Idle); got \(ready.message)\n\(d.diagnostics)")

            let socket = try #require(fileStatus(d.socketPath), "no socket file at \(d.socketPath)\n\(d.diagnostics)")
            #expect(socket.st_mode & S_IFMT == S_IFSOCK, "\(d.socketPath) is not a socket")
            #expect(
                socket.st_mode & 0o777 == 0o600,
                "socket mode is \(String(socket.st_mode & 0o777, radix: 8)), expected 600")
            let directory = (d.socketPath as NSString).deletingLastPathComponent
            let dir = try #require(fileStatus(directory), "no socket directory \(directory)")
            #expect(dir.st_mode & S_IFMT == S_IFDIR)
            #expect(
                dir.st_mode & 0o777 == 0o700,
                "socket directory mode is \(String(dir.st_mode & 0o777, radix: 8)), expected 700")

            #expect(
                fileStatus(d.databasePath) != nil,
                "the database should exist at \(d.databasePath) by READY=1\n\(d.diagnostics)")

            // diligencectl finds the socket by itself through $XDG_RUNTIME_DIR.
            let viaDefault = try d.ctl(arguments: ["status"], socketFlag: false)
            #expect(viaDefault.exitCode == 0, "\(viaDefault)\n\(d.diagnostics)")

            let version = try d.call("version")
            #expect(version["protocol"]?.intValue == 1, "version: \(version.serialized)")
            let semver = try #require(version["version"]?.stringValue, "version has no \"version\": \(version.serialized)")
            let printed = try d.ctl("version")
            #expect(printed.exitCode == 0, "\(printed)")
            #expect(printed.stdout.contains(semver), "`diligencectl version` should print \(semver): \(printed)")
        }

        @Test("SIGTERM: STOPPING=1, exit 0; a restarted daemon resumes the running phase with the right remaining time")
        func sigtermSavesAndResumes() throws {
            let d = try DaemonUnderTest()
            try d.addTask("Long", [("work", .int(60))])
            let sent = monotonicNow()
            let started = try d.call("start", [("task", .string("Long"))])
            let received = monotonicNow()
            let startedAt = (sent + received) / 2
            #expect(
                started["state"]?.stringValue == "running" && started["phase"]?.stringValue == "work",
                "start: \(started.serialized)")

            let cursor = d.notify.count
            d.signal(SIGTERM)
            let stopping = d.notify.waitFor(prefix: "STOPPING=1", after: cursor, timeout: 5)
            #expect(stopping != nil, "no STOPPING=1 within 5 s of SIGTERM\n\(d.diagnostics)")
            let exit = try d.waitExit()
            #expect(exit == .exited(0), "diligenced ended with \(exit) after SIGTERM, expected exit status 0\n\(d.diagnostics)")

            sleepFor(1.5) // downtime: it counts, deadlines are absolute
            try d.restart()
            let resumed = try d.status()
            let expected = 60 - (monotonicNow() - startedAt)
            #expect(resumed["state"]?.stringValue == "running", "after restart: \(resumed.serialized)\n\(d.diagnostics)")
            #expect(resumed["phase"]?.stringValue == "work", "after restart: \(resumed.serialized)")
            #expect(resumed["task"]?.stringValue == "Long", "after restart: \(resumed.serialized)")
            let remaining = try #require(resumed["remaining_seconds"]?.doubleValue, "no remaining_seconds: \(resumed.serialized)")
            #expect(
                abs(remaining - expected) <= 2,
                "remaining_seconds \(remaining) after restart, expected \(String(format: "%.1f", expected)) ± 2 (60 s phase, downtime included)"
            )
        }

        @Test("SIGINT: STOPPING=1 and exit 0")
        func sigint() throws {
            let d = try DaemonUnderTest()
            let cursor = d.notify.count
            d.signal(SIGINT)
            #expect(
                d.notify.waitFor(prefix: "STOPPING=1", after: cursor, timeout: 5) != nil,
                "no STOPPING=1 within 5 s of SIGINT\n\(d.diagnostics)")
            let exit = try d.waitExit()
            #expect(exit == .exited(0), "diligenced ended with \(exit) after SIGINT\n\(d.diagnostics)")
        }

        @Test("a second daemon on the same socket exits non-zero saying \"already running\"; the first keeps serving")
        func secondDaemonRefused() throws {
            let d = try DaemonUnderTest()
            let cursor = d.notify.count
            let second = try d.spawnDaemon()
            let secondStderr = try #require(d.stderrPaths.last)
            let exit = second.wait(timeout: 10)
            let output = readTextFile(secondStderr) + readTextFile(secondStderr.replacingOccurrences(of: ".stderr", with: ".stdout"))
            #expect(exit != nil, "the second diligenced still runs after 10 s (killed it)\n\(d.diagnostics)")
            if let exit {
                #expect(
                    exit.exitCode != nil && exit.exitCode != 0, "the second diligenced ended with \(exit), expected a non-zero exit status")
            }
            #expect(
                output.lowercased().contains("already running"),
                "the second diligenced should say \"already running\"; it printed: \(tail(output, 2000))")
            #expect(
                d.notify.waitFor(prefix: "READY=1", after: cursor, timeout: 0) == nil,
                "the refused daemon must not send READY=1\n\(d.diagnostics)")

            // The first daemon and its socket are untouched.
            let status = try d.send(Request(command: "status"))
            #expect(status.isOK, "\(status.serialized)")
            let fresh = try d.connect()
            #expect(try DaemonUnderTest.roundTrip(fresh, #"{"command":"status"}"#).isOK)
        }

        @Test("a socket file left by a killed daemon is replaced")
        func staleSocketAfterCrash() throws {
            let d = try DaemonUnderTest()
            d.kill()
            #expect(fileStatus(d.socketPath) != nil, "SIGKILL should leave the socket file behind")
            try d.start()
            #expect(try d.status()["state"]?.stringValue == "idle")
        }

        @Test("a stale socket nobody listens on is replaced")
        func staleSocketNobodyListens() throws {
            let d = try DaemonUnderTest(launch: false)
            try leaveStaleSocket(at: d.socketPath)
            #expect(fileStatus(d.socketPath).map { $0.st_mode & S_IFMT == S_IFSOCK } == true)
            try d.start()
            #expect(try d.status()["state"]?.stringValue == "idle")
            let ctl = try d.ctl("status")
            #expect(ctl.exitCode == 0, "\(ctl)")
        }
    }
}
