import DiligenceJSON
import DiligenceProtocol
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension DaemonUnderTest {
    /// Writes `text` as `$XDG_CONFIG_HOME/diligence/diligenced.conf` (before `start()`).
    func writeConfig(_ text: String) throws {
        mkdir(configHome + "/diligence", 0o700)
        try text.write(toFile: configHome + "/diligence/diligenced.conf", atomically: true, encoding: .utf8)
        handOver(configHome + "/diligence")
    }

    /// Writes an executable script at `root/<name>` and returns its path.
    func writeScript(_ name: String, _ text: String) throws -> String {
        let path = root + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        handOver(path)
        return path
    }
}

extension EndToEnd {
    @Suite("Notifications: a real session bus and notification server")
    struct Notifications {
        /// A daemon on a private session bus where a notification server of the test's own
        /// runs. The bus lives as long as the caller keeps it.
        static func daemonWithNotificationServer(config: String? = nil) throws -> (DaemonUnderTest, SessionBus, NotificationServer) {
            let d = try DaemonUnderTest(launch: false)
            if let config { try d.writeConfig(config) }
            let bus = try SessionBus(directory: d.root)
            let server = try NotificationServer(busAddress: bus.address)
            d.extraEnvironment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
            do { try d.start() } catch {
                server.stop()
                throw error
            }
            return (d, bus, server)
        }

        @Test("a work end shows a notification with Start break / Skip break; invoking Start break starts the break and closes it")
        func actionStartsTheBreak() throws {
            let (d, bus, server) = try Self.daemonWithNotificationServer()
            defer {
                server.stop()
                withExtendedLifetime(bus) {}
            }
            try d.addTask("Quick", [("work", .string("1s")), ("short_break", .string("1s"))])
            let watcher = try d.watch()
            try d.call("start", [("task", .string("Quick"))])

            guard let first = server.waitForCall(1, timeout: 5) else {
                Issue.record("no Notify call after the work phase ended\n\(d.diagnostics)")
                return
            }
            #expect(first.appName == "Diligence")
            #expect(first.summary == "Focus session complete", "\(first)")
            #expect(first.body.contains("Quick"), "\(first)")
            #expect(first.replacesID == 0, "\(first)")
            #expect(first.actions == ["start_break", "Start break", "skip_break", "Skip break"], "\(first)")
            #expect(try d.status()["state"]?.stringValue == "pending", "the break waits for the user (autostart none)")

            server.invoke("start_break", on: first.id)
            guard watcher.waitFor(timeout: 5, where: { $0.state == "running" && $0.phase == "short_break" }) != nil else {
                Issue.record("the Start break action did not start the break\n\(watcher.transcript)\n\(d.diagnostics)")
                return
            }
            // The 1 s break ends: its notification replaces the first one and offers Start focus.
            guard let second = server.waitForCall(2, timeout: 5) else {
                Issue.record("no Notify call after the break ended\n\(d.diagnostics)")
                return
            }
            #expect(second.summary == "Break over", "\(second)")
            // Its button used, the first one was closed (its state is gone): the next is a new one.
            #expect(server.closed.contains(first.id), "\(server.closed)")
            #expect(second.replacesID == 0, "\(server.received)")
            #expect(second.actionKeys == ["start_focus"], "\(second)")

            server.invoke("start_focus", on: second.id)
            #expect(
                watcher.waitFor(timeout: 5, where: { $0.state == "running" && $0.phase == "work" && $0.status?["round"]?.intValue == 2 })
                    != nil,
                "Start focus did not start round 2\n\(watcher.transcript)")
        }

        @Test("Skip break from a notification skips the pending break")
        func actionSkipsTheBreak() throws {
            let (d, bus, server) = try Self.daemonWithNotificationServer()
            defer {
                server.stop()
                withExtendedLifetime(bus) {}
            }
            try d.addTask("Quick", [("work", .string("1s"))])
            let watcher = try d.watch()
            try d.call("start", [("task", .string("Quick"))])
            guard let first = server.waitForCall(1, timeout: 5) else {
                Issue.record("no Notify call\n\(d.diagnostics)")
                return
            }
            server.invoke("skip_break", on: first.id)
            #expect(watcher.waitFor(timeout: 5, where: { $0.name == "skipped" }) != nil, "\(watcher.transcript)")
            let status = try d.status()
            #expect(status["state"]?.stringValue == "pending" && status["phase"]?.stringValue == "work", "\(status.serialized)")
        }

        /// A notification whose buttons act on a state that is gone (the break was skipped from
        /// the command line) is closed, so the desktop stops offering them.
        @Test("after skip, the notification that offered Start break / Skip break is closed; hints name the desktop entry and the category")
        func staleNotificationIsClosed() throws {
            let (d, bus, server) = try Self.daemonWithNotificationServer()
            defer {
                server.stop()
                withExtendedLifetime(bus) {}
            }
            try d.addTask("Quick", [("work", .string("1s"))])
            try d.call("start", [("task", .string("Quick"))])
            guard let first = server.waitForCall(1, timeout: 5) else {
                Issue.record("no Notify call\n\(d.diagnostics)")
                return
            }
            #expect(first.actionKeys == ["start_break", "skip_break"], "\(first)")
            #expect(first.hints["desktop-entry"] == "diligence" && first.hints["category"] == "x-diligence.phase", "\(first.hints)")
            // The entry the hint names is shipped (and installed by make install).
            #expect(fileStatus(Binaries.packageRoot + "/contrib/\(first.hints["desktop-entry"] ?? "?").desktop") != nil)
            try d.call("task_list") // a request that changes nothing closes nothing
            sleepFor(0.3)
            #expect(server.closed.isEmpty, "\(server.closed)")
            try d.call("skip")
            #expect(
                server.waitForClose(of: first.id, timeout: 5),
                "CloseNotification(\(first.id)) never came: \(server.closed)\n\(d.diagnostics)")
        }

        /// The same with dunst as the server: its "Start break / Skip break" notification leaves
        /// the screen when the break is skipped from the command line (it would stay: `timeout =
        /// never`, as for a user who wants to see every phase end).
        @Test(
            "dunst: after skip, the notification offering the skipped break leaves the screen",
            .enabled(if: Dunst.unavailable == nil, "\(Dunst.unavailable ?? "")"))
        func dunstClosesTheStaleNotification() throws {
            let d = try DaemonUnderTest(launch: false)
            let bus = try SessionBus(directory: d.root)
            let dunst = try Dunst(directory: d.root, busAddress: bus.address)
            defer { withExtendedLifetime((bus, dunst)) {} }
            d.extraEnvironment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
            try d.writeConfig("[notifications]\ntimeout = never\n")
            try d.start()
            try d.addTask("Quick", [("work", .string("1s"))])
            try d.call("start", [("task", .string("Quick"))])
            try waitUntil("dunst shows the work end", timeout: 10, diagnostics: d.diagnostics) { dunst.displayed == 1 }
            try d.call("skip")
            try waitUntil("the notification leaves dunst's screen", timeout: 5, diagnostics: d.diagnostics) { dunst.displayed == 0 }
        }

        @Test("phases that start by themselves: each phase notification replaces the previous one, none is closed")
        func nextReplacesPrevious() throws {
            let (d, bus, server) = try Self.daemonWithNotificationServer()
            defer {
                server.stop()
                withExtendedLifetime(bus) {}
            }
            try d.addTask("Chain", [("work", .string("1s")), ("short_break", .string("1s")), ("autostart", .string("all"))])
            try d.call("start", [("task", .string("Chain"))])
            guard let first = server.waitForCall(1, timeout: 5), let second = server.waitForCall(2, timeout: 5) else {
                Issue.record("no two Notify calls: \(server.received)\n\(d.diagnostics)")
                return
            }
            #expect(first.actionKeys == ["skip_break"] && second.summary == "Break over", "\(server.received)")
            #expect(second.replacesID == first.id, "\(server.received)")
            #expect(server.closed.isEmpty, "replaced, not closed: \(server.closed)")
        }

        @Test("no session bus: the timer keeps going and the daemon says so once")
        func noBusIsNoProblem() throws {
            let d = try DaemonUnderTest(launch: false)
            d.extraEnvironment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(d.root)/no-such-bus"
            try d.start()
            try d.addTask("Chain", [("work", .string("1s")), ("short_break", .string("1s")), ("autostart", .string("all"))])
            let watcher = try d.watch()
            try d.call("start", [("task", .string("Chain"))])
            #expect(
                watcher.waitFor(timeout: 6, where: { $0.state == "running" && $0.phase == "work" && $0.status?["round"]?.intValue == 2 })
                    != nil,
                "the timer stalled without a bus\n\(watcher.transcript)\n\(d.diagnostics)")
            #expect(
                watcher.waitFor(
                    timeout: 4, where: { $0.state == "running" && $0.phase == "short_break" && $0.status?["round"]?.intValue == 2 }) != nil)
            let warnings = d.stderr.components(separatedBy: "No session bus").count - 1
            #expect(warnings == 1, "expected one warning about the missing bus\n\(d.stderr)")
        }
    }
}
