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

        @Test("a -wal removed while the daemon runs is noticed at the next write, said in the log, status and doctor, and nothing is lost")
        func aLostWriteAheadLogIsNoticedAndNothingLost() throws {
            let d = try DaemonUnderTest()
            try Self.fill(d)
            let log = d.databasePath + "-wal"
            #expect(fileStatus(log) != nil)
            // What a cleaner or a careless `rm diligence.sqlite3-*` does.
            #expect(unlink(log) == 0)
            try d.addSession("Backed", "2025-05-09T09:00:00Z", "2025-05-09T09:25:00Z")
            let said = "The database's write-ahead log \(log) was removed while the daemon runs"
            let noticed = (try? waitUntil("the log line", timeout: 5) { d.stderr.contains(said) }) != nil
            #expect(noticed, "no log line \(said)\n\(d.diagnostics)")
            let status = try d.status()
            #expect(status["database_problem"]?.stringValue?.contains("write-ahead log") == true, "\(status.serialized)")
            let doctor = try d.call("doctor")["checks"]?.arrayValue ?? []
            let database = doctor.first { $0["name"]?.stringValue == "database" }
            #expect(database?["state"]?.stringValue == "problem", "\(doctor)")
            #expect(database?["detail"]?.stringValue?.contains("removed") == true, "\(doctor)")
            // Another write after it, then the worst exit: every acknowledged row is in the file.
            try d.addSession("Backed", "2025-05-10T09:00:00Z", "2025-05-10T09:25:00Z")
            d.kill()
            try d.start()
            let restored = try Self.contents(d)
            #expect(restored.sessions == 10, "\(restored.sessions) of 10 acknowledged sessions after the restart\n\(d.diagnostics)")
            #expect(restored.tasks.contains("Backed"))
        }

        @Test("the daemon killed mid-backup of a large database: FILE is absent or whole, never half a copy")
        func aBackupCutShortLeavesNoPartialFile() throws {
            let d = try DaemonUnderTest()
            try Self.fill(d)
            d.signal(SIGTERM)
            #expect(try d.waitExit() == .exited(0))
            // 400 MB of ballast: the copy takes long enough for the signal to land during it.
            _ = try d.sqlite(
                "CREATE TABLE ballast(b BLOB); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400) "
                    + "INSERT INTO ballast SELECT randomblob(1000000) FROM n;")
            try d.start()
            let folder = d.root + "/backups"
            #expect(mkdir(folder, 0o700) == 0)
            d.handOver(folder)
            let copy = folder + "/copy.sqlite3"
            let client = UncheckedSendable(d)
            let run = DispatchQueue.global()
            let done = DispatchSemaphore(value: 0)
            run.async {
                _ = try? client.value.ctl(arguments: ["backup", copy], timeout: 30)
                done.signal()
            }
            // A tight look: the copy itself lasts a fraction of a second.
            var started = false
            let deadline = monotonicNow() + 10
            while !started && monotonicNow() < deadline {
                started = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).contains { name in
                    (fileStatus(folder + "/" + name)?.st_size ?? 0) > 0
                }
                if !started { usleep(500) }
            }
            #expect(started, "no backup file grew\n\(d.diagnostics)")
            // SIGKILL, the hardest cut: nothing can clean up, so only a copy made under another
            // name can keep a half-written file from standing at FILE as if it were a backup.
            d.signal(SIGKILL)
            #expect(try d.waitExit(timeout: 20) == .signaled(SIGKILL))
            done.wait()
            let left = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            #expect(left.allSatisfy { $0 == "copy.sqlite3" || $0.hasPrefix(".copy.sqlite3.partial-") }, "left behind: \(left)")
            if fileStatus(copy) != nil {
                #expect(try d.sqliteRun(copy, "PRAGMA quick_check;") == [["ok"]])
                #expect(try d.sqliteRun(copy, "SELECT count(*) FROM sessions;") == [["8"]])
            }
        }

        @Test("diligencectl backup during a running phase: a whole, single-file copy sqlite3 reads and a daemon restores")
        func backupDuringARunningPhase() throws {
            let d = try DaemonUnderTest()
            try Self.fill(d)
            _ = try d.call("start", [("task", .string("Backed"))])
            let before = try d.status()
            let copy = d.root + "/copy.sqlite3"
            let run = try d.ctl("backup", copy)
            #expect(run.exitCode == 0, "\(run)")
            #expect(run.stdout == "Backed up 8 sessions and 8 tasks to \(copy) (\(fileStatus(copy)?.st_size ?? -1) bytes).\n", "\(run)")
            // The phase went on, and the copy is one file sqlite3 reads.
            let after = try d.status()
            #expect(after["state"] == before["state"] && after["task"] == before["task"], "\(after.serialized)")
            #expect(try d.sqliteRun(copy, "PRAGMA journal_mode;") == [["delete"]])
            #expect(try d.sqliteRun(copy, "SELECT count(*) FROM sessions;") == [["8"]])
            #expect(try d.sqliteRun(copy, "SELECT count(*) FROM tasks WHERE name = 'Backed';") == [["1"]])
            #expect(fileStatus(copy + "-wal") == nil && fileStatus(copy + "-journal") == nil)
            #expect((fileStatus(copy)?.st_mode ?? 0) & 0o777 == 0o600)

            // A file there already is never replaced; the refusal says why.
            let again = try d.ctl("backup", copy)
            #expect(again.exitCode != 0 && again.stderr.contains("exists already"), "\(again)")
            #expect(try d.failure("backup", [("path", .string(copy))]).code == "backup_exists")
            let relative = try d.failure("backup", [("path", .string("copy.sqlite3"))])
            #expect(relative.code == "invalid_backup_path" && relative.message.contains("not absolute"), "\(relative)")
            let nowhere = try d.failure("backup", [("path", .string(d.root + "/missing/copy.sqlite3"))])
            #expect(nowhere.code == "invalid_backup_path" && nowhere.message.contains("does not exist"), "\(nowhere)")
            // sysfs takes no new file, not even root's.
            let unwritable = try d.failure("backup", [("path", .string("/sys/diligence-backup.sqlite3"))])
            #expect(unwritable.code == "invalid_backup_path" && unwritable.message.contains("not writable"), "\(unwritable)")
            let itself = try d.failure("backup", [("path", .string(d.databasePath))])
            #expect(itself.code == "invalid_backup_path", "\(itself)")
            #expect(d.stderr.contains("event=backup_written") || d.stderr.contains("Backed up the database to \(copy)"), "\(d.diagnostics)")

            // The copy restores everything: a daemon started on it alone.
            let fresh = try DaemonUnderTest(launch: false)
            try Self.copyFile(copy, to: fresh.databasePath)
            try fresh.start()
            let restored = try Self.contents(fresh)
            #expect(restored.sessions == 8 && restored.tasks.contains("Backed"), "\(restored)\n\(fresh.diagnostics)")
        }
    }
}
