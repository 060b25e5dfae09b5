import DiligenceCore
import Testing

@Suite struct FocusSettingsTests {
    @Test func defaultsLeaveNotificationsAlone() throws {
        let c = try DaemonConfig.parse("")
        #expect(!c.focus.doNotDisturb)
        #expect(c.focus.backend == .auto)
        #expect(c.focus.onEnter == nil && c.focus.onLeave == nil)
    }

    @Test func aTasksOwnSettingWinsOverDoNotDisturb() {
        var focus = FocusSettings()
        #expect(!focus.doNotDisturb(for: TaskConfig(name: "A")))
        #expect(focus.doNotDisturb(for: TaskConfig(name: "A", doNotDisturb: true)))
        focus.doNotDisturb = true
        #expect(focus.doNotDisturb(for: TaskConfig(name: "A")))
        #expect(focus.doNotDisturb(for: nil))
        #expect(!focus.doNotDisturb(for: TaskConfig(name: "A", doNotDisturb: false)))
    }

    @Test func readsTheSection() throws {
        let c = try DaemonConfig.parse(
            """
            [focus]
            do_not_disturb = yes
            backend = mako
            on_enter = makoctl mode -a "deep work"
            on_leave = makoctl mode -r "deep work"
            """)
        #expect(c.focus.doNotDisturb)
        #expect(c.focus.backend == .mako)
        #expect(c.focus.onEnter == ["makoctl", "mode", "-a", "deep work"])
        #expect(c.focus.onLeave == ["makoctl", "mode", "-r", "deep work"])
    }

    @Test(arguments: ["auto", "dunst", "mako", "swaync", "gnome", "plasma", "commands"])
    func everyBackendName(_ name: String) throws {
        let c = try DaemonConfig.parse("[focus]\nbackend = \(name)\non_enter = true\non_leave = true\n")
        #expect(c.focus.backend.rawValue == name)
    }

    @Test func badValuesNameTheLine() {
        #expect(throws: DiligenceError.self) { try DaemonConfig.parse("[focus]\nbackend = xfce\n") }
        #expect(throws: DiligenceError.self) { try DaemonConfig.parse("[focus]\ndo_not_disturb = maybe\n") }
        #expect(throws: DiligenceError.self) { try DaemonConfig.parse("[focus]\non_enter = \n") }
        do {
            _ = try DaemonConfig.parse("[focus]\nbackend = xfce\n")
        } catch {
            #expect(error.message.contains("line 2 ([focus] backend)"))
            #expect(error.message.contains("plasma"))
        }
    }

    @Test func pairedCommandsComeTogether() {
        // A leave is owed for every enter: one without the other is refused.
        #expect(throws: DiligenceError.self) { try DaemonConfig.parse("[focus]\non_enter = true\n") }
        #expect(throws: DiligenceError.self) { try DaemonConfig.parse("[focus]\nbackend = commands\n") }
    }
}
