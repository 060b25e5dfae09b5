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

// A removal is final (docs/sync.md, "Removals are tombstones"): whatever folder the journal is
// started in again — the same after `sync disable`, another and back, or under a new device id —
// the older lines of this device's journal that recorded a removed session or task never bring
// it back, because the removal goes into the journal's start with the rest of the history.

extension EndToEnd {
    @Suite("Sync: removals survive sync enabled again, another folder and a new device id")
    struct SyncRemovals {
        typealias Merge = SyncMerge

        /// A session of Study and a task "Gone" with a session of its own, recorded while a
        /// journal is kept; their uuids.
        static func recordThings(_ d: DaemonUnderTest) throws -> (session: String, task: String, taskSession: String) {
            let session = try d.call(
                "history_add", [("task", .string("Study")), ("start", .string("2026-11-30 09:00")), ("end", .string("2026-11-30 09:25"))])
            let task = try d.addTask("Gone")
            let ofTask = try d.call(
                "history_add", [("task", .string("Gone")), ("start", .string("2026-11-30 10:00")), ("end", .string("2026-11-30 10:25"))])
            _ = try d.status()
            return (
                try #require(session["uuid"]?.stringValue), try #require(task["uuid"]?.stringValue),
                try #require(ofTask["uuid"]?.stringValue)
            )
        }

        /// Removes the session and the task `recordThings` made.
        static func removeThings(_ d: DaemonUnderTest, session: String) throws {
            let row = try #require(try d.call("history")["sessions"]?.arrayValue?.first { $0["uuid"]?.stringValue == session })
            let removed = try d.call("history_remove", [("id", row["id"] ?? .null)])
            #expect(removed["removed"]?["uuid"]?.stringValue == session, "\(removed.serialized)")
            let task = try d.call("task_remove", [("task", .string("Gone")), ("confirm", .bool(true))])
            #expect(task["removed"]?.stringValue == "Gone", "\(task.serialized)")
        }

        /// Neither the removed session nor the task nor its session is back: not in history, not
        /// in `stats all`, not in the task list, and no session shows this device's id as another's.
        static func expectStillRemoved(
            _ d: DaemonUnderTest, _ things: (session: String, task: String, taskSession: String), after: String
        ) throws {
            let sessions = try #require(try d.call("history")["sessions"]?.arrayValue)
            let uuids = sessions.compactMap { $0["uuid"]?.stringValue }
            #expect(!uuids.contains(things.session), "\(after): the removed session is back: \(uuids)\n\(d.diagnostics)")
            #expect(!uuids.contains(things.taskSession), "\(after): the removed task's session is back: \(uuids)")
            #expect(uuids.isEmpty, "\(after): nothing else was recorded: \(uuids)")
            let stats = try d.call("stats", [("period", .string("all"))])
            #expect(
                stats["completed"] == .int(0) && stats["focused_seconds"] == .int(0), "\(after): stats all counts it: \(stats.serialized)")
            let tasks = try Merge.taskNames(d)
            #expect(!tasks.contains("Gone"), "\(after): the removed task is back: \(tasks)")
            let devices = sessions.compactMap { $0["device"]?.stringValue }
            #expect(devices.isEmpty, "\(after): sessions shown as another device's: \(devices)")
        }

        static func deviceID(_ d: DaemonUnderTest) throws -> String {
            try #require(try d.call("sync_status")["device"]?["id"]?.stringValue)
        }

        /// The journal at `path` holds a removal line of `session` and of `task`.
        static func expectRemovalLines(_ path: String, device: String, _ things: (session: String, task: String, taskSession: String))
            throws
        {
            let lines = try SyncOwnJournal.lines(path, device: device)
            #expect(lines.contains("session_removed \(things.session)"), "the removal goes with the history: \(lines)")
            #expect(lines.contains("task_removed \(things.task)"), "the task's removal goes with the history: \(lines)")
        }

        @Test("enabled, disabled, a session and a task removed, enabled again in the same folder: they stay removed")
        func removedWhileDisabled() throws {
            let (d, folder, id) = try Merge.device("laptop")
            let things = try Self.recordThings(d)
            #expect(try d.ctl("sync", "disable").exitCode == 0)
            try Self.removeThings(d, session: things.session)
            let enable = try d.ctl("sync", "enable", folder)
            #expect(enable.exitCode == 0, "\(enable)")
            _ = try d.status()
            try Self.expectStillRemoved(d, things, after: "enabled again")
            try Self.expectRemovalLines("\(folder)/\(id).jsonl", device: id, things)
            // Read anew from the journals after a restart too.
            try d.restart()
            try Self.expectStillRemoved(d, things, after: "restarted")
            #expect(try d.ctl("sync", "disable").exitCode == 0)
            #expect(try d.ctl("sync", "enable", folder).exitCode == 0)
            try Self.expectStillRemoved(d, things, after: "disabled and enabled once more")
        }

        @Test("a journal in F1, then F2 where the session and task are removed, then F1 again: they stay removed")
        func removedInAnotherFolder() throws {
            let (d, folder1, id) = try Merge.device("laptop")
            let things = try Self.recordThings(d)
            let folder2 = d.root + "/sync2"
            #expect(try d.ctl("sync", "enable", folder2).exitCode == 0)
            try Self.removeThings(d, session: things.session)
            _ = try d.status()
            #expect(try d.ctl("sync", "enable", folder1).exitCode == 0)
            _ = try d.status()
            try Self.expectStillRemoved(d, things, after: "back in F1")
            try Self.expectRemovalLines("\(folder1)/\(id).jsonl", device: id, things)
        }

        @Test("removed while sync is off, then enabled with --new-device: the former id's journal does not bring them back")
        func removedThenNewDevice() throws {
            let (d, folder, former) = try Merge.device("laptop")
            let things = try Self.recordThings(d)
            #expect(try d.ctl("sync", "disable").exitCode == 0)
            try Self.removeThings(d, session: things.session)
            let renewed = try d.ctl("sync", "enable", folder, "--new-device")
            #expect(renewed.exitCode == 0, "\(renewed)")
            let id = try Self.deviceID(d)
            #expect(id != former)
            _ = try d.status()
            try Self.expectStillRemoved(d, things, after: "a new device")
            try Self.expectRemovalLines("\(folder)/\(id).jsonl", device: id, things)
        }

        @Test("removed while the journal is another machine's (the removal waits), then --new-device: they stay removed")
        func removedWhileSharedThenNewDevice() throws {
            let (d, folder, former) = try Merge.device("laptop")
            let things = try Self.recordThings(d)
            // Another machine's line under this device's id: the journal is not this device's alone.
            let journal = "\(folder)/\(former).jsonl"
            let foreign = JournalEntry(
                device: former, hlc: HLC(millis: Int64(Date().timeIntervalSince1970 * 1000) - 1000, counter: 0),
                change: .planCleared(day: try #require(CalendarDay("2026-11-29"))))
            let extended = try SyncOwnJournal.bytes(journal) + Array((foreign.line + "\n").utf8)
            try Merge.deliver(extended, to: journal)
            try Merge.eventually("the journal is seen as shared") { try d.call("sync_status")["shared_device"] == .bool(true) }
            try Self.removeThings(d, session: things.session)
            #expect(try d.call("sync_status")["waiting"]?.intValue ?? 0 >= 2, "the removals wait")
            #expect(try d.ctl("sync", "enable", folder, "--new-device").exitCode == 0)
            _ = try d.status()
            try Self.expectStillRemoved(d, things, after: "a new device")
            try Self.expectRemovalLines("\(folder)/\(try Self.deviceID(d)).jsonl", device: try Self.deviceID(d), things)
        }
    }
}
