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
                status.stderr == "diligencectl: warning: the daemon's configuration has a problem; 'diligencectl doctor' shows it.\n",
                "\(status)")
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

        /// Issue 32, item 17: every `status` repeated the whole text (~600 characters a key).
        @Test("said in full once where it belongs (reload's answer, doctor), status only points to it")
        func saidOnceWhereItBelongs() throws {
            let d = try DaemonUnderTest(launch: false)
            try d.writeConfig("[daemon]\non_bad_config = defaults\n[stats]\nday_start_at = 04:00\n")
            try d.start()
            let status = try d.ctl("status")
            #expect(
                status.stderr == "diligencectl: warning: the daemon's configuration has a problem; 'diligencectl doctor' shows it.\n",
                "\(status)")
            let doctor = try d.ctl("doctor")
            let line = doctor.stdout.split(separator: "\n").first { $0.hasPrefix("config ") } ?? ""
            #expect(line.contains("problem") && line.contains("line 4") && line.contains("day_starts_at"), "\(doctor)")
            #expect(doctor.stdout.contains("→ fix \(d.configHome)/diligence/diligenced.conf"), "\(doctor)")
            let reload = try d.ctl("reload")
            #expect(reload.exitCode == 0 && reload.stdout.contains("line 4") && reload.stdout.contains("day_starts_at"), "\(reload)")
            #expect(try d.call("reload")["problems"]?.arrayValue?.count == 1)
            try d.writeConfig("[stats]\nday_starts_at = 04:00\n")
            #expect(try d.call("reload")["problems"] == nil, "no member when there is nothing to say")
            let fine = try #require(try Doctor.checks(d)["config"])
            #expect(fine["state"]?.stringValue == "ok", "\(fine.serialized)")
        }
    }
}
