import DiligenceProtocol
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EndToEnd {
    @Suite("A bad config file never takes the daemon down, and is reported until fixed")
    struct ConfigProblems {
        @Test("started with a bad file: serves on the defaults; status, diligencectl status and STATUS= say why")
        func badFileAtStart() throws {
            let d = try DaemonUnderTest(launch: false)
            try d.writeConfig("[timer]\nsuspend = sometimes\n")
            try d.start()
            let status = try d.ctl("status")
            #expect(status.exitCode == 0 && status.stdout.hasPrefix("Idle"), "\(status)")
            #expect(
                status.stderr.hasPrefix("diligencectl: warning: the daemon's configuration: Refused the config file")
                    && status.stderr.contains("line 2") && status.stderr.contains("sometimes"), "\(status)")
            let problems = try d.ctlStatus()["config_problems"]?.arrayValue ?? []
            #expect(problems.count == 1, "\(problems)")
            #expect(d.notify.waitForStatus(containing: ["Idle", "⚠", "line 2"], timeout: 5) != nil, "\(d.notify.statusLines)")
            #expect(d.stderr.contains("<3>Refused the config file, running on the default settings"), "\(d.stderr)")
            // Fixed and reloaded: the warning goes.
            try d.writeConfig("[timer]\nsuspend = continue\n")
            #expect(try d.ctl("reload").exitCode == 0)
            let fixed = try d.ctl("status")
            let left = try d.ctlStatus()["config_problems"]?.arrayValue
            #expect(fixed.stderr.isEmpty && left?.isEmpty == true, "\(fixed) \(left ?? [])")
        }
    }
}
