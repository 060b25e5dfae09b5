import DiligenceJSON
import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// Issue 29: do-not-disturb that follows the work phase on each notification server, read back
// with the server's own tool, and put back exactly as it was however the work ends.
extension EndToEnd {
    /// One server under test: how the daemon reaches it, and its do-not-disturb read back.
    final class FocusDesktop {
        let name: String
        let daemon: DaemonUnderTest
        let isOn: () -> Bool?
        let turnOn: (() throws -> Void)?
        private var keep: [AnyObject]
        var dunst: Dunst? { keep.lazy.compactMap { $0 as? Dunst }.first }
        var clock: SimulatedClock? { keep.lazy.compactMap { $0 as? SimulatedClock }.first }
        var plasma: FakePlasmaNotifications? { keep.lazy.compactMap { $0 as? FakePlasmaNotifications }.first }
        var wayland: WaylandDesktop? { keep.lazy.compactMap { $0 as? WaylandDesktop }.first }
        /// The [focus] lines beside do_not_disturb this desktop needs (its backend, its commands).
        var focusLines = ""

        init(name: String, daemon: DaemonUnderTest, keep: [AnyObject], isOn: @escaping () -> Bool?, turnOn: (() throws -> Void)?) {
            self.name = name
            self.daemon = daemon
            self.keep = keep
            self.isOn = isOn
            self.turnOn = turnOn
        }

        /// `simulatedClock`: the daemon's wall clock can be stepped (`clock`), for reminders.
        /// `extra`: more of the config file, after the [focus] section.
        static func make(_ name: String, doNotDisturb: Bool = true, simulatedClock: Bool = false, extra: String = "") throws
            -> FocusDesktop
        {
            let d = try DaemonUnderTest(launch: false)
            var lines = ""
            let desktop: FocusDesktop
            switch name {
            case "dunst":
                let bus = try SessionBus(directory: d.root)
                let dunst = try Dunst(directory: d.root, busAddress: bus.address)
                d.extraEnvironment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
                desktop = FocusDesktop(
                    name: name, daemon: d, keep: [bus, dunst], isOn: { dunst.isPaused }, turnOn: { try dunst.setPaused(true) })
            case "mako", "swaync":
                let wayland = try WaylandDesktop(name == "mako" ? .mako : .swaync)
                d.extraEnvironment["DBUS_SESSION_BUS_ADDRESS"] = wayland.busAddress
                let isOn: () -> Bool? = name == "mako" ? { wayland.makoModes.contains("do-not-disturb") } : { wayland.swayncDND }
                let on = name == "mako" ? ["/usr/bin/makoctl", "mode", "-a", "do-not-disturb"] : ["/usr/bin/swaync-client", "--dnd-on"]
                desktop = FocusDesktop(name: name, daemon: d, keep: [wayland], isOn: isOn, turnOn: { _ = wayland.run(on) })
            case "gnome":
                let bus = try SessionBus(directory: d.root)
                let settings = try GnomeSettings(
                    directory: d.root, busAddress: bus.address, configHome: d.configHome, runtimeDirectory: d.runtimeDir)
                d.extraEnvironment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
                d.extraEnvironment["GSETTINGS_BACKEND"] = "dconf"
                lines = "backend = gnome\n"
                desktop = FocusDesktop(
                    name: name, daemon: d, keep: [bus, settings], isOn: { settings.showBanners.map { !$0 } },
                    turnOn: { try settings.setShowBanners(false) })
            case "commands":
                // No notification server on the bus: the commands alone, which write the state down.
                let bus = try SessionBus(directory: d.root)
                d.extraEnvironment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
                let state = d.root + "/dnd-state"
                let enter = try d.writeScript("dnd-on", "#!/bin/sh\necho on > '\(state)'\n")
                let leave = try d.writeScript("dnd-off", "#!/bin/sh\necho off > '\(state)'\n")
                lines = "on_enter = \(enter)\non_leave = \(leave)\n"
                desktop = FocusDesktop(
                    name: name, daemon: d, keep: [bus], isOn: { readTextFile(state).trimmingWhitespace() == "on" }, turnOn: nil)
            default:
                let bus = try SessionBus(directory: d.root)
                let plasma = try FakePlasmaNotifications(busAddress: bus.address)
                d.extraEnvironment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
                desktop = FocusDesktop(
                    name: name, daemon: d, keep: [bus, plasma], isOn: { plasma.inhibited }, turnOn: { plasma.inhibitForAnotherProgram() })
            }
            desktop.focusLines = lines
            if simulatedClock {
                let clock = try SimulatedClock(directory: d.root)
                d.daemonEnvironment = try clock.environment
                desktop.keep.append(clock)
            }
            try d.writeConfig("[focus]\ndo_not_disturb = \(doNotDisturb ? "yes" : "no")\n" + lines + extra)
            try d.start()
            try d.addTask("Write", [("work", .string("25m"))])
            try d.addTask("Quick", [("work", .string("1s"))])
            return desktop
        }

        func waitFor(_ on: Bool, _ why: String) throws {
            try waitUntil("\(name): do not disturb \(on ? "on" : "off") \(why)", timeout: 10, diagnostics: daemon.diagnostics) {
                isOn() == on
            }
        }

        var status: JSON? { (try? daemon.ctlStatus())?["do_not_disturb"] }
    }

    static let focusServers: [String] = {
        var names: [String] = []
        if Dunst.unavailable == nil { names.append("dunst") }
        if WaylandDesktop.unavailable(.mako) == nil { names.append("mako") }
        if WaylandDesktop.unavailable(.swaync) == nil { names.append("swaync") }
        if GnomeSettings.unavailable == nil { names.append("gnome") }
        names.append("plasma")
        names.append("commands")
        return names
    }()

    @Suite("Focus: do not disturb during work, on every server, always put back", .serialized)
    struct Focus {
        @Test(
            "on at work start; off at stop (abandon), skip, pause and completion; status names the backend",
            arguments: EndToEnd.focusServers)
        func everyWayWorkEnds(_ server: String) throws {
            let desktop = try FocusDesktop.make(server)
            let d = desktop.daemon
            #expect(desktop.isOn() == false)
            // stop records the work as abandoned; a pause (as away with `pause`) lets notifications through.
            for ending in ["stop", "skip", "pause"] {
                try d.call("start", [("task", .string("Write"))])
                try desktop.waitFor(true, "at work start")
                #expect(desktop.status?["active"]?.boolValue == true, "\(desktop.status?.serialized ?? "")")
                #expect(desktop.status?["backend"]?.stringValue == server)
                try d.call(ending)
                try desktop.waitFor(false, "after \(ending)")
                #expect(desktop.status?["active"]?.boolValue == false)
                if ending != "stop" { try d.call("stop") }
            }
            try d.call("start", [("task", .string("Quick"))])
            try desktop.waitFor(true, "at work start")
            try desktop.waitFor(false, "after the work completed")
            let checks = try d.call("doctor")["checks"]?.arrayValue ?? []
            let focus = checks.first { $0["name"]?.stringValue == "focus" }
            #expect(focus?["state"]?.stringValue == "ok", "\(focus?.serialized ?? "no focus check")")
            #expect(focus?["detail"]?.stringValue?.contains("backend \(server)") == true, "\(focus?.serialized ?? "")")
        }

        @Test(
            "dunst: another program's notification during work waits and is shown after; diligence's end of work is shown at once",
            .enabled(if: Dunst.unavailable == nil))
        func heldThenShown() throws {
            let desktop = try FocusDesktop.make("dunst")
            let d = desktop.daemon
            let address = d.extraEnvironment["DBUS_SESSION_BUS_ADDRESS"] ?? ""
            let dunst = try #require(desktop.dunst)
            try d.call("start", [("task", .string("Write"))])
            try desktop.waitFor(true, "at work start")
            let sent = try runProgram(
                [
                    "/usr/bin/busctl", "--user", "call", "--", "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
                    "org.freedesktop.Notifications", "Notify", "susssasa{sv}i", "chat", "0", "", "New message", "hello", "0", "0", "-1",
                ], environment: ["PATH": "/usr/bin:/bin", "DBUS_SESSION_BUS_ADDRESS": address], directory: d.root)
            try #require(sent.succeeded, "\(sent)")
            try waitUntil("dunst holds it back", timeout: 5) { dunst.waiting == 1 && dunst.displayed == 0 }
            try d.call("stop")
            try waitUntil("dunst shows it once the work ended", timeout: 5) { dunst.waiting == 0 && dunst.displayed == 1 }
            try d.call("start", [("task", .string("Quick"))])
            try desktop.waitFor(true, "at work start")
            try waitUntil("diligence's end of work is shown, not held", timeout: 10, diagnostics: d.diagnostics) {
                desktop.isOn() == false && dunst.displayed == 2 && dunst.waiting == 0
            }
        }

        /// dunst holds every notification while paused, critical ones too (1.9), and pausing again
        /// takes a shown one back into its queue.
        @Test(
            "dunst: a reminder during guarded work is shown, and the pause comes back once it is closed",
            .enabled(if: Dunst.unavailable == nil))
        func reminderShown() throws {
            let desktop = try FocusDesktop.make("dunst", simulatedClock: true)
            let d = desktop.daemon
            let dunst = try #require(desktop.dunst)
            let clock = try #require(desktop.clock)
            let pid = try #require(d.process?.pid)
            // A minute at least a minute ahead (the daemon runs in UTC), reached by stepping its clock.
            let target = (floor(clock.daemonWall / 60) + 2) * 60
            let minute = Int(target / 60) % (24 * 60)
            let edit = try d.ctl("task", "edit", "Quick", "--reminder", String(format: "%02d:%02d", minute / 60, minute % 60))
            #expect(edit.exitCode == 0, "\(edit)")
            try d.call("start", [("task", .string("Write"))])
            try desktop.waitFor(true, "at work start")
            try clock.stepWall(target - clock.daemonWall - 1, pid: pid)
            try waitUntil("the reminder is shown, not held", timeout: 10, diagnostics: d.diagnostics) {
                (dunst.displayed ?? 0) >= 1
            }
            #expect(try d.status()["state"]?.stringValue == "running")
            #expect(desktop.status?["active"]?.boolValue == true, "the work is still guarded")
            let closed = try runProgram(
                ["/usr/bin/dunstctl", "close-all"], environment: dunst.environmentForTools, directory: dunst.directoryForTools)
            #expect(closed.succeeded, "\(closed)")
            try desktop.waitFor(true, "once the reminder was closed")
            try d.call("stop")
            try desktop.waitFor(false, "after stop")
        }

        @Test(
            "dunst restarted during work is paused again; at the end the state found before the work is put back",
            .enabled(if: Dunst.unavailable == nil), arguments: [false, true])
        func serverRestarted(_ pausedBefore: Bool) throws {
            let desktop = try FocusDesktop.make("dunst")
            let d = desktop.daemon
            let dunst = try #require(desktop.dunst)
            if pausedBefore { try dunst.setPaused(true) }
            try d.call("start", [("task", .string("Write"))])
            try waitUntil("the guard is on", timeout: 10) { desktop.status?["active"]?.boolValue == true }
            try desktop.waitFor(true, "at work start")
            try dunst.restart()
            try desktop.waitFor(true, "after dunst restarted")
            try d.call("stop")
            try waitUntil("the guard is off", timeout: 10) { desktop.status?["active"]?.boolValue == false }
            sleepFor(0.3)
            #expect(desktop.isOn() == pausedBefore, "\(d.diagnostics)")
        }

        @Test("do not disturb the user had on stays on after the work", arguments: EndToEnd.focusServers.filter { $0 != "commands" })
        func previousStateKept(_ server: String) throws {
            let desktop = try FocusDesktop.make(server)
            try desktop.turnOn?()
            try desktop.waitFor(true, "as the user set it")
            try desktop.daemon.call("start", [("task", .string("Write"))])
            try waitUntil("the guard is on", timeout: 10) { desktop.status?["active"]?.boolValue == true }
            try desktop.daemon.call("stop")
            try waitUntil("the guard is off", timeout: 10) { desktop.status?["active"]?.boolValue == false }
            sleepFor(0.3)
            #expect(desktop.isOn() == true)
        }

        @Test(
            "SIGKILL during work: the restarted daemon keeps it while the work runs on, and puts it back at stop",
            arguments: EndToEnd.focusServers)
        func crashThenRestart(_ server: String) throws {
            let desktop = try FocusDesktop.make(server)
            let d = desktop.daemon
            try d.call("start", [("task", .string("Write"))])
            try desktop.waitFor(true, "at work start")
            d.kill()
            try d.start()
            try desktop.waitFor(true, "after the restart, the work running on")
            #expect(desktop.status?["active"]?.boolValue == true)
            try d.call("stop")
            try desktop.waitFor(false, "after stop")
        }

        @Test(
            "a task's own --dnd: on under do_not_disturb = no, off under yes; default follows the config",
            arguments: [false, true])
        func perTaskSetting(_ configured: Bool) throws {
            let desktop = try FocusDesktop.make("plasma", doNotDisturb: configured)
            let d = desktop.daemon
            func work(expecting on: Bool, _ why: String) throws {
                try d.call("start", [("task", .string("Write"))])
                if on {
                    try desktop.waitFor(true, why)
                } else {
                    // Time for a guard that would enter to reach the server.
                    sleepFor(0.5)
                    #expect(desktop.isOn() == false, "\(why)\n\(d.diagnostics)")
                    #expect(desktop.status?["active"]?.boolValue == false)
                }
                try d.call("stop")
                try desktop.waitFor(false, "after stop")
            }
            let own = try d.ctl("task", "edit", "Write", "--dnd", configured ? "off" : "on")
            #expect(own.exitCode == 0, "\(own)")
            try work(expecting: !configured, "the task's own --dnd \(configured ? "off" : "on")")
            let back = try d.ctl("task", "edit", "Write", "--dnd", "default")
            #expect(back.exitCode == 0, "\(back)")
            try work(expecting: configured, "--dnd default, do_not_disturb = \(configured ? "yes" : "no")")
        }

        @Test("the daemon's exit puts it back", arguments: EndToEnd.focusServers)
        func exitPutsBack(_ server: String) throws {
            let desktop = try FocusDesktop.make(server)
            try desktop.daemon.call("start", [("task", .string("Write"))])
            try desktop.waitFor(true, "at work start")
            desktop.daemon.signal(SIGTERM)
            _ = try desktop.daemon.waitExit()
            try desktop.waitFor(false, "after the daemon's exit")
        }
    }
}
