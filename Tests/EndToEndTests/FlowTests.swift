// Flow sessions and overtime through the real daemon, its time moved by the fake-clock
// library (SimulatedClock.swift): under `[timer] suspend = continue` a simulated sleep is
// worked time, so 50 minutes of flow pass in milliseconds.

import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Foundation
import Testing

extension EndToEnd {
    @Suite("Flow sessions and overtime, on simulated clocks")
    struct FlowSessions {
        /// A daemon on simulated clocks whose sleeps count as work.
        static func rig() throws -> (DaemonUnderTest, SimulatedClock) {
            let d = try DaemonUnderTest(launch: false)
            let clock = try SimulatedClock(directory: d.root)
            d.daemonEnvironment = try clock.environment
            d.extraEnvironment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(d.root)/no-system-bus"
            try FileManager.default.createDirectory(atPath: d.configHome + "/diligence", withIntermediateDirectories: true)
            try "[timer]\nsuspend = continue\n".write(
                toFile: d.configHome + "/diligence/diligenced.conf", atomically: true, encoding: .utf8)
            try d.start()
            return (d, clock)
        }

        /// The recorded sessions as (planned, focused, outcome), by id.
        static func sessions(_ d: DaemonUnderTest) throws -> [(planned: Int, focused: Int, outcome: String)] {
            try d.sqlite("SELECT planned_seconds, focused_seconds, outcome FROM sessions ORDER BY id").map {
                (Int($0[0]) ?? -1, Int($0[1]) ?? -1, $0[2])
            }
        }

        @Test("a flow session of 50 minutes earns a 10-minute break at 1/5")
        func fiftyMinutesOfFlowEarnTen() throws {
            let (d, clock) = try Self.rig()
            try d.addTask("Deep", [("mode", .string("flow")), ("break_ratio", .string("1/5"))])
            try d.call("start", [("task", .string("Deep"))])
            let counting = try d.status()
            #expect(counting["counts_up"] == .string("flow") && counting["ends_at"] == .null, "\(counting.serialized)")
            try clock.suspend(3000, pid: d.process!.pid)
            let shown = try d.ctl("status")
            #expect(shown.stdout.contains("Deep · flow · 50:0") && shown.stdout.contains("elapsed"), "\(shown)")
            let after = try d.call("stop")
            let sessions = try Self.sessions(d)
            #expect(sessions.count == 1 && sessions.first?.outcome == "completed", "\(sessions)")
            #expect((3000...3002).contains(sessions.first?.focused ?? 0), "\(sessions)")
            #expect(after["phase"] == .string("short_break") && after["state"] == .string("pending"), "\(after.serialized)")
            #expect(after["duration_seconds"] == .int(600), "\(after.serialized)")
        }

        @Test("the nudge reaches the watchers and stops nothing; SIGKILL mid-flow restores the count-up")
        func nudgeThenCrash() throws {
            let (d, clock) = try Self.rig()
            try d.addTask("Deep", [("mode", .string("flow")), ("flow_nudge", .string("30m"))])
            let watcher = try d.watch()
            try d.call("start", [("task", .string("Deep"))])
            try clock.suspend(2000, pid: d.process!.pid)
            #expect(watcher.waitFor(timeout: 5) { $0.name == "flow_nudge" } != nil, "no flow_nudge\n\(d.diagnostics)")
            #expect(try d.status()["state"] == .string("running"))
            d.kill()
            try d.start()
            let restored = try d.status()
            let elapsed = restored["elapsed_seconds"]?.intValue ?? -1
            #expect(restored["counts_up"] == .string("flow") && (2000...2005).contains(elapsed), "\(restored.serialized)")
            let after = try d.call("stop")
            let sessions = try Self.sessions(d)
            #expect(sessions.count == 1 && sessions.first?.outcome == "completed", "\(sessions)")
            #expect((2000...2005).contains(sessions.first?.focused ?? 0), "\(sessions)")
            #expect(after["duration_seconds"] == .int(Int64((sessions.first?.focused ?? 0) + 2) / 5), "\(after.serialized)")
        }

        @Test("overtime past the bell records focused beyond planned; stats counts it as focus and shows it apart")
        func overtimeIsFocusShownApart() throws {
            let (d, clock) = try Self.rig()
            try d.addTask("Long", [("work", .string("25m")), ("overtime", .bool(true))])
            let watcher = try d.watch()
            try d.call("start", [("task", .string("Long"))])
            try clock.suspend(2400, pid: d.process!.pid)
            let bell = watcher.waitFor(timeout: 5) { $0.name == "overtime_started" }
            #expect(bell != nil, "no overtime_started event\n\(d.diagnostics)")
            let status = try d.status()
            #expect(status["state"] == .string("running") && status["counts_up"] == .string("overtime"), "\(status.serialized)")
            #expect(try Self.sessions(d).isEmpty, "the bell ends nothing")
            let after = try d.call("stop")
            #expect(after["phase"] == .string("short_break"), "the break starts when the work is ended: \(after.serialized)")
            let sessions = try Self.sessions(d)
            #expect(sessions.count == 1 && sessions.first?.outcome == "completed" && sessions.first?.planned == 1500, "\(sessions)")
            let focused = sessions.first?.focused ?? 0
            #expect((2400...2402).contains(focused), "\(sessions)")
            let stats = try d.call("stats", [("period", .string("today"))])
            #expect(stats["overtime_seconds"] == .int(focused - 1500), "\(stats.serialized)")
            #expect(stats["focused_seconds"] == .int(focused), "overtime is focus: \(stats.serialized)")
            let report = try d.ctl("stats", "--plain")
            #expect(report.stdout.contains("Overtime") && report.stdout.contains("past the bell"), "\(report)")
            let page = try d.ctl("report", "today", "--html")
            let minutes = (focused - 1500 + 30) / 60
            #expect(
                page.stdout.contains("<dt>Overtime</dt><dd>\(minutes)m past the bell, in the focus</dd>"), "\(page.stdout.prefix(4000))")
        }
    }
}
