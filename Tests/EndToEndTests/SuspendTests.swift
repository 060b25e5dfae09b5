// The real daemon through a suspend, a clock stepped back and a new time zone.
//
// A suspend is simulated by the fake-clock library (SimulatedClock.swift): an hour passes on
// CLOCK_REALTIME and CLOCK_BOOTTIME in an instant, CLOCK_MONOTONIC stands still, the kernel's
// resume notice arrives. Every policy (pause; continue, with the deadline passing during the
// sleep; abandon; focus mode), with and without logind, with and without a watcher, the wake
// looked at at once and only seconds later, with nothing else happening meanwhile.

import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import DiligenceTime
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EndToEnd {
    @Suite("Time at the edges: a real suspend, a clock stepped back, a new time zone")
    struct TimeEdges {
        /// The work phase.
        static let work = 1800.0
        /// Seconds awake before the suspend.
        static let before = 1.0
        /// "Late": the wake is looked at only this long after it, nothing happening meanwhile.
        static let lateBy = 2.5

        enum Policy: String, CaseIterable, CustomStringConvertible {
            case pause, `continue`, abandon
            case focusMode = "focus mode"
            var description: String { rawValue }
            /// The config's `suspend` setting (focus mode abandons work whatever it says).
            var setting: String { self == .focusMode ? "pause" : rawValue }
            /// How long the machine sleeps: past the phase's deadline under `continue`; else
            /// shorter than the phase, so no timer of the phase is due at the wake and only the
            /// kernel's resume notice (or logind) tells the daemon.
            var sleep: Double { self == .continue ? 3600 : 600 }
        }

        /// A daemon on simulated clocks with `policy`, and logind (a fake one on a private system
        /// bus) or none.
        final class Rig {
            let d: DaemonUnderTest
            let clock: SimulatedClock
            let bus: SessionBus?
            let logind: FakeLogind?
            let task: String

            init(policy: Policy, logind withLogind: Bool) throws {
                d = try DaemonUnderTest(launch: false)
                clock = try SimulatedClock(directory: d.root)
                d.daemonEnvironment = try clock.environment
                if withLogind {
                    let bus = try SessionBus(directory: d.root)
                    self.bus = bus
                    logind = try FakeLogind(busAddress: bus.address)
                    d.extraEnvironment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
                } else {
                    bus = nil
                    logind = nil
                    d.extraEnvironment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(d.root)/no-system-bus"
                }
                try FileManager.default.createDirectory(atPath: d.configHome + "/diligence", withIntermediateDirectories: true)
                // min_session = 0: the few seconds of work given up here are what is dated.
                try "[timer]\nsuspend = \(policy.setting)\nmin_session = 0\n".write(
                    toFile: d.configHome + "/diligence/diligenced.conf", atomically: true, encoding: .utf8)
                try d.start()
                task = policy == .focusMode ? "Deep" : "Short"
                try d.addTask(task, [("work", .string("\(Int(TimeEdges.work))s")), ("focus_mode", .bool(policy == .focusMode))])
                if withLogind {
                    // The daemon subscribes after READY=1: wait until it hears the signal.
                    _ = try Logind.emit(logind!, false, until: "event=system_resumed", in: d)
                }
            }

            var pid: pid_t { d.process!.pid }

            func count(_ text: String) -> Int { d.stderr.components(separatedBy: text).count - 1 }

            /// The recorded sessions as (start, end, focused, outcome), by id.
            func sessions() throws -> [(start: Double, end: Double, focused: Int, outcome: String)] {
                try d.sqlite("SELECT start, end, focused_seconds, outcome FROM sessions ORDER BY id").map {
                    (number($0[0]) ?? .nan, number($0[1]) ?? .nan, Int(number($0[2]) ?? -1), $0[3])
                }
            }
        }

        /// One suspend during a work phase, checked against what `policy` promises.
        static func suspendDuringWork(_ rig: Rig, policy: Policy, watcher watching: Bool, late: Bool, _ findings: Findings) throws {
            func check(_ ok: Bool, _ message: @autoclosure () -> String) { findings.check(ok, message()) }
            let d = rig.d
            let sleep = policy.sleep
            let what = "\(policy), logind \(rig.logind != nil), watcher \(watching), \(late ? "late" : "prompt")"
            let watcher = watching ? try d.watch() : nil
            let sessionsBefore = try rig.sessions().count
            let startWall = rig.clock.daemonWall
            try d.call("start", [("task", .string(rig.task))])
            let started = monotonicNow()
            sleepFor(before)

            // When the suspend begins, within [began, beganLatest]: logind's announcement, or
            // the clocks' jump.
            let began = rig.clock.daemonWall
            var beganLatest = began
            if let logind = rig.logind {
                check(
                    try Logind.emit(logind, true, until: "event=prepare_for_sleep", in: d),
                    "\(what): no prepare_for_sleep\n\(d.diagnostics)")
                beganLatest = rig.clock.daemonWall
                sleepFor(0.3) // awake a little longer, as systemd-sleep takes a moment
            }
            let resumes = rig.count("event=resumed_from_suspend")
            let awakeBefore = monotonicNow() - started
            try rig.clock.suspend(sleep, pid: rig.pid)
            if rig.logind == nil { beganLatest = rig.clock.daemonWall - sleep }
            let woke = monotonicNow()
            /// Seconds the phase has run awake by now.
            func awake() -> Double { awakeBefore + monotonicNow() - woke }
            if let logind = rig.logind, !late { try logind.prepareForSleep(false) }

            // The daemon notices the wake by itself (the kernel's resume notice), no command asked.
            let noticed = (try? waitUntil("the wake noticed", timeout: 2) { rig.count("event=resumed_from_suspend") > resumes }) != nil
            check(noticed, "\(what): the daemon did not notice the wake by itself within 2 s\n\(d.diagnostics)")
            if late {
                sleepFor(lateBy)
                if let logind = rig.logind { try logind.prepareForSleep(false) }
            }

            let status = try d.status()
            let sessions = try rig.sessions().dropFirst(sessionsBefore)
            switch policy {
            case .pause:
                // The slept hour does not count: the time left is what it was, less the time awake.
                let remaining = status["remaining_seconds"]?.doubleValue ?? -1
                check(status["state"]?.stringValue == "running" && sessions.isEmpty, "\(what): \(status.serialized)")
                check(abs(remaining - (work - awake())) <= 1.5, "\(what): \(remaining) s left after \(awake()) s awake\n\(d.diagnostics)")
                if let watcher {
                    let tick = watcher.waitFor(timeout: 2) { $0.name == "tick" && $0.time > woke }
                    let left = tick?.event.status?["remaining_seconds"]?.doubleValue ?? -1
                    check(left >= work - awake() - 1.5, "\(what): a tick after the wake shows \(left) s left\n\(watcher.transcript)")
                }
                // Stopped now: the session spans the slept hour, but its focus does not.
                let ran = awake()
                try d.call("stop")
                guard let stopped = try rig.sessions().last else { return check(false, "\(what): stop recorded nothing") }
                check(stopped.outcome == "abandoned", "\(what): \(stopped)")
                check(abs(stopped.end - stopped.start - (sleep + ran)) <= 1, "\(what): \(stopped), \(ran) s awake")
                check(abs(Double(stopped.focused) - ran) <= 1, "\(what): \(stopped), \(ran) s awake")
            case .continue:
                // The deadline passed during the sleep: the phase completed then, lasting its 30 s.
                check(sessions.map(\.outcome) == ["completed"], "\(what): \(Array(sessions))\n\(d.diagnostics)")
                if let session = sessions.first {
                    check(session.end - session.start == work && session.focused == Int(work), "\(what): \(session)")
                    check(abs(session.start - startWall) <= 1, "\(what): started \(session.start), asked \(startWall)")
                }
                check(status["phase"]?.stringValue == "short_break", "\(what): \(status.serialized)")
                if let watcher {
                    let recorded = watcher.waitFor(timeout: 2) { $0.name == "session_recorded" }
                    check(
                        recorded.map { $0.event.time - woke < 1.5 } == true,
                        "\(what): session_recorded not pushed at the wake\n\(watcher.transcript)")
                }
                if status["state"]?.stringValue != "idle" { try d.call("stop") }
            case .abandon, .focusMode:
                // Given up as of the moment the suspend began, however late the wake is looked at.
                check(status["state"]?.stringValue == "idle", "\(what): \(status.serialized)")
                check(sessions.map(\.outcome) == ["abandoned"], "\(what): \(Array(sessions))\n\(d.diagnostics)")
                if let session = sessions.first {
                    check(
                        session.end >= began - 0.05 && session.end <= beganLatest + 0.5,
                        "\(what): the session ends at \(session.end), the suspend began in [\(began), \(beganLatest)]\n\(d.diagnostics)")
                    check(abs(session.end - session.start - Double(session.focused)) <= 1, "\(what): \(session)")
                }
                if let watcher {
                    let stopped = watcher.waitFor(timeout: 2) { $0.name == "stopped" }
                    check(
                        stopped.map { $0.event.time - woke < 1.5 } == true, "\(what): stopped not pushed at the wake\n\(watcher.transcript)"
                    )
                }
            }
        }

        /// Each policy with and without logind is a daemon of its own; the eight run at once
        /// (the suites of this target run one after another, and these mostly wait), each through
        /// its four suspends: without and with a watcher, looked at at once and late.
        @Test("every suspend policy through a simulated suspend: with and without logind and a watcher, looked at at once and late")
        func suspendPolicies() throws {
            let rigs = Policy.allCases.flatMap { policy in [false, true].map { (policy, $0) } }
            let findings = Findings()
            let done = DispatchSemaphore(value: 0)
            for (policy, logind) in rigs {
                Thread.detachNewThread {
                    defer { done.signal() }
                    do {
                        let rig = try Rig(policy: policy, logind: logind)
                        for watcher in [false, true] {
                            for late in [false, true] {
                                try Self.suspendDuringWork(rig, policy: policy, watcher: watcher, late: late, findings)
                            }
                        }
                        if !logind {
                            findings.check(rig.count("event=logind_unavailable") == 1, "\(policy): \(rig.d.stderr)")
                        }
                    } catch {
                        findings.check(false, "\(policy), logind \(logind): \(error)")
                    }
                }
            }
            for _ in rigs {
                #expect(done.wait(timeout: .now() + 120) == .success, "a suspend scenario did not finish within 2 minutes")
            }
            // Recorded here, in the test's own context (the threads above have none).
            for finding in findings.failures { Issue.record(Comment(rawValue: finding)) }
        }

        /// A clock stepped back by two hours during a phase (NTP correcting a dual-boot
        /// laptop's clock): the session keeps its start and its length, is counted on its day,
        /// exports and imports again; the step is logged once.
        @Test("a wall clock stepped back during a phase: the session keeps its length, its day, and imports again")
        func clockSteppedBack() throws {
            let d = try DaemonUnderTest(launch: false)
            let clock = try SimulatedClock(directory: d.root)
            d.daemonEnvironment = try clock.environment
            try d.start()
            try d.addTask("Quick", [("work", .string("2s"))])
            let watcher = try d.watch()
            try d.call("start", [("task", .string("Quick"))])
            sleepFor(0.5)
            try clock.stepWall(-7200, pid: d.process!.pid)
            let recorded = try #require(
                watcher.waitFor(timeout: 5) { $0.name == "session_recorded" }, "\(watcher.transcript)\n\(d.diagnostics)")
            let session = recorded.event.json["session"] ?? .null
            let start = try #require(session["start"]?.stringValue.flatMap(RFC3339.parse))
            let end = try #require(session["end"]?.stringValue.flatMap(RFC3339.parse))
            #expect(end - start == 2, "\(session.serialized)")
            let row = try #require(try d.sqlite("SELECT end - start FROM sessions").first)
            #expect(number(row.first) == 2, "the stored session lasts \(row)")
            #expect(d.stderr.components(separatedBy: "event=wall_clock_set").count - 1 == 1, "one step, one log line\n\(d.stderr)")

            // Counted on the day it ended, which `stats today` with an offset finds.
            let today = try #require(try d.call("stats", [("period", .string("today"))])["from"]?.stringValue.flatMap(CalendarDay.init))
            let day = try #require(CalendarDay(String(session["end"]?.stringValue?.prefix(10) ?? "")))
            let stats = try d.call("stats", [("period", .string("today")), ("offset", .int(day.daysSince1970 - today.daysSince1970))])
            #expect(stats["completed"]?.intValue == 1 && stats["focused_seconds"]?.intValue == 2, "\(stats.serialized)")

            // The daemon's own export imports again (here: recognised as already recorded).
            let exported = try d.call("export", [("format", .string("jsonl"))])["content"]?.stringValue ?? ""
            let imported = try d.send(Request(command: "import", arguments: [("content", .string(exported))]))
            #expect(imported.isOK && imported.result?["skipped"]?.intValue == 1, "\(imported.serialized)")

            // A second step is a second line; time passing is none.
            try clock.stepWall(3600, pid: d.process!.pid)
            try waitUntil("the second step logged", timeout: 3, diagnostics: d.stderr) {
                d.stderr.components(separatedBy: "event=wall_clock_set").count - 1 == 2
            }
            sleepFor(1)
            _ = try d.status()
            #expect(d.stderr.components(separatedBy: "event=wall_clock_set").count - 1 == 2, "\(d.stderr)")
        }

        /// The system's time zone replaced at run time, as `timedatectl set-timezone` does it (a
        /// new /etc/localtime link renamed over the old one), in a private mount namespace whose
        /// /etc is the test's: `status` and `stats today` move to the new zone's day together.
        @Test(
            "a new system time zone at run time: status and stats today follow it together",
            .enabled(if: mountNamespaceUnavailable == nil, "\(mountNamespaceUnavailable ?? "")"))
        func timeZoneChangedAtRunTime() throws {
            let d = try DaemonUnderTest(launch: false)
            // The test's /etc: every entry of the real one (seen at host-etc inside the
            // namespace), but a localtime of its own. Zones twelve hours apart, without DST.
            let etc = d.root + "/etc"
            let hostEtc = d.root + "/host-etc"
            for dir in [etc, hostEtc] { mkdir(dir, 0o755) }
            for name in try FileManager.default.contentsOfDirectory(atPath: "/etc") where name != "localtime" {
                symlink(hostEtc + "/" + name, etc + "/" + name)
            }
            let zones = (first: ("Etc/GMT-12", 12 * 3600), second: ("Etc/UTC", 0))
            symlink("/usr/share/zoneinfo/" + zones.first.0, etc + "/localtime")
            d.removedEnvironment = ["TZ"]
            d.launcher = [
                try requireProgram("util-linux", "/usr/bin/unshare", "/bin/unshare"), "--mount", "--propagation", "private",
                "/bin/sh", "-c", "mount --bind /etc '\(hostEtc)' && mount --bind '\(etc)' /etc && exec \"$0\" \"$@\"",
            ]
            try d.start()

            // A session that is today in one zone and not in the other.
            let now = Date().timeIntervalSince1970
            func isToday(_ wall: Double, offset: Int) -> Bool {
                ((wall + Double(offset)) / 86400).rounded(.down) == ((now + Double(offset)) / 86400).rounded(.down)
            }
            let end = try #require(
                stride(from: now - 1800, to: now - 86400, by: -1800).first {
                    isToday($0, offset: zones.first.1) != isToday($0, offset: zones.second.1)
                })
            /// RFC 3339 in UTC, whatever the zones.
            func rfc(_ wall: Double) -> String {
                let seconds = Int(wall)
                let second = seconds % 60
                return
                    "\(CalendarDay(daysSince1970: seconds / 86400))T\(TimeOfDay.format(seconds % 86400 / 60)):\(second < 10 ? "0" : "")\(second)Z"
            }
            try d.call("history_add", [("task", .string("Work")), ("start", .string(rfc(end - 1500))), ("end", .string(rfc(end)))])
            func counts() throws -> (status: Int64?, stats: Int64?) {
                (try d.status()["today_completed"]?.intValue, try d.call("stats", [("period", .string("today"))])["completed"]?.intValue)
            }
            let before = try counts()
            let expectedBefore: Int64 = isToday(end, offset: zones.first.1) ? 1 : 0
            #expect(before.status == expectedBefore && before.stats == expectedBefore, "in \(zones.first.0): \(before)\n\(d.diagnostics)")

            // timedatectl set-timezone: a new link, renamed over /etc/localtime.
            #expect(symlink("/usr/share/zoneinfo/" + zones.second.0, etc + "/.localtime.new") == 0)
            #expect(rename(etc + "/.localtime.new", etc + "/localtime") == 0)
            let noticed = (try? waitUntil("the new zone noticed", timeout: 3) { d.stderr.contains("event=timezone_changed") }) != nil
            #expect(noticed, "the daemon did not log the new zone\n\(d.diagnostics)")
            let after = try counts()
            #expect(
                after.status == 1 - expectedBefore && after.stats == 1 - expectedBefore, "in \(zones.second.0): \(after)\n\(d.diagnostics)")
        }
    }
}

/// Failed checks collected on helper threads, recorded afterwards by the test.
final class Findings: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []

    func check(_ ok: Bool, _ message: @autoclosure () -> String) {
        guard !ok else { return }
        let text = message()
        lock.withLock { list.append(text) }
    }

    var failures: [String] { lock.withLock { list } }
}
