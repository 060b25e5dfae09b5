import Testing

@testable import DiligenceClient

/// Exit 3's hint says how to start the daemon the way this client was installed: a package
/// user has no source tree, a developer's build has no units.
@Suite struct StartHintTests {
    /// Files that exist in the imagined machine.
    func hint(_ executable: String, _ files: Set<String>, _ environment: [String: String] = ["HOME": "/home/ann"]) -> StartHint {
        StartHint(executable: executable, environment: environment, exists: files.contains)
    }

    @Test func theDebianPackageSaysEnableNowAsReadmeDebianDoes() {
        let h = hint("/usr/bin/diligencectl", ["/var/lib/dpkg/info/diligence.list", "/usr/lib/systemd/user/diligenced.socket"])
        #expect(h == .units)
        #expect(h.text == "Start it with `systemctl --user enable --now diligenced.socket` (once; it then starts at every login).")
    }

    @Test func makeInstallIntoAPrefixOrTheHomeFindsItsUnits() {
        #expect(hint("/usr/local/bin/diligencectl", ["/usr/local/lib/systemd/user/diligenced.socket"]) == .units)
        #expect(hint("/home/ann/.local/bin/diligencectl", ["/home/ann/.local/share/systemd/user/diligenced.socket"]) == .units)
        #expect(
            hint("/home/ann/.local/bin/diligencectl", ["/x/systemd/user/diligenced.socket"], ["HOME": "/home/ann", "XDG_DATA_HOME": "/x"])
                == .units)
    }

    @Test func aBuildInASourceTreeNamesMakeRunThere() {
        let h = hint("/src/diligence/.build/x86_64-unknown-linux-gnu/debug/diligencectl", ["/src/diligence/Package.swift"])
        #expect(h == .sourceTree(root: "/src/diligence", daemon: "/src/diligence/.build/x86_64-unknown-linux-gnu/debug/diligenced"))
        #expect(
            h.text == "Start it with `make run` in /src/diligence, or `/src/diligence/.build/x86_64-unknown-linux-gnu/debug/diligenced`.")
        #expect(!h.text.contains("systemctl"))
    }

    @Test func anywhereElseNamesTheDaemonBesideTheClient() {
        let h = hint("/opt/tools/diligencectl", [])
        #expect(h == .beside("/opt/tools/diligenced"))
        #expect(h.text == "Start it with `/opt/tools/diligenced` in a terminal.")
        #expect(!h.text.contains("make run") && !h.text.contains("systemctl"))
    }

    @Test func unitsWithoutAPackageOrASourceTreeNeverNameMakeRun() {
        for h in [hint("/usr/bin/diligencectl", ["/usr/lib/systemd/user/diligenced.socket"]), hint("/usr/bin/diligencectl", [])] {
            #expect(!h.text.contains("make run"), "\(h)")
        }
    }
}
