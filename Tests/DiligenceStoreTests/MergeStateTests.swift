import DiligenceCore
import DiligenceSync
import DiligenceTestSupport
import Testing

@testable import DiligenceStore

// What the merge of a sync folder's journals reached, kept in the database (Store+MergeState.swift):
// sessions in `sessions` kept by version alone, the rest by line.

@Suite struct MergeStateTests {
    static let own = "0c4a2d5e-3f4b-4c6d-8e9f-0a1b2c3d4e5f"
    static let other = "7d1e9b20-5a6c-4f8e-9d0b-1c2d3e4f5a6b"
    static let third = "e0f1a2b3-c4d5-4e6f-8a9b-0c1d2e3f4a5b"
    /// The other device's own id of its task Study (this device's Study row holds it).
    static let otherStudy = "5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e"

    /// A session of the other device merged into `store` (a row of `sessions`), as journals name it.
    func merged(_ store: Store, start: Double) throws -> SyncedSession {
        var there = session(try store.findTask("Study"), start: start)
        there.device = Self.other
        let admission = try store.admit([there], source: .sync, window: 0...4e9, mode: .whatPasses)
        let uuid = try #require(admission.uuids.values.first)
        var synced = try #require(try store.syncedSessionRows(device: Self.own, uuids: [uuid])[uuid]).session
        synced.task = Self.otherStudy
        return synced
    }

    func row(_ s: SyncedSession, _ version: Version) -> KeptSession {
        KeptSession(id: s.id, version: version, task: s.task, device: s.device)
    }

    /// What `store` keeps for `folder`: the state, and each restored session with its version.
    func restored(_ store: Store, _ folder: String = "/sync") throws -> (MergeState?, [String: (SyncedSession, Version)]) {
        var sessions: [String: (SyncedSession, Version)] = [:]
        let state = try store.restoreMergeState(folder: folder, device: Self.own) { sessions[$0.id] = ($0, $1) }
        return (state, sessions)
    }

    /// `sync_removed` (schema 9): once a journal was started, every session and task this device
    /// removes is kept, journal or not (sync disabled since); written again under its UUID it is
    /// not removed; what a merge deletes is the other devices' removal, not this one's.
    @Test func removalsAreKeptOnceAJournalWasStarted() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Store(location: .path(dir.database))
        let study = try store.findTask("Study")
        let before = try store.record(session(study, start: 1_000))
        _ = try store.removeSession(id: before.id)
        #expect(try store.keptRemovals().isEmpty, "no journal was ever started: nothing a journal could bring back")
        try store.startJournal(directory: dir.path + "/sync", clock: HLC(millis: 1, counter: 0), name: "laptop")
        try store.stopJournal()
        let removed = try store.record(session(study, start: 2_000))
        let uuid = removed.uuid
        _ = try store.removeSession(id: removed.id)
        let errands = try store.findTask("Errands")
        _ = try store.removeTask(id: errands.id)
        #expect(try store.keptRemovals() == [.sessionRemoved(id: uuid), .taskRemoved(id: errands.uuid)], "with sync off too")
        // The same UUID recorded again (an import of it): no longer removed.
        var again = session(study, start: 2_000)
        again.uuid = uuid
        _ = try store.record(again)
        #expect(try store.keptRemovals() == [.taskRemoved(id: errands.uuid)])
        // A merge's deletion is not this device's removal.
        let merged = try store.record(session(study, start: 3_000))
        let mergedID = merged.id
        try store.mergeTransaction { () throws(DiligenceError) in try store.deleteSession(id: mergedID) }
        #expect(try store.keptRemovals() == [.taskRemoved(id: errands.uuid)])
        #expect(try store.syncSetting(.merging) == nil, "the merge's mark goes with its transaction")
    }

    /// Sessions merged from the journals are written with the device that recorded them, in one
    /// batch of several devices; a merged session of no other device (this one's) says none, and
    /// sessions written before keep what they say.
    @Test func mergedSessionsAreWrittenWithTheirDevice() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Store(location: .path(dir.database))
        let study = try store.findTask("Study")
        let mine = try store.admit([session(study, start: 1_000)], source: .sync, window: 0...4e9, mode: .whatPasses)
        var batch = [session(study, start: 2_000), session(study, start: 2_500), session(study, start: 9_000)]
        batch[0].device = Self.other
        batch[1].device = Self.third // overlapping the other device's: both kept
        batch[2].device = Self.other
        let merged = try store.admit(batch, source: .sync, window: 0...4e9, mode: .whatPasses)
        #expect(merged.recorded.count == 3 && merged.refused.isEmpty)
        func device(_ id: Int64?) throws -> String? { try store.session(id: try #require(id)).device }
        #expect(try device(mine.recorded[0]) == nil, "this device's session stays this device's")
        #expect(try device(merged.recorded[0]) == Self.other)
        #expect(try device(merged.recorded[1]) == Self.third)
        #expect(try device(merged.recorded[2]) == Self.other)
        #expect(try store.sessionsByDevice() == [nil: 1, Self.other: 2, Self.third: 1])
    }

    @Test func keptStateComesBackAfterReopening() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        // A checksum with its top bit set: SQLite's INTEGER is signed.
        let cursor = JournalCursor(offset: 8123, line: 42, tail: 0xF000_0000_0000_0001)
        let byOther = Version(hlc: HLC(millis: 1_764_000_000_123, counter: 7), device: Self.other)
        let byThird = Version(hlc: HLC(millis: 1_764_000_000_456, counter: 0), device: Self.third)
        // A session whose task is not known here: not in `sessions`, so kept by its line.
        let held = SyncedSession(
            id: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", task: "1f2e3d4c-5b6a-4978-8695-a4b3c2d1e0f9", device: Self.third,
            start: 30_000, end: 31_500, plannedSeconds: 1500, focusedSeconds: 1500, pauses: 0, outcome: .completed)
        let heldLine = JournalEntry(device: Self.third, hlc: byThird.hlc, change: .sessionRecorded(held)).line
        let (a, b): (SyncedSession, SyncedSession)
        do {
            let store = try Store(location: .path(dir.database))
            a = try merged(store, start: 10_000)
            b = try merged(store, start: 20_000) // edited by a third device: the writer is not its recorder
            try store.transaction { () throws(DiligenceError) in
                try store.saveMergeState(
                    folder: "/sync", cursors: [Self.other: cursor],
                    sessions: [row(a, byOther), row(b, byThird)], held: [(row(held, byThird), heldLine)],
                    lines: ["plan 2026-12-01": "a plan's line", "task \(Self.otherStudy)": "a task's line"])
            }
        }
        let store = try Store(location: .path(dir.database))
        let (state, sessions) = try restored(store)
        let kept = try #require(state)
        #expect(kept.cursors == [Self.other: cursor])
        #expect(kept.lines.sorted() == [heldLine, "a plan's line", "a task's line"].sorted())
        #expect(kept.sessions == 2 && sessions.count == 2)
        #expect(sessions[a.id]?.0 == a && sessions[a.id]?.1 == byOther, "the session's own task id and its version: \(sessions)")
        #expect(sessions[b.id]?.0 == b && sessions[b.id]?.1 == byThird)
        #expect(try restored(store, "/elsewhere").0 == nil, "what was read in another folder is not this folder's")

        // A later save replaces a register's row; a failed transaction leaves what was kept.
        let later = Version(hlc: HLC(millis: 1_764_000_001_000, counter: 0), device: Self.other)
        try store.transaction { () throws(DiligenceError) in
            try store.saveMergeState(
                folder: "/sync", cursors: [:], sessions: [row(b, later)],
                lines: ["plan 2026-12-01": "a later plan's line"])
        }
        func keptNow() throws -> [String] {
            let (state, sessions) = try restored(store)
            return (state?.lines ?? []).sorted() + sessions.map { "\($0.key) \($0.value.1.hlc) \($0.value.1.device)" }.sorted()
                + (state?.cursors ?? [:]).map { "\($0.key) \($0.value.offset)" }
        }
        let before = try keptNow()
        #expect(before.contains("\(b.id) \(later.hlc) \(Self.other)") && before.contains("a later plan's line"), "\(before)")
        let failed = error { () throws(DiligenceError) in
            try store.transaction { () throws(DiligenceError) in
                try store.saveMergeState(
                    folder: "/sync", cursors: [Self.other: .start], sessions: [row(held, later)],
                    lines: ["plan 2026-12-01": "lost"])
                throw DiligenceError(.storageError, "the merge's transaction failed")
            }
        }
        #expect(failed != nil)
        #expect(try keptNow() == before, "a failed transaction keeps nothing of its own")

        // A session removed from `sessions` since (this device's journal says so) is left out.
        try store.deleteSession(id: try #require(try store.syncedSessionRows(device: Self.own, uuids: [a.id])[a.id]).id)
        #expect(try restored(store).1.keys.sorted() == [b.id])
        // Another folder's save drops this folder's; forgetting drops everything.
        try store.transaction { () throws(DiligenceError) in
            try store.saveMergeState(folder: "/elsewhere", cursors: [Self.other: cursor], sessions: [], lines: [:])
        }
        #expect(try restored(store).0 == nil)
        #expect(try restored(store, "/elsewhere").0?.cursors == [Self.other: cursor])
        try store.forgetMergeState()
        #expect(try restored(store, "/elsewhere").0 == nil)
        #expect(try store.connection.query("SELECT count(*) FROM sync_sessions").first?.int(0) == 0)
    }
}
