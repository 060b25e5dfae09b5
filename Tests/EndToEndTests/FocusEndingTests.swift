import DiligenceJSON
import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// Issue 29, the rest of its list on every server: presence ends the work (away with pause, a
// strict failure), a crash whose restart does not resume the guarded work, a server restarted
// during the work, a task's --dnd changed while its work runs, an unavailable backend logged
// once, and another program's notification kept during the work.
extension EndToEnd {
    /// Another program's notification, sent with busctl on `address`.
    static func notifyAsAnotherProgram(_ address: String, directory: String) throws {
        let sent = try runProgram(
            [
                "/usr/bin/busctl", "--user", "call", "--", "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
                "org.freedesktop.Notifications", "Notify", "susssasa{sv}i", "chat", "0", "", "New message", "hello", "0", "0", "-1",
            ], environment: ["PATH": "/usr/bin:/bin", "DBUS_SESSION_BUS_ADDRESS": address], directory: directory)
        guard sent.succeeded else { throw HarnessError("busctl Notify: \(sent)") }
    }

    @Suite("Focus: presence, crashes, restarts and edits on every server", .serialized)
    struct FocusEndings {
        @Test(
            "away with on_away = pause lets notifications through until back; a strict failure ends the guard",
            arguments: EndToEnd.focusServers)
        func presenceEndsTheWork(_ server: String) throws {
            let desktop = try FocusDesktop.make(server, extra: "[presence]\non_away = pause\nstrict_grace = 0s\n[timer]\nmin_session = 0\n")
            let d = desktop.daemon
            try d.addTask("Strict", [("work", .string("1h")), ("focus_mode", .bool(true))])
            try d.call("start", [("task", .string("Write"))])
            try desktop.waitFor(true, "at work start")
            try d.call("away")
            #expect(try d.status()["state"]?.stringValue == "paused")
            try desktop.waitFor(false, "while away paused the work")
            try d.call("back")
            try desktop.waitFor(true, "once back resumed the work")
            try d.call("stop")
            try desktop.waitFor(false, "after stop")
            try d.call("start", [("task", .string("Strict"))])
            try desktop.waitFor(true, "at strict work start")
            try d.call("away")
            try desktop.waitFor(false, "after the strict work failed")
            #expect(try d.status()["state"]?.stringValue == "idle")
            #expect(try d.sqlite("SELECT reason FROM sessions ORDER BY id DESC LIMIT 1") == [["left"]])
            #expect(desktop.status?["active"]?.boolValue == false)
        }

        /// The work goes on after the restart, but the config no longer guards it: the record the
        /// killed daemon saved is what puts the server back, not a work end.
        @Test(
            "SIGKILL during work, restarted without the guard: the state found before is put back at start",
            arguments: EndToEnd.focusServers)
        func crashThenRestore(_ server: String) throws {
            let desktop = try FocusDesktop.make(server)
            let d = desktop.daemon
            for userHadItOn in desktop.turnOn == nil ? [false] : [false, true] {
                try d.writeConfig("[focus]\ndo_not_disturb = yes\n\(desktop.focusLines)")
                try d.call("reload")
                if userHadItOn { try desktop.turnOn?() }
                try d.call("start", [("task", .string("Write"))])
                try waitUntil("the guard is on", timeout: 10) { desktop.status?["active"]?.boolValue == true }
                try desktop.waitFor(true, "at work start")
                d.kill()
                // Plasma's cookie went with the killed daemon's connection.
                if server == "plasma" && !userHadItOn { try desktop.waitFor(false, "once the bus dropped the killed daemon") }
                try d.writeConfig("[focus]\ndo_not_disturb = no\n\(desktop.focusLines)")
                try d.start()
                #expect(try d.status()["state"]?.stringValue == "running", "the work runs on")
                try desktop.waitFor(userHadItOn, "put back at the restart")
                try waitUntil("the record is forgotten", timeout: 10, diagnostics: d.diagnostics) {
                    (try? d.sqlite("SELECT count(*) FROM database_info WHERE name = 'focus_guard'")) == [["0"]]
                }
                #expect(desktop.status?["active"]?.boolValue == false)
                try d.call("stop")
            }
        }

        @Test(
            "the server restarted during work (a new Plasma, mako, swaync) has do not disturb again, and it is lifted at stop",
            arguments: EndToEnd.focusServers.filter { ["plasma", "mako", "swaync"].contains($0) })
        func serverRestarted(_ server: String) throws {
            let desktop = try FocusDesktop.make(server)
            let d = desktop.daemon
            try d.call("start", [("task", .string("Write"))])
            try desktop.waitFor(true, "at work start")
            if let plasma = desktop.plasma {
                plasma.restart()
                // The new Plasma knows no inhibition: only a new Inhibit holds notifications back again.
                try waitUntil("Inhibit is called again", timeout: 10, diagnostics: d.diagnostics) { plasma.inhibitCalls == 2 }
            } else {
                try #require(desktop.wayland).restartServer()
                if server == "mako" { #expect(desktop.wayland?.makoModes == ["default"], "a new mako starts in its default mode") }
            }
            try desktop.waitFor(true, "after the server restarted")
            try d.call("stop")
            try desktop.waitFor(false, "after stop: the new server's do not disturb is lifted")
        }

        @Test("task edit --dnd while the work runs enters or leaves the guard at once", arguments: [false, true])
        func editDuringWork(_ configured: Bool) throws {
            let desktop = try FocusDesktop.make("plasma", doNotDisturb: configured)
            let d = desktop.daemon
            try d.call("start", [("task", .string("Write"))])
            try desktop.waitFor(configured, "at work start, as the config says")
            for (word, on) in [(configured ? "off" : "on", !configured), ("default", configured), (configured ? "off" : "on", !configured)]
            {
                let edit = try d.ctl("task", "edit", "Write", "--dnd", word)
                #expect(edit.exitCode == 0, "\(edit)")
                try desktop.waitFor(on, "after task edit --dnd \(word) during the work")
                #expect(desktop.status?["active"]?.boolValue == on)
            }
            #expect(try d.status()["state"]?.stringValue == "running", "the work runs on")
            try d.call("stop")
            try desktop.waitFor(false, "after stop")
        }

        @Test("a reload that turns do_not_disturb on or off during the work enters or leaves the guard at once")
        func reloadDuringWork() throws {
            let desktop = try FocusDesktop.make("plasma", doNotDisturb: false)
            let d = desktop.daemon
            try d.call("start", [("task", .string("Write"))])
            for on in [true, false, true] {
                try d.writeConfig("[focus]\ndo_not_disturb = \(on ? "yes" : "no")\n")
                try d.call("reload")
                try desktop.waitFor(on, "after a reload with do_not_disturb = \(on ? "yes" : "no") during the work")
                #expect(desktop.status?["active"]?.boolValue == on)
            }
            #expect(try d.status()["state"]?.stringValue == "running", "the work runs on")
            try d.call("stop")
            try desktop.waitFor(false, "after stop")
        }

        @Test("on_enter and on_leave beside a server backend come in pairs, the leave owed run after a crash and restart")
        func commandsBesideAServer() throws {
            let root = TestRun.makeDirectory(in: TestRun.temporaryBase, prefix: "focus-commands")
            defer { try? FileManager.default.removeItem(atPath: root) }
            let log = root + "/commands"
            let enter = root + "/enter"
            let leave = root + "/leave"
            for (path, word) in [(enter, "enter"), (leave, "leave")] {
                try "#!/bin/sh\necho \(word) >> '\(log)'\n".write(toFile: path, atomically: true, encoding: .utf8)
                chmod(path, 0o755)
            }
            let commands = "on_enter = \(enter)\non_leave = \(leave)\n"
            let desktop = try FocusDesktop.make("plasma", extra: commands)
            let d = desktop.daemon
            let ran = { readTextFile(log).split(separator: "\n").map(String.init) }
            try d.call("start", [("task", .string("Write"))])
            try desktop.waitFor(true, "at work start")
            try waitUntil("on_enter ran", timeout: 10, diagnostics: d.diagnostics) { ran() == ["enter"] }
            try d.call("stop")
            try desktop.waitFor(false, "after stop")
            try waitUntil("on_leave ran", timeout: 10, diagnostics: d.diagnostics) { ran() == ["enter", "leave"] }
            try d.call("start", [("task", .string("Write"))])
            try waitUntil("on_enter ran again", timeout: 10, diagnostics: d.diagnostics) { ran().count == 3 }
            d.kill()
            try d.writeConfig("[focus]\ndo_not_disturb = no\n" + commands)
            try d.start()
            try waitUntil("the owed on_leave ran at the restart", timeout: 10, diagnostics: d.diagnostics) {
                ran() == ["enter", "leave", "enter", "leave"]
            }
            #expect(desktop.isOn() == false)
            #expect(desktop.status?["active"]?.boolValue == false)
        }

        @Test("a backend that is not there is logged once, however many work phases", arguments: ["dunst", "mako", "swaync", "plasma"])
        func unavailableLoggedOnce(_ backend: String) throws {
            let d = try DaemonUnderTest(launch: false)
            // A session bus with no notification server on it.
            let bus = try SessionBus(directory: d.root)
            d.extraEnvironment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
            try d.writeConfig("[focus]\ndo_not_disturb = yes\nbackend = \(backend)\n")
            try d.start()
            try d.addTask("Write", [("work", .string("25m"))])
            for _ in 0..<3 {
                try d.call("start", [("task", .string("Write"))])
                #expect(try d.status()["state"]?.stringValue == "running")
                sleepFor(0.5)
                try d.call("stop")
            }
            let log = try #require(d.stderrPaths.last.map(readTextFile))
            let said = log.components(separatedBy: "Do not disturb (\(backend)) is not available").count - 1
            #expect(said == 1, "\(log)")
            withExtendedLifetime(bus) {}
        }

        @Test(
            "Plasma: another program's notification is held during work and shown after; diligence's end of work is not held")
        func plasmaHeldThenShown() throws {
            let desktop = try FocusDesktop.make("plasma")
            let d = desktop.daemon
            let plasma = try #require(desktop.plasma)
            try d.call("start", [("task", .string("Write"))])
            try desktop.waitFor(true, "at work start")
            try EndToEnd.notifyAsAnotherProgram(d.extraEnvironment["DBUS_SESSION_BUS_ADDRESS"] ?? "", directory: d.root)
            #expect(plasma.held == 1 && plasma.shown == 0)
            try d.call("stop")
            try waitUntil("Plasma shows it once the work ended", timeout: 5) { plasma.held == 0 && plasma.shown == 1 }
            try d.call("start", [("task", .string("Quick"))])
            try desktop.waitFor(true, "at work start")
            try waitUntil("diligence's end of work is shown, not held", timeout: 10, diagnostics: d.diagnostics) {
                plasma.shown == 2 && plasma.held == 0 && plasma.inhibited == false
            }
        }

        /// A reminder during guarded work goes out as critical, which Plasma shows during
        /// do-not-disturb.
        @Test("Plasma: a reminder during guarded work is sent as critical and shown; the guard holds on")
        func plasmaReminderDuringWork() throws {
            let desktop = try FocusDesktop.make("plasma", simulatedClock: true)
            let d = desktop.daemon
            let plasma = try #require(desktop.plasma)
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
            try waitUntil("Plasma shows the reminder", timeout: 10, diagnostics: d.diagnostics) { plasma.shown == 1 && plasma.held == 0 }
            #expect(desktop.isOn() == true, "the work is still guarded")
            #expect(desktop.status?["active"]?.boolValue == true)
            try d.call("stop")
            try desktop.waitFor(false, "after stop")
        }

        /// mako keeps a notification invisible in the do-not-disturb mode, swaync keeps it in its
        /// control centre: in both it is still there, in the list their clients read, when the
        /// work ends.
        @Test(
            "mako and swaync: another program's notification during work is kept, and still there after",
            arguments: EndToEnd.focusServers.filter { $0 == "mako" || $0 == "swaync" })
        func waylandKept(_ server: String) throws {
            let desktop = try FocusDesktop.make(server)
            let d = desktop.daemon
            let wayland = try #require(desktop.wayland)
            let count: () -> Int? =
                server == "mako"
                ? {
                    (wayland.run(["/usr/bin/makoctl", "list"]).flatMap { try? JSON.parse($0) }?["data"]?.arrayValue?.first?.arrayValue?
                        .count)
                }
                : { wayland.run(["/usr/bin/swaync-client", "-c"]).flatMap { Int($0) } }
            #expect(count() == 0)
            try d.call("start", [("task", .string("Write"))])
            try desktop.waitFor(true, "at work start")
            try EndToEnd.notifyAsAnotherProgram(wayland.busAddress, directory: d.root)
            try waitUntil("\(server) keeps it during the work", timeout: 5) { count() == 1 }
            try d.call("stop")
            try desktop.waitFor(false, "after stop")
            #expect(count() == 1, "still there once do not disturb is lifted")
        }
    }
}
