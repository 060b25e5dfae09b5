// `diligencectl doctor` against the real daemon: a minimal system where notifications, sound and
// a hook cannot work says what to install, and a real dunst on a session bus is named.

import DiligenceJSON
import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EndToEnd {
    @Suite("doctor: what works for the running daemon, and what to install")
    struct Doctor {
        /// The checks of `doctor` by name.
        static func checks(_ d: DaemonUnderTest) throws -> [String: JSON] {
            let answer = try d.call("doctor")
            let checks = try #require(answer["checks"]?.arrayValue, "\(answer.serialized)")
            #expect(
                checks.map { $0["name"]?.stringValue ?? "?" } == [
                    "notifications", "sound", "presence", "sync", "hooks", "database", "focus", "timewarrior", "config",
                ])
            return Dictionary(uniqueKeysWithValues: checks.map { ($0["name"]?.stringValue ?? "?", $0) })
        }

        @Test("the config's do-not-disturb off but a task's dnd on: the focus check names that task, not off")
        func aTaskOfItsOwnTurnsDoNotDisturbOn() throws {
            let d = try DaemonUnderTest()
            #expect(try d.ctl("task", "add", "Deep", "--dnd", "on").exitCode == 0)
            let focus = try #require(try Self.checks(d)["focus"])
            #expect(focus["state"]?.stringValue != "off", "\(focus.serialized)")
            #expect(focus["detail"]?.stringValue?.hasPrefix("on for the task(s) Deep ") == true, "\(focus.serialized)")
            let text = try d.ctl("doctor")
            #expect(text.stdout.contains("on for the task(s) Deep"), "\(text)")
        }

        @Test("a minimal system: no session bus, no sound player, a hook's program missing — each a problem with its fix")
        func minimalSystem() throws {
            let d = try DaemonUnderTest(launch: false)
            let empty = d.root + "/bin"
            mkdir(empty, 0o755)
            try d.writeConfig("[hooks]\non_work_start = no-such-program --flag\non_stop = /bin/true\n")
            d.extraEnvironment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(d.root)/no-bus"
            d.daemonEnvironment["PATH"] = empty
            try d.start()
            let checks = try Self.checks(d)
            let notifications = try #require(checks["notifications"])
            #expect(notifications["state"]?.stringValue == "problem", "\(notifications.serialized)")
            #expect(notifications["fix"]?.stringValue?.contains("dbus-user-session") == true, "\(notifications.serialized)")
            let sound = try #require(checks["sound"])
            #expect(sound["state"]?.stringValue == "problem" && sound["detail"]?.stringValue?.contains("pw-play, paplay, aplay") == true)
            #expect(sound["fix"]?.stringValue?.contains("pipewire-bin (pw-play)") == true, "\(sound.serialized)")
            let hooks = try #require(checks["hooks"])
            #expect(hooks["state"]?.stringValue == "problem", "\(hooks.serialized)")
            #expect(hooks["detail"]?.stringValue == "not found or not executable: on_work_start (no-such-program)", "\(hooks.serialized)")
            #expect(checks["sync"]?["state"]?.stringValue == "off" && checks["sync"]?["fix"] == nil)
            #expect(checks["presence"]?["state"]?.stringValue == "problem", "\(checks["presence"]?.serialized ?? "")")

            let text = try d.ctl("doctor")
            #expect(text.exitCode == 0, "\(text)")
            let lines = text.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("notifications problem  no session bus") == true, "\(text.stdout)")
            #expect(lines.contains { $0.hasPrefix("              → install pipewire-bin") }, "\(text.stdout)")
            #expect(lines.contains("sync          off      off (diligencectl sync enable DIR turns it on)"), "\(text.stdout)")
        }

        @Test(
            "a real dunst on the session bus and a sound player: both ok, dunst named",
            .enabled(if: Dunst.unavailable == nil, "\(Dunst.unavailable ?? "")"))
        func dunstAndAPlayer() throws {
            let d = try DaemonUnderTest(launch: false)
            let bus = try SessionBus(directory: d.root)
            let dunst = try Dunst(directory: d.root, busAddress: bus.address)
            defer { withExtendedLifetime((bus, dunst)) {} }
            let chime = d.root + "/chime.oga"
            try "not really ogg".write(toFile: chime, atomically: true, encoding: .utf8)
            try d.writeConfig("[sound]\nplayer = /bin/true\nend_of_phase = \(chime)\n")
            d.extraEnvironment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
            try d.start()
            let checks = try Self.checks(d)
            let notifications = try #require(checks["notifications"])
            #expect(notifications["state"]?.stringValue == "ok", "\(notifications.serialized)\n\(d.diagnostics)")
            #expect(notifications["detail"]?.stringValue?.hasPrefix("dunst ") == true, "\(notifications.serialized)")
            #expect(
                checks["sound"]?["state"]?.stringValue == "ok"
                    && checks["sound"]?["detail"] == .string("/bin/true \(chime) at each phase end"))
            #expect(checks["hooks"]?["state"]?.stringValue == "off")
        }
    }
}
