import DiligenceCore
import Testing

@Suite struct ConfigTests {
    @Test func defaultsWithoutAnything() throws {
        #expect(try DaemonConfig.parse("") == DaemonConfig())
        #expect(DaemonConfig().suspend == .pause)
    }

    /// A file written on Windows, or by an editor that marks UTF-8 (issue 26: refused as "a
    /// section header looks like [timer]", and the BOM as an unknown key).
    @Test("a config with CRLF line ends, a UTF-8 BOM, or both reads as the same file with LF ends")
    func crlfAndByteOrderMark() throws {
        let text = "[timer]\nsuspend = continue\n\n[stats]\nday_starts_at = 04:00\n"
        let plain = try DaemonConfig.parse(text)
        #expect(plain.suspend == .continue)
        let crlf = text.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n")
        for variant in [crlf, "\u{FEFF}" + text, "\u{FEFF}" + crlf] {
            #expect(try DaemonConfig.parse(variant) == plain, "\(variant.debugDescription)")
        }
        // Lines keep their numbers: the bad value on line 7 of a CRLF file with a BOM is line 7's.
        let error = try #require(throws: DiligenceError.self) {
            try DaemonConfig.parse("\u{FEFF}" + crlf + "[timer]\r\nsuspend = never\r\n")
        }
        #expect(error.code.rawValue == "invalid_config" && error.message.contains("line 7"), "\(error.message)")
    }

    @Test func readsEveryKnownSetting() throws {
        let c = try DaemonConfig.parse(
            """
            # comment
            ; another
            [timer]
            suspend = continue
            min_session = 90s

            [stats]
            day_starts_at = "04:30"
            [daemon]
            allow_root = yes
            """)
        #expect(c.suspend == .continue)
        #expect(c.minSession == 90)
        #expect(DaemonConfig().minSession == 60)
        #expect(try DaemonConfig.parse("[timer]\nmin_session = 0").minSession == 0)
        #expect(try DaemonConfig.parse("[timer]\nmin_session = 1h").minSession == 3600)
        #expect(c.dayStartsAt == 4 * 60 + 30)
        #expect(c.allowRoot)
    }

    @Test func syncNameFollowsTheDeviceNameRules() throws {
        #expect(try DaemonConfig.parse("[sync]\nname =  Laptop de Zoe\u{301} ").deviceName == "Laptop de Zoé")
        #expect(DaemonConfig().deviceName == nil)
    }

    @Test(arguments: [
        ("[timer]\nsuspend = maybe", "line 2"),
        ("[timer]\nsuspnd = pause", "line 2"),
        ("[timer]\nmin_session = 61m", "line 2"),
        ("[timer]\nmin_session = soon", "line 2"),
        ("\n\n[stats]\nday_starts_at = 25:00", "line 4"),
        ("[daemon\n", "line 1"),
        ("[daemon]\nallow_root", "line 2"),
        ("[daemon]\n= true", "line 2"),
        ("[sync]\nname = zero\u{200B}width", "line 2"),
    ])
    func errorsNameTheLine(_ text: String, _ line: String) {
        #expect {
            _ = try DaemonConfig.parse(text)
        } throws: { error in
            let e = error as? DiligenceError
            return e?.code.rawValue == "invalid_config" && e?.message.contains(line) == true
        }
    }
}

/// A mistyped config key names the one meant, in its section or the right one.
@Suite struct ConfigSuggestionTests {
    @Test(arguments: [
        ("[stats]\nday_start_at = 04:00", "Did you mean day_starts_at?"),
        ("[timer]\nday_starts_at = 04:00", "Did you mean [stats] day_starts_at?"),
        ("[notifications]\nurgancy = low", "Did you mean urgency?"),
        ("[hooks]\non_work_endd = /bin/true", "Did you mean on_work_end?"),
    ])
    func didYouMean(_ text: String, _ hint: String) {
        #expect {
            _ = try DaemonConfig.parse(text)
        } throws: { error in
            (error as? DiligenceError)?.message.contains(hint) == true
        }
    }
}

/// After a confident suggestion the message stops: the ~45 known keys are listed only when
/// nothing is close.
@Suite struct ConfigSuggestionLengthTests {
    func message(_ text: String) -> String {
        do {
            _ = try DaemonConfig.parse(text)
            return "accepted"
        } catch { return error.message }
    }

    @Test func noKnownListAfterASuggestion() {
        let suggested = message("[stats]\nday_start_at = 04:00")
        #expect(suggested.contains("Did you mean day_starts_at?"), "\(suggested)")
        #expect(!suggested.contains("Known:") && suggested.count < 250, "\(suggested.count): \(suggested)")
        let lost = message("[stats]\nqwertyuiop = 1")
        #expect(lost.contains("Known: ") && lost.contains("[stats] day_starts_at"), "\(lost)")
    }
}

/// `[presence]`: each value checked against its range where it enters.
@Suite struct PresenceConfigTests {
    @Test func defaults() {
        let p = DaemonConfig().presence
        #expect(p.idleAfter == 300)
        #expect(p.onAway == .pause)
        #expect(p.strictGrace == 10)
    }

    @Test func readsEverySetting() throws {
        let c = try DaemonConfig.parse("[presence]\nidle_after = 2m\non_away = continue\nstrict_grace = 0")
        #expect(c.presence == PresenceSettings(idleAfter: 120, onAway: .continue, strictGrace: 0))
        #expect(try DaemonConfig.parse("[presence]\nidle_after = 1h").presence.idleAfter == 3600)
        #expect(try DaemonConfig.parse("[presence]\nstrict_grace = 10m").presence.strictGrace == 600)
    }

    @Test(arguments: [
        ("[presence]\nidle_after = 61m", "idle_after is a duration from 0s to 1h"),
        ("[presence]\nidle_after = later", "idle_after"),
        ("[presence]\nstrict_grace = 11m", "strict_grace is a duration from 0s to 10m"),
        ("[presence]\non_away = sleep", "on_away is one of pause, continue, abandon"),
        ("[presence]\nidle = 5m", "Did you mean idle_after?"),
    ])
    func refusesWhatIsOutOfRange(_ text: String, _ message: String) {
        #expect {
            _ = try DaemonConfig.parse(text)
        } throws: { error in
            let e = error as? DiligenceError
            return e?.code.rawValue == "invalid_config" && e?.message.contains("line 2") == true && e?.message.contains(message) == true
        }
    }
}
