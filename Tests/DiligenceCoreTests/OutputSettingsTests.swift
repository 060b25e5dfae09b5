import DiligenceCore
import Testing

@Suite struct OutputSettingsTests {
    @Test func defaults() throws {
        let c = try DaemonConfig.parse("")
        #expect(c.notifications.enabled)
        #expect(c.notifications.urgency == .normal)
        #expect(c.notifications.timeoutMilliseconds == nil)
        #expect(c.hooks.commands.isEmpty)
        #expect(c.hooks.timeoutSeconds == 30)
        #expect(c.sound.player == nil)
        #expect(c.sound.endOfPhase && c.sound.ambient)
    }

    @Test func readsEverySection() throws {
        let c = try DaemonConfig.parse(
            """
            [notifications]
            enabled = false
            urgency = critical
            timeout = 10s
            [hooks]
            on_work_end = "/home/me/bin/log pomodoro" --done
            on_reminder = sh -c 'notify-send "$DILIGENCE_TASK"'
            timeout = 5
            [sound]
            player = mpv --no-video
            end_of_phase = off
            ambient = no
            directory = ~/sounds
            """)
        #expect(!c.notifications.enabled)
        #expect(c.notifications.urgency == .critical)
        #expect(c.notifications.timeoutMilliseconds == 10_000)
        #expect(c.hooks.commands["work_end"] == ["/home/me/bin/log pomodoro", "--done"])
        #expect(c.hooks.commands["reminder"] == ["sh", "-c", "notify-send \"$DILIGENCE_TASK\""])
        #expect(c.hooks.timeoutSeconds == 5)
        #expect(c.sound.player == ["mpv", "--no-video"])
        #expect(!c.sound.endOfPhase && !c.sound.ambient)
        #expect(c.sound.directory == "~/sounds")
    }

    @Test(arguments: [
        ("[hooks]\non_lunch = true", "line 2"),
        ("[hooks]\non_work_end = ", "line 2"),
        ("[hooks]\non_work_end = 'unclosed", "line 2"),
        ("[hooks]\ntimeout = soon", "line 2"),
        ("[notifications]\nurgency = loud", "line 2"),
        ("[notifications]\nvolume = 3", "line 2"),
        ("\n[sound]\nend_of_phase = maybe", "line 3"),
        ("[sound]\ndirectory = relative/dir", "line 2"),
    ])
    func badSettingsNameTheirLine(text: String, line: String) {
        do {
            _ = try DaemonConfig.parse(text)
            Issue.record("accepted \(text.debugDescription)")
        } catch {
            #expect(error.code.rawValue == "invalid_config")
            #expect(error.message.contains(line), "\(error.message)")
        }
    }
}
