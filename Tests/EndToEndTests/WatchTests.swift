import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Voluntary context switches of each thread of `pid`, by thread id (each wake-up from a
/// blocking wait is one).
func voluntaryContextSwitches(_ pid: pid_t) -> [String: Int] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    var counts: [String: Int] = [:]
    for tid in tasks {
        let text = readTextFile("/proc/\(pid)/task/\(tid)/status")
        let line = text.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
        if let count = line.flatMap({ Int($0.split(separator: "\t").last ?? "") }) { counts[tid] = count }
    }
    return counts
}

/// Wake-ups of `pid`'s threads between two `voluntaryContextSwitches` readings, counted as
/// `make bench` counts them: a thread that appeared counts whole; one that ended (a libdispatch
/// worker winding down, once, 5 s after its last work item) takes its count with it.
func threadWakeups(from before: [String: Int], to after: [String: Int]) -> Int {
    after.reduce(0) { sum, thread in sum + thread.value - (before[thread.key] ?? 0) }
}

/// A `watch` connection whose events nobody reads (a stalled status bar).
func stalledWatcher(_ d: DaemonUnderTest) throws -> ControlConnection {
    let connection = try d.connect()
    let ack = try DaemonUnderTest.roundTrip(connection, Request(command: "watch").body.serialized)
    guard ack.isOK else { throw HarnessError("watch refused: \(ack.serialized)") }
    return connection
}

extension EndToEnd {
    @Suite("Watch: push latency, ticks, no idle wake-ups, slow watchers dropped")
    struct Watch {
        @Test("every change reaches a watcher within 50 ms of another client's command")
        func latency() throws {
            let d = try DaemonUnderTest()
            let watchers = [try d.watch(), try d.watch(), try d.watch()]
            for w in watchers { #expect(w.waitFor(timeout: 5) { $0.name == "status" } != nil) }
            let steps: [(command: String, arguments: [(String, JSON)], event: String)] = [
                ("start", [("task", .string("Work"))], "phase_started"),
                ("pause", [], "paused"),
                ("resume", [], "resumed"),
                ("extend", [("duration", .int(60))], "extended"),
                ("skip", [], "skipped"),
                ("start", [], "phase_started"),
                ("stop", [], "stopped"),
                ("task_edit", [("task", .string("Work")), ("goal", .int(4))], "task_changed"),
                ("reload", [], "config_reloaded"),
            ]
            for step in steps {
                let cursors = watchers.map { $0.events.count }
                let sent = monotonicNow()
                try d.call(step.command, step.arguments)
                for (w, cursor) in zip(watchers, cursors) {
                    guard let (_, event) = w.waitFor(after: cursor, timeout: 2, where: { $0.name == step.event }) else {
                        Issue.record("no \(step.event) after \(step.command)\n\(w.transcript)")
                        continue
                    }
                    let ms = Int((event.time - sent) * 1000)
                    #expect(ms < 50, "\(step.event) arrived \(ms) ms after \(step.command)")
                }
            }
        }

        @Test("while a phase runs, one tick a second, counting down a second each")
        func ticks() throws {
            let d = try DaemonUnderTest()
            let w = try d.watch()
            try d.call("start", [("task", .string("Work"))])
            #expect(w.waitForCount(of: "tick", count: 3, timeout: 5), "\(w.transcript)")
            let ticks = w.events.filter { $0.name == "tick" }.prefix(3)
            let remaining = ticks.compactMap { $0.status?["remaining_seconds"]?.intValue }
            #expect(remaining.count == 3 && remaining[0] - remaining[2] == 2, "\(remaining)")
            let gaps = zip(ticks.dropFirst(), ticks).map { $0.time - $1.time }
            #expect(gaps.allSatisfy { abs($0 - 1) < 0.3 }, "tick gaps \(gaps)")
        }

        @Test("no wake-ups while idle or paused with watchers connected, nor once the last watcher left a running phase")
        func noIdleWakeups() throws {
            let d = try DaemonUnderTest()
            let pid = try #require(d.process?.pid)
            func wakeups(over seconds: Double) -> Int {
                let before = voluntaryContextSwitches(pid)
                sleepFor(seconds)
                return threadWakeups(from: before, to: voluntaryContextSwitches(pid))
            }
            // Raw watch connections (closed by dropping them); the events wait unread in the socket.
            var watchers: [ControlConnection]? = [try stalledWatcher(d), try stalledWatcher(d)]
            sleepFor(0.3)
            #expect(wakeups(over: 3) == 0, "idle with watchers")

            try d.call("start", [("task", .string("Work"))])
            try d.call("pause")
            sleepFor(0.3)
            #expect(wakeups(over: 3) == 0, "paused with watchers")

            try d.call("resume")
            #expect(wakeups(over: 2) >= 2, "a running phase with watchers ticks")
            #expect(watchers?.count == 2)
            watchers = nil
            sleepFor(1.5) // the first tick after the close notices it and disarms
            #expect(wakeups(over: 3) == 0, "a running phase nobody watches any more")
            #expect(try d.status()["state"]?.stringValue == "running")
        }

        @Test("a watcher that never reads is dropped after a bounded backlog; other clients keep their answers")
        func stalledWatcherDropped() throws {
            let d = try DaemonUnderTest()
            let stalled = try stalledWatcher(d)
            let reader = try d.watch()
            let other = try d.connect()
            var slowest = 0.0
            var dropped = false
            // Each reload broadcasts config_reloaded (~400 bytes) to both watchers.
            for _ in 0..<30 where !dropped {
                let batch = String(repeating: #"{"command":"reload"}"# + "\n", count: 100)
                let box = UncheckedSendable(other)
                try withTimeout(10, "100 reloads") {
                    try box.value.write(batch)
                    for _ in 0..<100 { _ = try box.value.readJSONLine() }
                }
                let start = monotonicNow()
                #expect(try DaemonUnderTest.roundTrip(other, #"{"command":"status"}"#).isOK)
                slowest = max(slowest, monotonicNow() - start)
                dropped = readTextFile(d.stderrPaths.last ?? "").contains("Dropping client")
            }
            #expect(dropped, "the stalled watcher was never dropped\n\(d.diagnostics)")
            #expect(slowest < 1, "a status round trip took \(slowest) s while a watcher stalled")
            // The stalled connection sees the backlog the kernel held, then the end of the stream.
            let box = UncheckedSendable(stalled)
            let bytes = try withTimeout(10, "reading the dropped watcher to its end") {
                var total = 0
                while let line = try box.value.readLine() { total += line.count + 1 }
                return total
            }
            #expect(bytes > 0 && bytes < 2 * 1024 * 1024, "read \(bytes) bytes before the end")
            // The reading watcher kept up and is still served.
            let count = reader.events.count
            try d.call("reload")
            #expect(reader.waitFor(after: count, timeout: 2) { $0.name == "config_reloaded" } != nil, "\(reader.transcript)")
        }

        @Test("diligencectl watch reconnects by itself after a daemon restart, printing offline meanwhile")
        func clientReconnects() throws {
            let d = try DaemonUnderTest()
            let out = d.root + "/watch.out"
            var env = d.environment
            env["DILIGENCE_SOCKET"] = d.socketPath
            let client = try ChildProcess(
                executable: try Binaries.client, arguments: ["watch", "--format", "{state} {task}"],
                environment: env, stdoutPath: out, stderrPath: d.root + "/watch.err")
            func lines() -> [String] { readTextFile(out).split(separator: "\n").map(String.init) }
            func waitForLine(_ text: String, timeout: Double = 10) -> Bool {
                let deadline = monotonicNow() + timeout
                while monotonicNow() < deadline {
                    if lines().contains(text) { return true }
                    sleepFor(0.02)
                }
                return false
            }
            #expect(waitForLine("idle"), "\(lines())")
            try d.call("start", [("task", .string("Study"))])
            #expect(waitForLine("running Study"), "\(lines())")
            d.kill()
            #expect(waitForLine("offline"), "\(lines())")
            try d.start()
            try d.call("pause")
            #expect(waitForLine("paused Study"), "\(lines())\n\(readTextFile(d.root + "/watch.err"))")
            #expect(client.isRunning)
            client.killAndReap()
            #expect(lines().last == "paused Study")
        }

        /// A status bar that goes away leaves `watch` writing into a pipe nobody reads: it must
        /// end (status 0: the reader is gone, nothing went wrong), also under a bar that started
        /// it with SIGPIPE ignored (waybar does), where the write fails with EPIPE instead.
        @Test("diligencectl watch exits 0 once its reader is gone, SIGPIPE ignored or not", arguments: [false, true])
        func readerGone(sigpipeIgnored: Bool) throws {
            let d = try DaemonUnderTest()
            try d.call("start", [("task", .string("Study"))])
            let client = try Binaries.client
            let script = """
                \(sigpipeIgnored ? "trap '' PIPE;" : "") '\(client)' --socket '\(d.socketPath)' watch | head -n 1 > '\(d.root)/first'
                echo "${PIPESTATUS[0]}" > '\(d.root)/status'
                """
            let bash = try ChildProcess(
                executable: "/bin/bash", arguments: ["-c", script], environment: d.environment,
                stdoutPath: d.root + "/bash.out", stderrPath: d.root + "/bash.err")
            // head takes the first line and leaves; the next tick (a second later) finds no reader.
            let ended = bash.wait(timeout: 8)
            #expect(ended == .exited(0), "watch did not end without its reader (\(ended.map { "\($0)" } ?? "still running"))")
            #expect(readTextFile(d.root + "/first").contains("Study"), "\(readTextFile(d.root + "/first"))")
            #expect(
                readTextFile(d.root + "/status") == "0\n",
                "watch's exit status: \(readTextFile(d.root + "/status")) \(readTextFile(d.root + "/bash.err"))")
        }

        @Test("diligencectl watch exits 1 with the reason on any other write error (a full disk)")
        func writeError() throws {
            let d = try DaemonUnderTest()
            let client = try ChildProcess(
                executable: try Binaries.client, arguments: ["--socket", d.socketPath, "watch"],
                environment: d.environment, stdoutPath: "/dev/full", stderrPath: d.root + "/w.err")
            #expect(client.wait(timeout: 5) == .exited(1), "watch went on writing into /dev/full")
            #expect(readTextFile(d.root + "/w.err").contains("No space left on device"), "\(readTextFile(d.root + "/w.err"))")
        }

        @Test("diligencectl watch --no-reconnect exits 1 when the daemon goes away")
        func noReconnect() throws {
            let d = try DaemonUnderTest()
            var env = d.environment
            env["DILIGENCE_SOCKET"] = d.socketPath
            let client = try ChildProcess(
                executable: try Binaries.client, arguments: ["watch", "--json", "--no-reconnect"],
                environment: env, stdoutPath: d.root + "/w.out", stderrPath: d.root + "/w.err")
            sleepFor(0.5)
            d.signal(SIGTERM)
            #expect(client.wait(timeout: 5) == .exited(1), "\(readTextFile(d.root + "/w.err"))")
            let first = try JSON.parse(readTextFile(d.root + "/w.out").split(separator: "\n").first.map(String.init) ?? "")
            #expect(first["event"]?.stringValue == "status")
        }
    }
}
