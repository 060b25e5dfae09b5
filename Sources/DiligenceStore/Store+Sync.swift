import DiligenceCore
import DiligenceSync
import DiligenceTime

// The database's side of sync (docs/sync.md). Every change of a task, a session or a day's plan
// — whatever command, timer or import made it — is noted in `sync_outbox` by triggers, in the
// transaction that makes it, while a journal is kept (`sync_journal` is set): one door no
// write can miss. The daemon's `SyncJournal` turns the notes into journal lines (the thing's
// state as it is then) and deletes them once the lines are on disk; a note whose line could
// not be written waits for the next try, so the journal never misses a change the database has.

/// The names of the sync settings in `database_info`.
public enum SyncSetting: String, Sendable {
    /// The device's random id (made by the migration to schema 7).
    case deviceID = "device_id"
    /// The name `sync enable --name` gave; absent: the host name.
    case deviceName = "device_name"
    /// The folder `sync enable` chose; absent: sync is off unless the config file sets one.
    case directory = "sync_directory"
    /// The folder whose journal holds the history up to the notes in `sync_outbox`; absent:
    /// no journal is kept and nothing is noted.
    case journal = "sync_journal"
    /// The latest hybrid-clock reading written to the journal, `MILLIS.COUNTER`.
    case clock = "sync_hlc"
    /// The folder whose journals the kept merge state (`sync_cursors`, `sync_sessions`,
    /// `sync_registers`) was read from.
    case merged = "sync_merged"
    /// The device's name as the journal last said it (`device_named`): a name that differs
    /// from it (a new `--name`, the host renamed) is written again.
    case journalName = "sync_journal_name"
    /// Where this device's last write left its journal, a `JournalCursor.text` (the file's size
    /// and the checksum of its last 4 KiB): a file that does not end so was changed by another
    /// hand (docs/sync.md, "Another hand in this device's journal").
    case journalEnd = "sync_journal_end"
    /// Set only inside a merge's transaction: what it deletes is not this device's removal.
    case merging = "sync_merging"
}

extension Store {
    /// The migration to schema 7: the device id, `sessions.device` (NULL: this device's own) and
    /// the outbox with its triggers. `change` is an SQL expression: an update of a task that
    /// archives or unarchives it is `task_archived`.
    static let syncMigration: String = {
        let archivedOrEdited = "CASE WHEN NEW.archived IS NOT OLD.archived THEN 'task_archived' ELSE 'task_edited' END"
        let notes: [(table: String, event: String, change: String, ref: String)] = [
            ("sessions", "INSERT", "'session_recorded'", "NEW.uuid"), ("sessions", "UPDATE", "'session_edited'", "NEW.uuid"),
            ("sessions", "DELETE", "'session_removed'", "OLD.uuid"), ("tasks", "INSERT", "'task_added'", "NEW.uuid"),
            ("tasks", "UPDATE", archivedOrEdited, "NEW.uuid"), ("tasks", "DELETE", "'task_removed'", "OLD.uuid"),
            ("plans", "INSERT", "'plan_set'", "NEW.day"), ("plans", "UPDATE", "'plan_set'", "NEW.day"),
            ("plans", "DELETE", "'plan_cleared'", "OLD.day"),
        ]
        let triggers = notes.map { note in
            """
            CREATE TRIGGER sync_\(note.table)_\(note.event.lowercased()) AFTER \(note.event) ON \(note.table)
            WHEN EXISTS (SELECT 1 FROM database_info WHERE name = '\(SyncSetting.journal.rawValue)')
            BEGIN INSERT INTO sync_outbox (change, ref) VALUES (\(note.change), \(note.ref)); END;
            """
        }
        return """
            INSERT INTO database_info (name, value) VALUES ('\(SyncSetting.deviceID.rawValue)', \(UUIDText.sqliteExpression));
            ALTER TABLE sessions ADD COLUMN device TEXT;
            CREATE TABLE sync_outbox (seq INTEGER PRIMARY KEY, change TEXT NOT NULL, ref TEXT NOT NULL);
            """ + triggers.joined(separator: "\n")
    }()

    /// The migration to schema 9: `sync_removed`, every session and task this device removed
    /// since its first journal (`sync_hlc` is set once one was written), kept whether or not a
    /// journal is kept now, by triggers. A journal started again (sync enabled again, another
    /// folder, a new device id) writes their removals, so the older lines of a journal that
    /// recorded them never bring them back. A row written again under its UUID (`history edit`,
    /// an import) is no longer removed. A merge's deletions are the other devices' removals
    /// (or a session whose task is not here), which the merged history holds.
    static let removalMigration: String = {
        let kept = """
            EXISTS (SELECT 1 FROM database_info WHERE name = '\(SyncSetting.clock.rawValue)')
                AND NOT EXISTS (SELECT 1 FROM database_info WHERE name = '\(SyncSetting.merging.rawValue)')
            """
        let triggers = [("session", "sessions"), ("task", "tasks")].map { kind, table in
            """
            CREATE TRIGGER sync_removed_\(kind) AFTER DELETE ON \(table) WHEN OLD.uuid IS NOT NULL AND \(kept)
            BEGIN INSERT OR IGNORE INTO sync_removed (uuid, kind) VALUES (OLD.uuid, '\(kind)'); END;
            CREATE TRIGGER sync_restored_\(kind) AFTER INSERT ON \(table) WHEN NEW.uuid IS NOT NULL
            BEGIN DELETE FROM sync_removed WHERE uuid = NEW.uuid; END;
            """
        }
        return "CREATE TABLE sync_removed (uuid TEXT PRIMARY KEY, kind TEXT NOT NULL) WITHOUT ROWID;\n"
            + triggers.joined(separator: "\n")
    }()

    // MARK: Settings

    public func syncSetting(_ setting: SyncSetting) throws(DiligenceError) -> String? {
        try info(setting.rawValue)
    }

    /// Sets `setting` to `value`, or removes it (nil).
    public func setSyncSetting(_ setting: SyncSetting, _ value: String?) throws(DiligenceError) {
        try setInfo(setting.rawValue, value)
    }

    /// This device's id.
    public func deviceID() throws(DiligenceError) -> String {
        guard let id = try syncSetting(.deviceID) else {
            throw DiligenceError(.storageError, "The database \(path) has no device id (its schema is \(Self.schemaVersion)).")
        }
        return id
    }

    /// Makes this database a new device: a new random id (as the migration to schema 7 made
    /// the first), no journal kept and no merge state (the former id's journal is now another
    /// device's). Returns the new id.
    public func renewDeviceID() throws(DiligenceError) -> String {
        try transaction { () throws(DiligenceError) -> String in
            try connection.run(
                "UPDATE database_info SET value = \(UUIDText.sqliteExpression) WHERE name = ?", [.text(SyncSetting.deviceID.rawValue)])
            try stopJournal()
            try forgetMergeState()
            return try deviceID()
        }
    }

    // MARK: The journal's notes

    /// Starts keeping the journal in `directory`, whose file now holds the whole history and
    /// the device's `name`: the notes of earlier changes are dropped, and changes from now on
    /// are noted.
    public func startJournal(directory: String, clock: HLC, name: String) throws(DiligenceError) {
        try transaction { () throws(DiligenceError) in
            try setSyncSetting(.journal, directory)
            try setSyncSetting(.clock, clock.description)
            try setSyncSetting(.journalName, name)
            try connection.run("DELETE FROM sync_outbox")
        }
    }

    /// The journal says the device is called `name` now, in its line stamped `clock`.
    public func journalNamed(_ name: String, clock: HLC) throws(DiligenceError) {
        try transaction { () throws(DiligenceError) in
            try setSyncSetting(.journalName, name)
            try setSyncSetting(.clock, clock.description)
        }
    }

    /// Stops noting changes (sync disabled).
    public func stopJournal() throws(DiligenceError) {
        try transaction { () throws(DiligenceError) in
            try setSyncSetting(.journal, nil)
            try setSyncSetting(.journalEnd, nil)
            try connection.run("DELETE FROM sync_outbox")
        }
    }

    /// The clock reading last written, `.zero` when none was.
    public func journalClock() throws(DiligenceError) -> HLC {
        guard let text = try syncSetting(.clock) else { return .zero }
        let parts = text.split(separator: ".")
        guard parts.count == 2, let millis = Int64(parts[0]), let counter = Int64(parts[1]) else { return .zero }
        return HLC(millis: millis, counter: counter)
    }

    /// How many changes wait for the journal.
    public func journalBacklog() throws(DiligenceError) -> Int {
        try connection.query("SELECT count(*) FROM sync_outbox").first?.int(0) ?? 0
    }

    /// The oldest `limit` noted changes as journal changes of `device`, and the last note's
    /// number; nil when nothing waits. A note only says that a thing changed: its line says what
    /// the thing is now, one line per thing at its last note — its state while it exists (so a
    /// session an edit deleted and wrote again under its UUID is edited, not removed), its
    /// removal once it is gone.
    public func journalNotes(limit: Int, device: String) throws(DiligenceError) -> (changes: [JournalChange], through: Int64)? {
        let rows = try connection.query("SELECT seq, change, ref FROM sync_outbox ORDER BY seq LIMIT ?", [.int(limit)])
        guard let last = rows.last?.int64(0) else { return nil }
        var notes: [String: [String]] = [:] // thing → its notes' changes, in order
        var order: [String] = [] // things by their last note
        for row in rows {
            let change = row.string(1)
            let thing = "\(change.prefix { $0 != "_" }) \(row.string(2))"
            notes[thing, default: []].append(change)
            order.removeAll { $0 == thing }
            order.append(thing)
        }
        var changes: [JournalChange] = []
        for thing in order {
            let ref = String(thing.drop { $0 != " " }.dropFirst())
            if let change = try journalChange(notes[thing] ?? [], ref, device: device) { changes.append(change) }
        }
        return (changes, last)
    }

    /// Whether `change` is of a thing a note waits for (as `journalNotes` groups them: the
    /// thing's kind and id, or day): a line a crash cut from its record is one of those.
    public func isNoted(_ change: JournalChange) throws(DiligenceError) -> Bool {
        let thing: (kind: String, ref: String)
        switch change {
        case .sessionRecorded(let s), .sessionEdited(let s): thing = ("session", s.id)
        case .sessionRemoved(let id): thing = ("session", id)
        case .taskAdded(let t), .taskEdited(let t), .taskArchived(let t): thing = ("task", t.id)
        case .taskRemoved(let id): thing = ("task", id)
        case .planSet(let day, _), .planCleared(let day): thing = ("plan", day.description)
        case .deviceNamed: return false
        }
        let found = try connection.query(
            "SELECT 1 FROM sync_outbox WHERE ref = ? AND substr(change, 1, instr(change, '_') - 1) = ? LIMIT 1",
            [.text(thing.ref), .text(thing.kind)])
        return !found.isEmpty
    }

    /// The notes up to `seq` are in the journal, the last of them stamped `clock`.
    public func journalWritten(through seq: Int64, clock: HLC) throws(DiligenceError) {
        try transaction { () throws(DiligenceError) in
            try connection.run("DELETE FROM sync_outbox WHERE seq <= ?", [.integer(seq)])
            try setSyncSetting(.clock, clock.description)
        }
    }

    /// The removals `sync_removed` keeps, as journal changes: sessions, then tasks, each by id.
    public func keptRemovals() throws(DiligenceError) -> [JournalChange] {
        try connection.query("SELECT kind, uuid FROM sync_removed ORDER BY kind, uuid").map {
            $0.string(0) == "task" ? .taskRemoved(id: $0.string(1)) : .sessionRemoved(id: $0.string(1))
        }
    }

    /// The whole history as journal changes: every task, session and plan (a journal's start).
    public func journalSnapshot(device: String) throws(DiligenceError) -> [JournalChange] {
        var changes: [JournalChange] = try connection.query("SELECT \(Self.taskReadColumns) FROM tasks ORDER BY id").map {
            let config = Self.task(from: $0)
            return .taskAdded(SyncedTask(id: config.uuid, config: config, archived: config.archived))
        }
        for row in try connection.query("\(Self.syncedSessionQuery) ORDER BY s.start, s.id") {
            changes.append(.sessionRecorded(try syncedSession(row, device: device)))
        }
        for row in try connection.query("SELECT p.day, t.uuid FROM plans p JOIN tasks t ON t.id = p.task_id ORDER BY p.day") {
            if let day = CalendarDay(row.string(0)) { changes.append(.planSet(day: day, task: row.string(1))) }
        }
        return changes
    }

    /// The line for a thing's `notes` (in order): its state now, or its removal; nil for a
    /// plan whose task is gone (the task's removal says it).
    private func journalChange(_ notes: [String], _ ref: String, device: String) throws(DiligenceError) -> JournalChange? {
        guard let first = notes.first else { return nil }
        switch first.prefix(while: { $0 != "_" }) {
        case "session":
            guard let row = try connection.query("\(Self.syncedSessionQuery) WHERE s.uuid = ?", [.text(ref)]).first else {
                return .sessionRemoved(id: ref)
            }
            let session = try syncedSession(row, device: device)
            return first == "session_recorded" ? .sessionRecorded(session) : .sessionEdited(session)
        case "task":
            guard let row = try connection.query("SELECT \(Self.taskReadColumns) FROM tasks WHERE uuid = ?", [.text(ref)]).first else {
                return .taskRemoved(id: ref)
            }
            let config = Self.task(from: row)
            let task = SyncedTask(id: ref, config: config, archived: config.archived)
            if first == "task_added" { return .taskAdded(task) }
            return notes.contains("task_archived") ? .taskArchived(task) : .taskEdited(task)
        default:
            guard let day = CalendarDay(ref) else { return nil }
            guard let row = try connection.query("SELECT p.task_id FROM plans p WHERE p.day = ?", [.text(ref)]).first else {
                return .planCleared(day: day)
            }
            let task = try connection.query("SELECT uuid FROM tasks WHERE id = ?", [.integer(row.int64(0))]).first?.string(0)
            return task.map { .planSet(day: day, task: $0) }
        }
    }

    /// A session with its task's and device's ids: `syncedSession(_:device:)` reads a row.
    /// Every session's figures (`session(from:)`'s columns, the store's id and task row first), then its task's id.
    private static let syncedSessionQuery = "SELECT \(sessionColumns), t.uuid FROM sessions s JOIN tasks t ON t.id = s.task_id"

    /// A row of `syncedSessionQuery`; a session without a device is `device`'s own.
    func syncedSession(_ row: SQLite.Row, device: String) throws(DiligenceError) -> SyncedSession {
        let work = try session(from: row)
        return SyncedSession(work: work, task: row.string(Self.sessionColumnCount), device: work.device ?? device)
    }

    // MARK: Merging the other devices' lines

    /// Runs `body` in one transaction with the notes off: what a merge writes comes from the
    /// journals, not from this device, and goes to no journal.
    public func mergeTransaction<T>(_ body: () throws(DiligenceError) -> T) throws(DiligenceError) -> T {
        try transaction { () throws(DiligenceError) -> T in
            let journal = try syncSetting(.journal)
            try setSyncSetting(.journal, nil)
            try setSyncSetting(.merging, "1")
            let result = try body()
            try setSyncSetting(.merging, nil)
            try setSyncSetting(.journal, journal)
            return result
        }
    }

    /// A task from another device, under `config.uuid`, with a name free here (checked).
    public func addSyncedTask(_ config: TaskConfig) throws(DiligenceError) -> TaskConfig {
        var task = config
        task.name = try TaskName.normalize(task.name)
        try task.validate()
        let added = try insertTask(task)
        return try setArchived(id: added.id, config.archived)
    }

    /// Removes task row `id` with its sessions and plans (a task another device removed).
    public func deleteSyncedTask(id: Int64) throws(DiligenceError) {
        try connection.run("DELETE FROM sessions WHERE task_id = ?", [.integer(id)])
        try connection.run("DELETE FROM plans WHERE task_id = ?", [.integer(id)])
        try connection.run("DELETE FROM tasks WHERE id = ?", [.integer(id)])
    }

    /// Moves the sessions and plans of task row `from` to `to` (two rows of one merged task).
    public func moveSyncedTask(from: Int64, to: Int64) throws(DiligenceError) {
        try connection.run("UPDATE sessions SET task_id = ? WHERE task_id = ?", [.integer(to), .integer(from)])
        try connection.run("UPDATE plans SET task_id = ? WHERE task_id = ?", [.integer(to), .integer(from)])
    }

    /// Every session with a UUID (or those of `uuids`): its row id, task row and what a journal
    /// says of it.
    public func syncedSessionRows(device: String, uuids: Set<String>? = nil) throws(DiligenceError) -> [String: (
        id: Int64, taskRow: Int64, session: SyncedSession
    )] {
        var rows: [String: (id: Int64, taskRow: Int64, session: SyncedSession)] = [:]
        let query = Self.syncedSessionQuery
        var found: [SQLite.Row] = []
        if let uuids {
            for uuid in uuids { found += try connection.query(query + " WHERE s.uuid = ?", [.text(uuid)]) }
        } else {
            found = try connection.query(query)
        }
        for row in found {
            let session = try syncedSession(row, device: device)
            rows[session.id] = (row.int64(0), row.int64(1), session)
        }
        return rows
    }

    /// Writes `session` over row `id` (another device's edit), on task row `taskRow`.
    public func updateSyncedSession(id: Int64, taskRow: Int64, _ s: SyncedSession, ownDevice: String) throws(DiligenceError) {
        try connection.run(
            """
            UPDATE sessions SET task_id = ?, start = ?, end = ?, planned_seconds = ?, focused_seconds = ?, pauses = ?, outcome = ?,
                note = ?, away_seconds = ?, reason = ?, device = ?, interruptions = ?, segments = ? WHERE id = ?
            """,
            [
                .integer(taskRow), .real(s.start), .real(s.end), .int(s.plannedSeconds), .int(s.focusedSeconds), .int(s.pauses),
                .text(s.outcome.rawValue), .optional(s.note), .int(s.awaySeconds), .optional(s.reason?.rawValue),
                s.device == ownDevice ? .null : .text(s.device), Self.interruptionsColumn(s.interruptions),
                .optional(Self.segmentsText(s.work)), .integer(id),
            ])
    }

    public func deleteSession(id: Int64) throws(DiligenceError) {
        try connection.run("DELETE FROM sessions WHERE id = ?", [.integer(id)])
    }
}
