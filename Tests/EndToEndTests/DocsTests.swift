import DiligenceTestSupport
import Foundation
import Testing

/// Names the docs promise for scripting the journal are names the daemon logs: seen in the log
/// of a real daemon made to do each thing (a name in the sources proves nothing: dead code
/// holds names too).
@Suite struct DocsTests {
    /// The `event=` values of the daemon's stderr lines (`<6>… (event=phase_started task=Study)`,
    /// the journal's EVENT field when it logs to stderr).
    static func loggedEvents(_ log: String) -> Set<String> {
        var names = Set<String>()
        for line in log.split(separator: "\n") {
            guard let fields = line.range(of: " (", options: .backwards) else { continue }
            for field in line[fields.upperBound...].dropLast().split(separator: " ") where field.hasPrefix("event=") {
                names.insert(String(field.dropFirst("event=".count)))
            }
        }
        return names
    }

    @Test("every EVENT value docs/systemd.md lists is one the daemon logs")
    func journalEventNames() throws {
        let doc = readTextFile(Binaries.packageRoot + "/docs/systemd.md")
        let start = try #require(doc.range(of: "`EVENT` ("), "docs/systemd.md lists no EVENT values")
        let list = doc[start.upperBound...].prefix { $0 != ")" }
        let documented = String(list).split(separator: "`").map(String.init)
            .filter { $0.allSatisfy { $0.isLowercase || $0 == "_" } && !$0.isEmpty }
        #expect(documented.count >= 5, "\(documented)")

        // What the list names: a phase that starts and completes (its session recorded, do not
        // disturb on and off around it), a
        // refused request, a reload of a good config file and of a bad one, a sync folder's
        // journal name that is not a regular file, a backup, the database removed.
        let d = try DaemonUnderTest()
        // The focus guard through its paired commands: do not disturb on and off around the work.
        try d.writeConfig("[focus]\ndo_not_disturb = yes\nbackend = commands\non_enter = true\non_leave = true\n")
        try d.call("reload")
        try d.addTask("Quick", [("work", .string("1s"))])
        let watcher = try d.watch()
        try d.call("start", [("task", .string("Quick"))])
        try #require(watcher.waitFor(timeout: 5, where: { $0.name == "phase_completed" }) != nil, "\(watcher.transcript)")
        #expect(try d.failure("start", [("task", .string("No such task"))]).code == "unknown_task")
        try d.writeConfig("[timer]\nsuspend = continue\n")
        try d.call("reload")
        try d.writeConfig("[timer]\nno_such_setting = 1\n")
        #expect(try d.failure("reload").code == "invalid_config")
        // A FIFO under another device's journal name in the sync folder, read at the next change.
        let folder = d.root + "/sync"
        let enable = try d.ctl("sync", "enable", folder, "--name", "docs")
        try #require(enable.exitCode == 0, "sync enable: \(enable)")
        try #require(mkfifo(folder + "/11111111-2222-4333-8444-555555555555.jsonl", 0o600) == 0)
        _ = try d.addTask("After")
        // A backup, then the data directory removed under the daemon (last: it writes no more).
        try d.call("backup", [("path", .string(d.root + "/backup.sqlite3"))])
        let removed = try runProgram(["/bin/rm", "-rf", d.dataHome + "/diligence"], environment: [:], directory: d.root)
        try #require(removed.succeeded, "\(removed)")
        let log = try #require(d.stderrPaths.last)
        // Lines are written as things happen; the last may lag the answer a little.
        let deadline = monotonicNow() + 5
        var logged = Self.loggedEvents(readTextFile(log))
        while !logged.isSuperset(of: documented) && monotonicNow() < deadline {
            sleepFor(0.05)
            logged = Self.loggedEvents(readTextFile(log))
        }
        for name in documented {
            #expect(
                logged.contains(name), "docs/systemd.md lists EVENT \(name), which the daemon did not log (it logged \(logged.sorted()))")
        }
    }
}
