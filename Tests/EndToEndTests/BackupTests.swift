import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Backups (docs/backup.md, issue 26 item 5): after a clean exit the database file alone holds
/// everything; `diligencectl backup FILE` copies a running daemon's database; a lost `-wal` and
/// a foreign database with a stale `-wal` beside it are said, never silently used.
extension EndToEnd {
    @Suite("Backups: the database file alone is complete; diligencectl backup copies a running daemon")
    struct Backups {
        /// Eight sessions and a task of their own, every one acknowledged.
        static func fill(_ d: DaemonUnderTest) throws {
            try d.addTask("Backed")
            for day in 1...8 {
                try d.addSession("Backed", "2025-05-0\(day)T09:00:00Z", "2025-05-0\(day)T09:25:00Z")
            }
        }

        /// The sessions and tasks `d` answers with.
        static func contents(_ d: DaemonUnderTest) throws -> (sessions: Int, tasks: [String]) {
            let sessions = try d.call("history")["sessions"]?.arrayValue?.count ?? -1
            let tasks = try d.call("task_list")["tasks"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
            return (sessions, tasks)
        }

        /// Copies the bytes of `source` to a new file `target` (its directory made, 0700).
        static func copyFile(_ source: String, to target: String) throws {
            mkdir((target as NSString).deletingLastPathComponent, 0o700)
            let data = try #require(FileManager.default.contents(atPath: source))
            #expect(FileManager.default.createFile(atPath: target, contents: data, attributes: [.posixPermissions: 0o600]))
        }

        @Test("SIGTERM leaves everything in diligence.sqlite3: the file alone, copied to a fresh data directory, restores it")
        func theFileAloneIsCompleteAfterACleanExit() throws {
            let d = try DaemonUnderTest()
            try Self.fill(d)
            d.signal(SIGTERM)
            #expect(try d.waitExit() == .exited(0))
            // What a backup tool that copies the file (and not its -wal) takes away.
            let fresh = try DaemonUnderTest(launch: false)
            try Self.copyFile(d.databasePath, to: fresh.databasePath)
            try fresh.start()
            let restored = try Self.contents(fresh)
            #expect(restored.sessions == 8, "the copied file held \(restored.sessions) of 8 sessions\n\(fresh.diagnostics)")
            #expect(restored.tasks.contains("Backed"), "\(restored.tasks)")
        }
    }
}
