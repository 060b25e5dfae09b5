// logind's PrepareForSleep end to end: a private dbus-daemon stands in for the system bus
// (DBUS_SYSTEM_BUS_ADDRESS), a fake logind of the test's own (FakeDesktop.swift) owns
// org.freedesktop.login1 on it and emits the signal, and the real diligenced listens.

import CSystemd
import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EndToEnd {
    @Suite("logind: PrepareForSleep on a system bus")
    struct Logind {
        /// Emits PrepareForSleep(`sleeping`) until the daemon's log shows `text`: the daemon
        /// subscribes asynchronously after READY=1, so the first signal may come before its
        /// match is in place. True when the line appeared within `timeout` seconds.
        static func emit(_ logind: FakeLogind, _ sleeping: Bool, until text: String, in d: DaemonUnderTest, timeout: Double = 10) throws
            -> Bool
        {
            let before = d.stderr.components(separatedBy: text).count
            let deadline = monotonicNow() + timeout
            while monotonicNow() < deadline {
                try logind.prepareForSleep(sleeping)
                let waitUntil = monotonicNow() + 0.5
                while monotonicNow() < waitUntil {
                    if d.stderr.components(separatedBy: text).count > before { return true }
                    sleepFor(0.02)
                }
            }
            return false
        }

        @Test("PrepareForSleep(true) saves the running timer at that moment; PrepareForSleep(false) is logged and the phase runs on")
        func sleepSavesAndWakeResumes() throws {
            let d = try DaemonUnderTest(launch: false)
            let bus = try SessionBus(directory: d.root)
            let logind = try FakeLogind(busAddress: bus.address)
            d.extraEnvironment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
            try d.start()
            try d.addTask("Deep", [("work", .string("25m"))])
            try d.call("start", [("task", .string("Deep"))])
            let started = try #require(d.sqlite("SELECT saved_wall FROM timer_state").first.flatMap { number($0.first) })
            // Let the phase run, so a save at the signal differs from the one at the start.
            sleepFor(1.5)
            let beforeSignal = Date().timeIntervalSince1970

            #expect(try Self.emit(logind, true, until: "event=prepare_for_sleep", in: d), "no prepare_for_sleep log line\n\(d.diagnostics)")
            let row = try #require(d.sqlite("SELECT saved_wall, saved FROM timer_state").first, "no saved timer\n\(d.diagnostics)")
            let savedWall = try #require(number(row.first))
            #expect(
                savedWall > started + 1 && savedWall >= beforeSignal - 0.1,
                "the timer was not saved at the signal: saved at \(savedWall), started \(started), signal \(beforeSignal)")
            let saved = try JSON.parse(row.count > 1 ? row[1] : "")
            #expect(saved["state"]?.stringValue == "running", "\(saved.serialized)")
            #expect(saved["phase"]?.stringValue == "work", "\(saved.serialized)")
            #expect((saved["elapsed"]?.doubleValue ?? 0) >= 1.4, "the saved elapsed time is not the one at the signal: \(saved.serialized)")

            #expect(try Self.emit(logind, false, until: "event=system_resumed", in: d), "no system_resumed log line\n\(d.diagnostics)")
            let status = try d.status()
            #expect(status["state"]?.stringValue == "running" && status["phase"]?.stringValue == "work", "\(status.serialized)")
            #expect(!d.stderr.contains("event=logind_unavailable"), "\(d.stderr)")
        }

        @Test("no system bus: the daemon starts, times, and says so once")
        func noSystemBus() throws {
            let d = try DaemonUnderTest(launch: false)
            d.extraEnvironment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(d.root)/no-such-system-bus"
            try d.start()
            try d.addTask("Quick", [("work", .string("1s")), ("short_break", .string("1s")), ("autostart", .string("all"))])
            let watcher = try d.watch()
            try d.call("start", [("task", .string("Quick"))])
            #expect(
                watcher.waitFor(timeout: 6, where: { $0.state == "running" && $0.phase == "short_break" }) != nil,
                "the timer stalled without a system bus\n\(watcher.transcript)\n\(d.diagnostics)")
            let notices = d.stderr.components(separatedBy: "event=logind_unavailable").count - 1
            #expect(notices == 1, "expected one line about the missing system bus\n\(d.stderr)")
            #expect(d.stderr.contains("no-such-system-bus"), "the line should name the address tried\n\(d.stderr)")
        }
    }
}
