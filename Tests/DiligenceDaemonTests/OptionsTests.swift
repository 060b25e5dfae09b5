import DiligenceCore
import Testing

@testable import DiligenceDaemon

@Suite struct OptionsTests {
    @Test func parsesEveryFlagInBothForms() throws {
        let a = try DaemonOptions.parse(["--socket", "/s", "--database=/d", "--config", "/c", "--verbose"])
        #expect(a.socket == "/s")
        #expect(a.database == "/d")
        #expect(a.config == "/c")
        #expect(a.verbose)
        #expect(try DaemonOptions.parse(["-h"]).help)
        #expect(try DaemonOptions.parse(["--version"]).version)
        #expect(try DaemonOptions.parse([]) == DaemonOptions())
    }

    @Test(arguments: [
        (["--socket"], "--socket needs a value."), (["--bogus"], "unknown argument \"--bogus\"."),
        (["extra"], "unknown argument \"extra\"."), (["--database", ""], "--database needs a value."),
    ])
    func refusesBadArguments(_ arguments: [String], message: String) throws {
        let error = try #require(throws: DiligenceError.self) { try DaemonOptions.parse(arguments) }
        #expect(error.code.rawValue == "usage" && error.message == message, "\(error.code): \(error.message)")
    }

    @Test func defaultPathsFollowXDG() {
        let env = ["HOME": "/home/u", "XDG_RUNTIME_DIR": "/run/user/1", "XDG_DATA_HOME": "/data", "XDG_CONFIG_HOME": "/cfg"]
        let p = DaemonPaths(environment: env)
        #expect(p.socket == "/run/user/1/diligence/diligenced.sock")
        #expect(p.database == "/data/diligence/diligence.sqlite3")
        #expect(p.config == "/cfg/diligence/diligenced.conf")
        #expect(!p.configRequired)
        let bare = DaemonPaths(environment: ["HOME": "/home/u"])
        #expect(bare.database == "/home/u/.local/share/diligence/diligence.sqlite3")
        #expect(bare.config == "/home/u/.config/diligence/diligenced.conf")
        #expect(DaemonPaths(config: "/x.conf", environment: env).configRequired)
    }
}
