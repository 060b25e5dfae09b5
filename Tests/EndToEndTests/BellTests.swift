import DiligenceJSON
import DiligenceProtocol
import Foundation
import Testing

extension EndToEnd {
    /// Issue 13, finding 7: a plain terminal was never told a phase ended. `[notifications]
    /// bell = on`: a notification that no desktop shows (no session bus, no notification server,
    /// notifications off) reaches the watchers as a `bell` event, and `diligencectl watch` rings
    /// the terminal's bell on it.
    @Suite("Bell: the terminal fallback of notifications")
    struct BellTests {
        /// Starts a 1-second work phase and says whether a `bell` event followed its end. A
        /// phase that never ends throws: "no bell" must mean the phase ended without one.
        static func bellAfterAPhaseEnd(_ d: DaemonUnderTest) throws -> (rang: Bool, transcript: String) {
            try d.addTask("Quick", [("work", .string("1s"))])
            let watcher = try d.watch()
            try d.call("start", [("task", .string("Quick"))])
            let end = try #require(
                watcher.waitFor(timeout: 5, where: { $0.name == "phase_completed" }), "no phase_completed\n\(watcher.transcript)")
            let bell = watcher.waitFor(after: end.index, timeout: 1.5) { $0.name == "bell" }
            if let bell {
                #expect(bell.event.json["summary"]?.stringValue == "Focus session complete", "\(bell.event)")
            }
            return (bell != nil, watcher.transcript)
        }

        @Test("bell = on without a session bus: the watchers get a bell event")
        func noBus() throws {
            let d = try DaemonUnderTest(launch: false)
            d.extraEnvironment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(d.root)/no-such-bus"
            try d.writeConfig("[notifications]\nbell = on\n")
            try d.start()
            let result = try Self.bellAfterAPhaseEnd(d)
            #expect(result.rang, "\(result.transcript)\n\(d.diagnostics)")
        }

        @Test("bell = on with a session bus but no notification server: a bell event")
        func noServer() throws {
            let d = try DaemonUnderTest(launch: false)
            let bus = try SessionBus(directory: d.root)
            d.extraEnvironment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
            try d.writeConfig("[notifications]\nbell = on\n")
            try d.start()
            let result = try Self.bellAfterAPhaseEnd(d)
            #expect(result.rang, "\(result.transcript)\n\(d.diagnostics)")
            _ = bus
        }

        @Test("bell = on with a notification server: the desktop shows it, no bell")
        func server() throws {
            let (d, bus, server) = try Notifications.daemonWithNotificationServer(config: "[notifications]\nbell = on\n")
            defer { server.stop() }
            let result = try Self.bellAfterAPhaseEnd(d)
            #expect(!result.rang, "\(result.transcript)")
            // No bell because the desktop showed it: the server got the notification.
            let shown = try #require(server.waitForCall(1, timeout: 5), "no Notify call after the work phase ended\n\(d.diagnostics)")
            #expect(shown.summary == "Focus session complete", "\(shown)")
            _ = bus
        }

        @Test("bell is off by default: no bell event without a bus either")
        func offByDefault() throws {
            let d = try DaemonUnderTest(launch: false)
            d.extraEnvironment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(d.root)/no-such-bus"
            try d.start()
            let result = try Self.bellAfterAPhaseEnd(d)
            #expect(!result.rang, "\(result.transcript)")
        }
    }
}
