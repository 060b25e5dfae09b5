import DiligenceCore
import Testing

/// `[daemon] on_bad_config`: refuse (default) or start with defaults for the bad lines.
@Suite struct BadConfigPolicyTests {
    static let bad = """
        [timer]
        suspend = sometimes
        [stats]
        day_starts_at = 04:00
        colour = blue
        """

    @Test func refuseIsTheDefaultAndSaysHowToFixIt() {
        #expect {
            _ = try DaemonConfig.parse(Self.bad)
        } throws: { error in
            let e = error as? DiligenceError
            return e?.code.rawValue == "invalid_config"
                && e?.message.hasPrefix("line 2 ([timer] suspend)") == true
                && e?.message.contains("and 1 more bad line") == true
                && e?.message.contains("on_bad_config = defaults") == true
        }
    }

    @Test func defaultsKeepsGoodValuesAndListsEveryBadLine() throws {
        // The switch counts wherever it stands, even after the bad lines.
        let config = try DaemonConfig.parse(Self.bad + "\n[daemon]\non_bad_config = defaults\n")
        #expect(config.suspend == .pause)
        #expect(config.dayStartsAt == 4 * 60)
        #expect(config.problems.count == 2)
        #expect(config.problems.first?.hasPrefix("line 2 ") == true)
        #expect(config.problems.last?.hasPrefix("line 5 ") == true)
        #expect(config.problems.allSatisfy { $0.hasSuffix("Using the default.") })
    }

    @Test func syntaxErrorsAreSkippedUnderDefaultsToo() throws {
        let config = try DaemonConfig.parse("[daemon]\non_bad_config = defaults\nthis is not a setting\n[timer]\nsuspend = continue\n")
        #expect(config.suspend == .continue)
        #expect(config.problems.map { $0.hasPrefix("line 3:") } == [true])
    }

    @Test func aBadPolicyValueIsItselfRefused() throws {
        let error = try #require(throws: DiligenceError.self) { _ = try DaemonConfig.parse("[daemon]\non_bad_config = maybe\n") }
        #expect(error.code.rawValue == "invalid_config", "\(error)")
        #expect(error.message == "line 2 ([daemon] on_bad_config): on_bad_config is refuse or defaults; got \"maybe\".")
    }
}
