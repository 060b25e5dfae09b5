import DiligenceCore
import DiligenceSync

// What the merge of a sync folder's journals reached (docs/sync.md, "Merging the other devices'
// journals"; docs/storage.md, schema 8), kept in the transaction that applies a batch so that a
// restart reads only what the journals gained:
//
// - `sync_cursors`: how far each journal was read (offset, line, checksum of the bytes before);
// - `sync_sessions`: each session's register, compact — its version, its task's id and, only
//   when the session is not in `sessions` (its task unknown yet or removed, or refused here), the
//   line holding it; a session in `sessions` is read back from there;
// - `sync_registers`: every other register (tombstones, tasks, task births, plans, any kind a new
//   journal change brings) as the text of the line holding it, by register name.
//
// `database_info.sync_merged` names the folder they belong to.

/// What a merge reached, as kept: the reading positions, and the lines of the registers that are
/// not sessions in the database (those come through `restoreMergeState`'s `session`).
public struct MergeState: Sendable {
    public var cursors: [String: JournalCursor] = [:]
    public var lines: [String] = []
    /// Sessions restored from the `sessions` table.
    public var sessions = 0

    public init() {}
}

extension Store {
    static let mergeStateMigration = """
        CREATE TABLE sync_cursors (device TEXT PRIMARY KEY, offset INTEGER NOT NULL, line INTEGER NOT NULL, tail INTEGER NOT NULL)
            WITHOUT ROWID;
        CREATE TABLE sync_sessions (
            uuid TEXT PRIMARY KEY, millis INTEGER NOT NULL, counter INTEGER NOT NULL, writer TEXT, task TEXT NOT NULL, line TEXT
        ) WITHOUT ROWID;
        CREATE TABLE sync_registers (register TEXT PRIMARY KEY, line TEXT NOT NULL) WITHOUT ROWID;
        """

    /// Sessions read back per query: a bounded page of rows in memory, not the whole history.
    static let restorePage = 4096

    /// What the merge of `folder` reached, each session the `sessions` table shows given to
    /// `session` with its version (a session of `device`'s own when it has no device); nil when
    /// nothing is kept for that folder. A kept session no longer in `sessions` (removed here since:
    /// this device's journal says so) is left out.
    public func restoreMergeState(
        folder: String, device: String, session: (SyncedSession, Version) -> Void
    ) throws(DiligenceError) -> MergeState? {
        guard try syncSetting(.merged) == folder else { return nil }
        var state = MergeState()
        for row in try connection.query("SELECT device, offset, line, tail FROM sync_cursors") {
            // The checksum is a UInt64 kept in SQLite's signed INTEGER, bit for bit.
            state.cursors[row.string(0)] = JournalCursor(offset: row.int64(1), line: row.int(2), tail: UInt64(bitPattern: row.int64(3)))
        }
        state.lines = try connection.query("SELECT line FROM sync_registers").map { $0.string(0) }
        state.lines += try connection.query("SELECT line FROM sync_sessions WHERE line IS NOT NULL").map { $0.string(0) }
        // Columns: the session's (`session(from:)`), then its own task's id (as `syncedSession`
        // reads it), then its version.
        let query = """
            SELECT \(Self.sessionColumns), k.task, k.millis, k.counter, k.writer, k.uuid
            FROM sync_sessions k JOIN sessions s ON s.uuid = k.uuid JOIN tasks t ON t.id = s.task_id
            WHERE k.line IS NULL AND k.uuid > ? ORDER BY k.uuid LIMIT \(Self.restorePage)
            """
        var after = ""
        while true {
            let rows = try connection.query(query, [.text(after)])
            for row in rows {
                let synced = try syncedSession(row, device: device)
                let own = Self.sessionColumnCount
                let hlc = HLC(millis: row.int64(own + 1), counter: row.int64(own + 2))
                session(synced, Version(hlc: hlc, device: row.optionalString(own + 3) ?? synced.device))
            }
            state.sessions += rows.count
            guard rows.count == Self.restorePage, let last = rows.last else { break }
            after = last.string(Self.sessionColumnCount + 4)
        }
        return state
    }

    /// How many session registers are kept (room to make before restoring them).
    public func keptSessionCount() throws(DiligenceError) -> Int {
        try connection.query("SELECT count(*) FROM sync_sessions").first?.int(0) ?? 0
    }

    /// Keeps where the journals of `folder` were read to and the registers lines changed there, in
    /// the caller's transaction (the one applying the lines): `sessions`, in `sessions` now (a
    /// later one of an id replacing an earlier); `held`, sessions that are not, with the line
    /// holding each; `lines`, every other register (name → line). What was kept for another
    /// folder is dropped first.
    public func saveMergeState(
        folder: String, cursors: [String: JournalCursor], sessions: [KeptSession], held: [(KeptSession, line: String)] = [],
        lines: [String: String]
    ) throws(DiligenceError) {
        if try syncSetting(.merged) != folder {
            try forgetMergeState()
            try setSyncSetting(.merged, folder)
        }
        for (device, cursor) in cursors {
            try connection.run(
                "INSERT OR REPLACE INTO sync_cursors (device, offset, line, tail) VALUES (?, ?, ?, ?)",
                [.text(device), .integer(cursor.offset), .int(cursor.line), .integer(Int64(bitPattern: cursor.tail))])
        }
        // As given, not sorted: in a merge of 100 000 sessions sorting them took 3.6 % of the
        // samples (perf), the inserts 1.3-1.5 % sorted or not.
        func row(_ kept: KeptSession, _ line: String?) -> [SQLite.Value] {
            // The writer is most often the device that recorded the session: then not repeated.
            let writer = kept.version.device == kept.device ? nil : kept.version.device
            return [
                .text(kept.id), .integer(kept.version.hlc.millis), .integer(kept.version.hlc.counter), .optional(writer),
                .text(kept.task), .optional(line),
            ]
        }
        let target = "sync_sessions (uuid, millis, counter, writer, task, line)"
        let lines = lines.sorted { $0.key < $1.key }
        try connection.withLargePageCache(if: sessions.count > Self.largeBatch) { () throws(DiligenceError) in
            try connection.insertMany(into: target, columns: 6, count: sessions.count, replacing: true) { row(sessions[$0], nil) }
            try connection.insertMany(into: target, columns: 6, count: held.count, replacing: true) { row(held[$0].0, held[$0].line) }
            try connection.insertMany(into: "sync_registers (register, line)", columns: 2, count: lines.count, replacing: true) {
                [.text(lines[$0].key), .text(lines[$0].value)]
            }
        }
    }

    /// Drops what the merge reached (sync disabled: enabling it again reads every journal anew).
    public func forgetMergeState() throws(DiligenceError) {
        try transaction { () throws(DiligenceError) in
            for table in ["sync_cursors", "sync_sessions", "sync_registers"] { try connection.run("DELETE FROM \(table)") }
            try setSyncSetting(.merged, nil)
        }
    }
}
