import DiligenceJSON
import DiligenceProtocol
import DiligenceSync
import DiligenceTestSupport
import DiligenceTime
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// This device's own journal changed by someone else (docs/sync.md, "Someone else's hand in this
// device's journal"): a sync tool putting an older version back, and two machines sharing one
// device id because a database was copied. The daemon tells them apart by what it knows it wrote.

extension EndToEnd {
    @Suite("Sync: this device's journal changed by someone else")
    struct SyncOwnJournal {
        typealias Merge = SyncMerge

        /// The summaries (SyncJournal.summary) of every line of `path`.
        static func lines(_ path: String, device: String) throws -> [String] {
            var cursor = JournalCursor.start
            return SyncJournal.summary(try SyncJournal.read(path, device: device, from: &cursor))
        }

        static func bytes(_ path: String) throws -> [UInt8] {
            [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        }

        static func workID(_ d: DaemonUnderTest) throws -> String {
            try d.call("task_list")["tasks"]?.arrayValue?.first { $0["name"]?.stringValue == "Work" }?["uuid"]?.stringValue ?? "?"
        }

        static func events(_ d: DaemonUnderTest, _ event: String) -> Int {
            d.stderr.split(separator: "\n").filter { $0.contains(event) }.count
        }

        /// A second daemon whose database is a copy of `a`'s, made while both were stopped: one
        /// device id on two machines.
        static func daemonWithACopy(of a: DaemonUnderTest) throws -> DaemonUnderTest {
            let b = try DaemonUnderTest()
            try b.restart {
                try a.restart {
                    for suffix in ["", "-wal", "-shm"] {
                        unlink(b.databasePath + suffix)
                        if FileManager.default.fileExists(atPath: a.databasePath + suffix) {
                            try FileManager.default.copyItem(atPath: a.databasePath + suffix, toPath: b.databasePath + suffix)
                        }
                    }
                }
            }
            return b
        }

        @Test("an older version of the journal put back, or the journal gone: it is written again whole from the database")
        func olderVersionRewritten() throws {
            let (d, folder, device) = try Merge.device("laptop")
            let journal = "\(folder)/\(device).jsonl"
            let older = try Self.bytes(journal)
            let later = try d.addTask("Later")
            let session = try d.call(
                "history_add", [("task", .string("Later")), ("start", .string("2026-11-30 09:00")), ("end", .string("2026-11-30 09:25"))])
            _ = try d.status()
            let laterID = later["uuid"]?.stringValue ?? "?"
            let sessionLine = "session_recorded \(session["uuid"]?.stringValue ?? "?") task=\(laterID)"
            #expect(try Self.lines(journal, device: device).contains(sessionLine))

            // A sync tool restores the version from before those changes.
            try Merge.deliver(older, to: journal)
            let after = try d.addTask("After")
            _ = try d.status()
            var lines = try Self.lines(journal, device: device)
            for line in ["task_added \(laterID) Later", sessionLine, "task_added \(after["uuid"]?.stringValue ?? "?") After"] {
                #expect(lines.contains(line), "the lines the older version lost are back: \(line) in \(lines)\n\(d.diagnostics)")
            }
            #expect(Self.events(d, "sync_journal_rewritten") == 1, "logged:\n\(d.diagnostics)")

            // The journal removed: the next change writes the whole history again, not one line.
            unlink(journal)
            let gone = try d.addTask("Gone")
            _ = try d.status()
            lines = try Self.lines(journal, device: device)
            #expect(lines.first == "device_named laptop", "\(lines)")
            for line in ["task_added \(laterID) Later", sessionLine, "task_added \(gone["uuid"]?.stringValue ?? "?") Gone"] {
                #expect(lines.contains(line), "the whole history: \(line) in \(lines)\n\(d.diagnostics)")
            }
            #expect(Self.events(d, "sync_journal_rewritten") == 2, "logged:\n\(d.diagnostics)")
            let status = try d.call("sync_status")
            #expect(status["problem"] == .null && status["shared_device"] == .bool(false), "\(status.serialized)")
        }

        @Test(
            """
            a database copied to a second machine: the journal holding lines this device did not write is left alone, the changes \
            wait, sync status says why, and sync enable --new-device makes this database a new device
            """)
        func copiedDatabase() throws {
            let (a, folderA, id) = try Merge.device("laptop")
            _ = try a.addTask("Before")
            let b = try Self.daemonWithACopy(of: a)
            #expect(try b.call("sync_status")["device"]?["id"]?.stringValue == id, "one device id on two machines")
            let folderB = b.root + "/sync"
            #expect(try b.ctl("sync", "enable", folderB, "--name", "desktop").exitCode == 0)
            let onA = try a.addTask("OnA")
            _ = try a.status()
            _ = try b.addTask("OnB")
            _ = try b.status()
            // The sync tool sees two versions of one file and keeps B's.
            let journalA = "\(folderA)/\(id).jsonl"
            let fromB = try Self.bytes("\(folderB)/\(id).jsonl")
            try Merge.deliver(fromB, to: journalA)

            let shared = try a.addTask("WhileShared")
            _ = try a.addTask("AlsoWhileShared")
            let status = try a.call("sync_status")
            #expect(try Self.bytes(journalA) == fromB, "A does not write over B's lines:\n\(a.diagnostics)")
            #expect(status["shared_device"] == .bool(true), "\(status.serialized)")
            #expect(status["waiting"]?.intValue ?? 0 >= 2, "the changes wait in the database: \(status.serialized)")
            #expect(status["problem"]?.stringValue?.contains("copied") == true, "the cause: \(status.serialized)")
            let text = try a.ctl("sync", "status")
            #expect(text.stdout.contains("--new-device"), "the way out: \(text)")
            #expect(Self.events(a, "sync_device_shared") == 1, "logged once:\n\(a.diagnostics)")

            let renewed = try a.ctl("sync", "enable", folderA, "--new-device", "--json")
            #expect(renewed.exitCode == 0, "\(renewed)\n\(a.diagnostics)")
            let after = try a.call("sync_status")
            let newID = try #require(after["device"]?["id"]?.stringValue)
            #expect(newID != id && SyncID.parse(newID) == newID, "a new random id: \(after.serialized)")
            #expect(
                after["shared_device"] == .bool(false) && after["problem"] == .null && after["waiting"] == .int(0), "\(after.serialized)")
            let lines = try Self.lines("\(folderA)/\(newID).jsonl", device: newID)
            for task in [onA, shared] {
                let line = "task_added \(task["uuid"]?.stringValue ?? "?") \(task["name"]?.stringValue ?? "?")"
                #expect(lines.contains(line), "the new journal holds the whole history: \(line) in \(lines)")
            }
            #expect(try Self.bytes(journalA) == fromB, "the old id's journal is left to B")
            // B's journal, under the old id, is now another device's: A merges it.
            try Merge.eventually("A merges B's task") { try Merge.taskNames(a).contains("OnB") }
            _ = try a.addTask("Afterwards")
            _ = try a.status()
            #expect(try Self.lines("\(folderA)/\(newID).jsonl", device: newID).last?.hasSuffix(" Afterwards") == true)
        }

        @Test("a crash between an append and its record in the database: the lines past the kept end are this device's own, and it goes on")
        func crashAfterAppend() throws {
            let (d, folder, device) = try Merge.device("laptop")
            let journal = "\(folder)/\(device).jsonl"
            let work = try #require(try d.call("task_list")["tasks"]?.arrayValue?.first { $0["name"]?.stringValue == "Work" })
            // Stopped, the state such a crash leaves: a plan in the database, noted (the trigger),
            // and its line appended, stamped later than the last reading recorded; the record not made.
            try d.restart {
                _ = try d.sqliteRun(d.databasePath, "INSERT INTO plans (day, task_id) VALUES ('2026-12-05', \(work["id"]?.intValue ?? 0));")
                let line = JournalEntry(
                    device: device, hlc: HLC(millis: Int64(Date().timeIntervalSince1970 * 1000), counter: 0),
                    change: .planSet(day: try #require(CalendarDay("2026-12-05")), task: work["uuid"]?.stringValue ?? "?"))
                let fd = open(journal, O_WRONLY | O_APPEND)
                defer { close(fd) }
                _ = (line.line + "\n").withCString { write(fd, $0, strlen($0)) }
            }
            let status = try d.call("sync_status")
            #expect(status["shared_device"] == .bool(false) && status["problem"] == .null, "\(status.serialized)\n\(d.diagnostics)")
            let added = try d.addTask("AfterCrash")
            _ = try d.status()
            let lines = try Self.lines(journal, device: device)
            #expect(lines.last == "task_added \(added["uuid"]?.stringValue ?? "?") AfterCrash", "written on: \(lines)\n\(d.diagnostics)")
            #expect(Self.events(d, "sync_device_shared") == 0, "\(d.diagnostics)")
        }

        @Test("a database copied to a second machine that writes the same folder: its lines after this device's stop the writing here")
        func copiedDatabaseOneFolder() throws {
            let (a, folder, id) = try Merge.device("laptop")
            let b = try Self.daemonWithACopy(of: a)
            // B, with A's database and so A's folder, appends to A's journal: a folder both mount.
            let journal = "\(folder)/\(id).jsonl"
            let onB = try b.addTask("OnB")
            _ = try b.status()
            let withB = try Self.lines(journal, device: id)
            #expect(withB.last == "task_added \(onB["uuid"]?.stringValue ?? "?") OnB", "\(withB)\n\(b.diagnostics)")
            let fromB = try Self.bytes(journal)
            _ = try a.addTask("OnA")
            let status = try a.call("sync_status")
            #expect(try Self.bytes(journal) == fromB, "A does not write after B's line:\n\(a.diagnostics)")
            #expect(status["shared_device"] == .bool(true) && status["waiting"] == .int(1), "\(status.serialized)")
            #expect(Self.events(a, "sync_device_shared") == 1, "\(a.diagnostics)")
            // B, whose journal ends where it left it, goes on.
            let next = try b.addTask("NextOnB")
            _ = try b.status()
            #expect(try Self.lines(journal, device: id).last == "task_added \(next["uuid"]?.stringValue ?? "?") NextOnB")
            #expect(try b.call("sync_status")["shared_device"] == .bool(false))
        }

        @Test("the journal written again after an older version holds the removals the merge knows, which the older version lost")
        func rewriteKeepsRemovals() throws {
            let (d, folder, device) = try Merge.device("laptop")
            let journal = "\(folder)/\(device).jsonl"
            let session = try d.call(
                "history_add", [("task", .string("Work")), ("start", .string("2026-11-30 09:00")), ("end", .string("2026-11-30 09:25"))])
            let id = session["uuid"]?.stringValue ?? "?"
            _ = try d.status()
            let older = try Self.bytes(journal) // the session recorded, not removed
            try d.call("history_remove", [("id", session["id"] ?? .null)])
            _ = try d.status()
            try d.restart()
            try Merge.eventually("the merge at start read the journal, the removal with it") { Self.events(d, "sync_merge_started") == 2 }
            try Merge.deliver(older, to: journal)
            _ = try d.addTask("After")
            _ = try d.status()
            let lines = try Self.lines(journal, device: device)
            #expect(lines.contains("session_recorded \(id) task=\(try Self.workID(d))"), "the older version's line: \(lines)")
            #expect(lines.contains("session_removed \(id)"), "a device reading this journal removes it too: \(lines)\n\(d.diagnostics)")
        }

        @Test("a database restored from an older copy: the journal holds its later changes; --new-device brings them back by the merge")
        func restoredDatabase() throws {
            let (d, folder, id) = try Merge.device("laptop")
            let backup = d.root + "/backup.sqlite3"
            try d.restart { _ = try d.sqliteRun(d.databasePath, "VACUUM INTO '\(backup)';") }
            let later = try d.call(
                "history_add", [("task", .string("Work")), ("start", .string("2026-11-30 09:00")), ("end", .string("2026-11-30 09:25"))])
            _ = try d.addTask("Later")
            try d.restart {
                for suffix in ["-wal", "-shm"] { unlink(d.databasePath + suffix) }
                unlink(d.databasePath)
                try FileManager.default.copyItem(atPath: backup, toPath: d.databasePath)
                unlink(backup)
            }
            #expect(try Merge.taskNames(d).contains("Later") == false, "the database is the older copy")
            let status = try d.call("sync_status")
            #expect(status["shared_device"] == .bool(true), "its journal holds lines it does not know: \(status.serialized)")
            #expect(status["problem"]?.stringValue?.contains("restored") == true, "\(status.serialized)")
            #expect(try d.ctl("sync", "enable", folder, "--new-device").exitCode == 0)
            try Merge.eventually("the later changes are merged back from the former id's journal") {
                try Merge.taskNames(d).contains("Later") && Merge.history(d).contains { $0.hasPrefix(later["uuid"]?.serialized ?? "?") }
            }
            #expect(try d.call("sync_status")["device"]?["id"]?.stringValue != id)
        }

        @Test("an older version put back is noticed at once, with no change made here: the journal is watched")
        func olderVersionNoticedAtOnce() throws {
            let (d, folder, device) = try Merge.device("laptop")
            let journal = "\(folder)/\(device).jsonl"
            let older = try Self.bytes(journal)
            let later = try d.addTask("Later")
            _ = try d.status()
            try Merge.deliver(older, to: journal)
            let line = "task_added \(later["uuid"]?.stringValue ?? "?") Later"
            try Merge.eventually("the journal is written again") { try Self.lines(journal, device: device).contains(line) }
            #expect(Self.events(d, "sync_journal_rewritten") == 1, "\(d.diagnostics)")
        }
    }
}
