import DiligenceCore
import DiligenceJSON
import DiligenceTime
import Glibc

/// The daemon's database: tasks, recorded work sessions, day plans and the saved timer.
///
/// Not thread-safe and not `Sendable`: the daemon uses one `Store` from one serial queue.
/// Every method either completes (and, for writes, has committed) or throws a `DiligenceError`
/// with a protocol error code (`storage_error`, `database_locked`, `database_corrupt`, or a
/// task-rule code such as `unknown_task`). docs/storage.md describes the schema.
public final class Store {
    /// The schema version this build writes (`PRAGMA user_version`).
    public static let schemaVersion = 13

    private let db: SQLite
    /// Totals already summed (`totals(from:to:taskID:)`), kept while nothing is written.
    var totalsMemo = WriteMemo<Tally>()
    /// Time away and whether other devices' sessions are there (`awaySeconds`,
    /// `holdsOtherDevicesSessions`) of a range, kept while nothing is written.
    var rangeMemo = WriteMemo<Int>()

    /// The database file path, or ":memory:".
    public var path: String { db.path }

    /// Opens the database at `location`, creating it (mode 0600) and its schema when new. A new
    /// database receives the seven `TaskConfig.defaults`, in the same transaction as the schema,
    /// so a crash can never leave a database with tables but no tasks.
    ///
    /// Throws `database_too_new` for a database written by a newer diligence (left unmodified),
    /// `database_corrupt` for a file that is not a database, `database_locked` when another
    /// process holds the write lock beyond the busy timeout.
    public init(location: SQLite.Location) throws(DiligenceError) {
        if case .path(let path) = location { try Self.refuseForeignFileUnderItsLog(path) }
        db = try SQLite(location: location, inspect: Self.refuseForeign)
        try migrate()
        try db.exec(Self.readIndexes)
        try db.exec(Self.sessionEventSQL)
        identity = try db.query("SELECT value FROM database_info WHERE name = 'uuid'").first?.string(0) ?? ""
    }

    /// A random id given to the database when it is created (or migrated to schema 2): what
    /// says which database a session spilled at an exit belongs to.
    public private(set) var identity = ""

    /// The import being received, staged in memory until its last chunk.
    var pendingImport: PendingImport?
    /// `connect` was called: the daemon's journal and checkpoints follow the commits.
    public internal(set) var isConnected = false

    /// `PRAGMA application_id` of diligence's databases ("dilg"): another program's SQLite
    /// file is told apart without reading its tables.
    public static let applicationID: Int32 = 0x6469_6C67

    /// The tables of a diligence database of schema 1, which had no application id yet.
    private static let ownTables: Set<String> = ["tasks", "sessions", "plans", "timer_state"]

    /// Refuses a database diligence did not write: one with another application id, or with
    /// tables but neither diligence's application id nor diligence's tables. Runs before the
    /// connection writes anything, so such a file is left exactly as it was.
    private static func refuseForeign(_ db: SQLite) throws(DiligenceError) {
        let applicationID = try db.query("PRAGMA application_id").first?.int64(0) ?? 0
        if applicationID == Int64(Self.applicationID) { return }
        let tables = Set(
            try db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").map { $0.string(0) })
        if applicationID == 0 && tables.isEmpty { return }
        let version = try db.query("PRAGMA user_version").first?.int(0) ?? 0
        if applicationID == 0 && version >= 1 && ownTables.isSubset(of: tables) { return }
        let listed = tables.sorted().prefix(8).joined(separator: ", ")
        throw DiligenceError(
            .foreignDatabase,
            "\(db.path) is an SQLite database of another program (application id \(applicationID), tables: \(listed.isEmpty ? "none" : listed)); "
                + "diligence left it untouched. Point --database at a file of its own.")
    }

    /// SQLite replays a -wal over the file it lies beside, whoever wrote it: another program's
    /// database renamed over diligence's, diligence's stale log left, reads as diligence's
    /// through it, and the next checkpoint would overwrite the other's pages (issue 26). So with
    /// a log there, the file's own pages must be diligence's (or hold nothing) too.
    private static func refuseForeignFileUnderItsLog(_ path: String) throws(DiligenceError) {
        var log = stat()
        guard stat(path + "-wal", &log) == 0, log.st_size > 0, access(path, F_OK) == 0 else { return }
        do {
            _ = try SQLite(location: .fileAlone(path), inspect: refuseForeign)
        } catch  where error.code == .foreignDatabase {
            throw DiligenceError(
                .foreignDatabase,
                error.message
                    + " The \(path)-wal beside it is not that file's own (was another database renamed over diligence's?); it was left untouched too."
            )
        } catch {
            // Only a clear verdict counts: a checkpoint cut short (a full disk) leaves the file
            // alone inconsistent until its own log is replayed over it, which the open does.
        }
    }

    /// The underlying connection, for tests and for later schema users (plans).
    var connection: SQLite { db }

    /// Changes whenever this store writes anything: what is derived from the data and kept
    /// (the daemon's `today_completed`) is valid while this stays the same.
    public var writeCount: Int64 { db.totalChanges }

    /// One value the database keeps about itself (`database_info`); nil when it keeps none.
    func info(_ name: String) throws(DiligenceError) -> String? {
        try db.query("SELECT value FROM database_info WHERE name = ?", [.text(name)]).first?.string(0)
    }

    /// Sets the value `name` to `value`, or removes it (nil).
    func setInfo(_ name: String, _ value: String?) throws(DiligenceError) {
        if let value {
            try db.run(
                "INSERT INTO database_info (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                [.text(name), .text(value)])
        } else {
            try db.run("DELETE FROM database_info WHERE name = ?", [.text(name)])
        }
    }

    // MARK: Schema

    /// Each entry brings the schema from version `index` to `index + 1`. Append; never edit.
    private static let migrations: [String] = [
        """
        CREATE TABLE tasks (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE COLLATE NOCASE,
            description TEXT NOT NULL DEFAULT '',
            color TEXT NOT NULL,
            work_seconds INTEGER NOT NULL,
            short_break_seconds INTEGER NOT NULL,
            long_break_seconds INTEGER NOT NULL,
            long_break_every INTEGER NOT NULL,
            breaks INTEGER NOT NULL,
            autostart TEXT NOT NULL,
            focus_mode INTEGER NOT NULL,
            goal INTEGER NOT NULL,
            reminder_minute INTEGER NULL,
            sound TEXT NULL,
            -- Wall-clock seconds since 1970, from SQLite so the store reads no clock itself.
            created_at REAL NOT NULL DEFAULT ((julianday('now') - 2440587.5) * 86400.0)
        );
        CREATE TABLE sessions (
            id INTEGER PRIMARY KEY,
            task_id INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
            -- Wall-clock seconds since 1970. No CHECK(end >= start): a wall-clock step back
            -- during a phase can record exactly that, and the record is still worth keeping.
            start REAL NOT NULL,
            end REAL NOT NULL,
            planned_seconds INTEGER NOT NULL,
            focused_seconds INTEGER NOT NULL,
            pauses INTEGER NOT NULL,
            outcome TEXT NOT NULL CHECK (outcome IN ('completed', 'skipped', 'abandoned')),
            source TEXT NOT NULL DEFAULT 'timer'
        );
        CREATE INDEX sessions_start ON sessions(start);
        CREATE INDEX sessions_task_start ON sessions(task_id, start);
        -- completedCount runs on every status request; this keeps it an index range scan.
        CREATE INDEX sessions_completed_end ON sessions(end) WHERE outcome = 'completed';
        CREATE TABLE plans (
            day TEXT PRIMARY KEY, -- YYYY-MM-DD, local time
            task_id INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE
        );
        CREATE TABLE timer_state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            saved TEXT NOT NULL, -- SavedTimer as JSON
            saved_wall REAL NOT NULL,
            saved_boottime REAL NOT NULL,
            boot_id TEXT NOT NULL
        );
        """,
        // 2: the database's identity (spilled sessions name it) and diligence's application id.
        """
        CREATE TABLE database_info (name TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO database_info (name, value) VALUES ('uuid', lower(hex(randomblob(16))));
        PRAGMA application_id = \(applicationID);
        """,
        // 3: every session and task has a stable UUID (`UUIDText`): the iCalendar UID, what an
        // import matches on. Rows written before get a random one here; new rows get theirs
        // from the store as they are written (nullable only because ALTER TABLE cannot add a
        // column with a non-constant default).
        """
        ALTER TABLE sessions ADD COLUMN uuid TEXT;
        ALTER TABLE tasks ADD COLUMN uuid TEXT;
        UPDATE sessions SET uuid = \(UUIDText.sqliteExpression);
        UPDATE tasks SET uuid = \(UUIDText.sqliteExpression);
        CREATE UNIQUE INDEX sessions_uuid ON sessions(uuid);
        CREATE UNIQUE INDEX tasks_uuid ON tasks(uuid);
        """,
        // 4: a task can be archived (hidden from lists and `start`, its sessions kept).
        """
        ALTER TABLE tasks ADD COLUMN archived INTEGER NOT NULL DEFAULT 0;
        """,
        // 5: a session can carry a note (`SessionNote`; NULL: none).
        """
        ALTER TABLE sessions ADD COLUMN note TEXT;
        """,
        // 6: presence (docs/presence.md): the time away during a session and why it ended
        // (`left`, or NULL), and a task's own away policy (NULL: [presence] on_away).
        """
        ALTER TABLE sessions ADD COLUMN away_seconds INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE sessions ADD COLUMN reason TEXT;
        ALTER TABLE tasks ADD COLUMN away TEXT;
        """,
        // 7: sync (docs/sync.md): the device's id, the device each session was
        // recorded on, and the changes waiting for the device's journal, kept by triggers.
        syncMigration,
        // 8: what the merge of the journals reached (docs/sync.md, "Merging").
        mergeStateMigration,
        // 9: the removals a journal may still contradict (docs/sync.md, "Removals").
        removalMigration,
        // 10: a task's own do not disturb during work (1 on, 0 off, NULL: [focus] do_not_disturb).
        """
        ALTER TABLE tasks ADD COLUMN dnd INTEGER;
        """,
        // 11: flow sessions and overtime (a task's mode, the break its flow earns and its
        // bounds, the nudge, NULL: none); an older task is a pomodoro without overtime.
        """
        ALTER TABLE tasks ADD COLUMN mode TEXT NOT NULL DEFAULT 'pomodoro';
        ALTER TABLE tasks ADD COLUMN break_ratio TEXT NOT NULL DEFAULT '1/5';
        ALTER TABLE tasks ADD COLUMN min_break INTEGER NOT NULL DEFAULT 60;
        ALTER TABLE tasks ADD COLUMN max_break INTEGER NOT NULL DEFAULT 1800;
        ALTER TABLE tasks ADD COLUMN flow_nudge INTEGER;
        ALTER TABLE tasks ADD COLUMN overtime INTEGER NOT NULL DEFAULT 0;
        """,
        // 12: interruptions (`interrupt`): each session's as a JSON array of {kind, at, note}
        // (NULL: none), and a task's strict rule that an external one voids its work.
        """
        ALTER TABLE sessions ADD COLUMN interruptions TEXT;
        ALTER TABLE tasks ADD COLUMN void_on_interrupt INTEGER NOT NULL DEFAULT 0;
        """,
        // 13: a session's focus segments (`FocusSegment`) as `[[start, seconds], ...]`; NULL is
        // one segment of its focused time from its start, so no row is rewritten (nor noted
        // for the sync journal) and an older session is that one segment.
        """
        ALTER TABLE sessions ADD COLUMN segments TEXT;
        """,
    ]

    /// Indexes that only speed reads up: created when missing on every open, outside the schema
    /// version. They change no data, so a database stays usable by older builds (SQLite keeps
    /// the index up to date for them too); an existing database gets them once, on first open.
    private static let readIndexes = """
        -- Reports (forEachSession) read every session of their range from this index alone,
        -- without a lookup in the table per session.
        CREATE INDEX IF NOT EXISTS sessions_report ON sessions(start, end, task_id, focused_seconds, pauses, outcome);
        -- Schema version 1 also made sessions(start), which sessions_report serves as well: it
        -- only cost every recorded session (and every phase end's commit) one more page.
        DROP INDEX IF EXISTS sessions_start;
        -- The report figures few sessions have (another device, time away, overtime,
        -- interruptions): partial indexes hold only those sessions, so a report reads them alone
        -- instead of looking every session of its range up in the table (59 % of `stats all`).
        -- The check for another device's sessions stops at the first: `start` alone is all it needs,
        -- and the least a merged session (each is one) adds to the merge.
        CREATE INDEX IF NOT EXISTS sessions_other_device ON sessions(start) WHERE device IS NOT NULL;
        CREATE INDEX IF NOT EXISTS sessions_away ON sessions(start, away_seconds, task_id, device) WHERE away_seconds <> 0;
        CREATE INDEX IF NOT EXISTS sessions_overtime ON sessions(start, focused_seconds, planned_seconds, task_id, device)
            WHERE focused_seconds > planned_seconds;
        CREATE INDEX IF NOT EXISTS sessions_interrupted ON sessions(start, task_id, device) WHERE interruptions IS NOT NULL;
        """

    /// Drops the partial indexes of `readIndexes` (tests that take a database back to an older
    /// schema drop the columns they name; the next open makes them again).
    static let dropFigureIndexes =
        ["other_device", "away", "overtime", "interrupted"].map { "DROP INDEX IF EXISTS sessions_\($0);" }
        .joined(separator: " ") + " "

    private func userVersion() throws(DiligenceError) -> Int {
        try db.query("PRAGMA user_version").first?.int(0) ?? 0
    }

    private func tooNew(_ version: Int) -> DiligenceError {
        DiligenceError(
            .databaseTooNew,
            "The database \(path) has schema version \(version), newer than this diligence knows (\(Self.schemaVersion)). "
                + "It was not modified; use a newer diligence, or point --database at another file."
        )
    }

    private func migrate() throws(DiligenceError) {
        let current = try userVersion()
        if current > Self.schemaVersion { throw tooNew(current) }
        if current == Self.schemaVersion { return }
        try db.transaction { () throws(DiligenceError) in
            // Read again under the write lock: another process may have migrated meanwhile.
            var version = try userVersion()
            if version > Self.schemaVersion { throw tooNew(version) }
            let fresh = version == 0
            while version < Self.schemaVersion {
                try db.exec(Self.migrations[version])
                version += 1
            }
            if fresh {
                for task in TaskConfig.defaults {
                    _ = try insertTask(task)
                }
            }
            try db.exec("PRAGMA user_version = \(version)")
        }
    }

    // MARK: Tasks

    private static let taskColumns = """
        id, name, description, color, work_seconds, short_break_seconds, long_break_seconds,
        long_break_every, breaks, autostart, focus_mode, goal, reminder_minute, sound, away, dnd,
        mode, break_ratio, min_break, max_break, flow_nudge, overtime, void_on_interrupt
        """
    /// What `task(from:)` reads: `taskColumns`, the UUID (which no edit changes) and whether it
    /// is archived (which only `setArchived` changes).
    static let taskReadColumns = taskColumns + ", uuid, archived"

    static func task(from row: SQLite.Row) -> TaskConfig {
        // An unknown colour or autostart (a hand-edited row, or a value a newer version added)
        // falls back to the default rather than making every task unreadable.
        TaskConfig(
            id: row.int64(0),
            name: row.string(1),
            description: row.string(2),
            color: TaskColor(rawValue: row.string(3)) ?? .blue,
            workSeconds: row.int(4),
            shortBreakSeconds: row.int(5),
            longBreakSeconds: row.int(6),
            longBreakEvery: row.int(7),
            breaks: row.bool(8),
            autostart: Autostart(rawValue: row.string(9)) ?? .none,
            focusMode: row.bool(10),
            goal: row.int(11),
            reminderMinute: row.optionalInt(12),
            sound: row.optionalString(13),
            uuid: row.optionalString(23) ?? "",
            archived: row.bool(24),
            awayPolicy: row.optionalString(14).flatMap(AwayPolicy.init(rawValue:)),
            doNotDisturb: row.optionalInt(15).map { $0 != 0 },
            mode: TaskMode(rawValue: row.string(16)) ?? .pomodoro,
            breakRule: FlowBreakRule.parse(row.string(17)) ?? .standard,
            minBreakSeconds: row.int(18), maxBreakSeconds: row.int(19), flowNudgeSeconds: row.optionalInt(20),
            overtime: row.bool(21), voidOnInterrupt: row.bool(22)
        )
    }

    /// The fields after `id`, in `taskColumns` order.
    private static func values(of task: TaskConfig) -> [SQLite.Value] {
        [
            .text(task.name), .text(task.description), .text(task.color.rawValue),
            .int(task.workSeconds), .int(task.shortBreakSeconds), .int(task.longBreakSeconds),
            .int(task.longBreakEvery), .bool(task.breaks), .text(task.autostart.rawValue),
            .bool(task.focusMode), .int(task.goal), .optional(task.reminderMinute), .optional(task.sound),
            .optional(task.awayPolicy?.rawValue), .optional(task.doNotDisturb.map { $0 ? 1 : 0 }),
            .text(task.mode.rawValue), .text(task.breakRule.text), .int(task.minBreakSeconds), .int(task.maxBreakSeconds),
            .optional(task.flowNudgeSeconds), .bool(task.overtime), .bool(task.voidOnInterrupt),
        ]
    }

    /// Every task, in creation (id) order.
    public func tasks() throws(DiligenceError) -> [TaskConfig] {
        try db.query("SELECT \(Self.taskReadColumns) FROM tasks ORDER BY id").map(Self.task(from:))
    }

    /// The task with `id`, or nil.
    public func task(id: Int64) throws(DiligenceError) -> TaskConfig? {
        try db.query("SELECT \(Self.taskReadColumns) FROM tasks WHERE id = ?", [.integer(id)]).first.map(Self.task(from:))
    }

    /// Which tasks a name may mean: any (history, statistics, `task show`), only active ones
    /// (`start`, `plan set`: an archived one is refused with `task_archived`), or archived ones
    /// first (`task unarchive`).
    public enum TaskScope: Sendable {
        case any, active, archived
    }

    /// The task a person means by `name`: the exact name first, else the one task whose name
    /// matches ignoring case (Unicode-aware), else — unless `wholeName` — the one task whose name
    /// begins with it, ignoring case (`stu` for Study), among the tasks of `scope` when any of
    /// them fits. Throws `ambiguous_task` listing the tasks a prefix fits, `unknown_task` with the
    /// closest names ("did you mean") and the task names, or `task_archived` for an archived task
    /// in the `.active` scope.
    public func findTask(_ name: String, wholeName: Bool = false, scope: TaskScope = .any) throws(DiligenceError) -> TaskConfig {
        let all = try tasks()
        let found = try match(name, in: all, wholeName: wholeName, scope: scope)
        if scope == .active, found.archived {
            throw DiligenceError(
                .taskArchived,
                "\(found.name) is archived; bring it back with `diligencectl task unarchive \(found.name)` (task_unarchive).")
        }
        return found
    }

    private func match(_ name: String, in all: [TaskConfig], wholeName: Bool, scope: TaskScope) throws(DiligenceError) -> TaskConfig {
        if let exact = all.first(where: { $0.name == name }) {
            return exact
        }
        let key = name.lowercased()
        let matches = all.filter { $0.name.lowercased() == key }
        if matches.count == 1 {
            return matches[0]
        }
        let names = (scope == .active ? all.filter { !$0.archived } : all).map(\.name)
        var starting = key.isEmpty ? [] : all.filter { $0.name.lowercased().hasPrefix(key) }
        // A beginning that fits tasks of the scope means those (`start Me`: Mend, not archived Meditate).
        let inScope = starting.filter { scope == .any || $0.archived == (scope == .archived) }
        if !inScope.isEmpty { starting = inScope }
        if !wholeName, matches.isEmpty {
            if starting.count == 1 { return starting[0] }
            if starting.count > 1 {
                throw DiligenceError(
                    .ambiguousTask,
                    "\"\(name)\" begins the names of \(starting.count) tasks: \(starting.map { "\"\($0.name)\"" }.joined(separator: ", ")); type more of the name."
                )
            }
        }
        var hint = Suggestion.didYouMean(name, names, quote: "\"")
        if wholeName, hint.isEmpty, starting.count == 1 { hint = " Did you mean \"\(starting[0].name)\"? Give the whole name here." }
        throw DiligenceError(.unknownTask, "No task named \"\(name)\".\(hint) Tasks: \(names.joined(separator: ", ")).")
    }

    /// Stores a new task (its `id` is ignored) and returns it with its new id and its name as
    /// stored (`TaskName.normalize`). Throws `invalid_name`, the `validate()` codes, or
    /// `duplicate_name` for a name that an existing task has ignoring case.
    public func addTask(_ new: TaskConfig) throws(DiligenceError) -> TaskConfig {
        var task = new
        task.name = try TaskName.normalize(task.name)
        try task.validate()
        return try db.transaction { () throws(DiligenceError) -> TaskConfig in
            try checkNameFree(task.name, except: nil)
            return try insertTask(task)
        }
    }

    /// Replaces the stored task with `task.id` by `task` (a rename keeps its sessions: they refer
    /// to the id). A new name is normalized (`TaskName`); an unchanged one is kept as it is, so
    /// a task named before today's rules can still be edited. Throws `invalid_name`, the
    /// `validate()` codes, `duplicate_name`, or `unknown_task`.
    public func updateTask(_ changed: TaskConfig) throws(DiligenceError) -> TaskConfig {
        var task = changed
        try task.validate()
        return try db.transaction { () throws(DiligenceError) -> TaskConfig in
            guard let stored = try self.task(id: task.id) else { throw unknownID(task.id) }
            if !task.name.utf8.elementsEqual(stored.name.utf8) {
                task.name = try TaskName.normalize(task.name)
            }
            try checkNameFree(task.name, except: task.id)
            try db.run(
                """
                UPDATE tasks SET name = ?, description = ?, color = ?, work_seconds = ?,
                    short_break_seconds = ?, long_break_seconds = ?, long_break_every = ?, breaks = ?,
                    autostart = ?, focus_mode = ?, goal = ?, reminder_minute = ?, sound = ?, away = ?, dnd = ?,
                    mode = ?, break_ratio = ?, min_break = ?, max_break = ?, flow_nudge = ?, overtime = ?,
                    void_on_interrupt = ?
                WHERE id = ?
                """,
                Self.values(of: task) + [.integer(task.id)]
            )
            return task
        }
    }

    /// Removes the task with `id` together with its sessions and plan entries, in one
    /// transaction, and returns how many sessions went with it. Throws `last_task` when it is
    /// the only task not archived, `unknown_task` when there is no such task.
    public func removeTask(id: Int64) throws(DiligenceError) -> Int {
        try through(.task) { () throws(DiligenceError) -> Int in
            guard let task = try task(id: id) else { throw unknownID(id) }
            let others = try db.query("SELECT count(*) FROM tasks WHERE archived = 0 AND id != ?", [.integer(id)]).first?.int(0) ?? 0
            if !task.archived, others == 0 {
                throw DiligenceError(.lastTask, "\(task.name) is the last task not archived; add another before removing it.")
            }
            // Explicit deletes (rather than only ON DELETE CASCADE) so the count is exact.
            let sessions = try db.run("DELETE FROM sessions WHERE task_id = ?", [.integer(id)])
            try db.run("DELETE FROM plans WHERE task_id = ?", [.integer(id)])
            try db.run("DELETE FROM tasks WHERE id = ?", [.integer(id)])
            return sessions
        }
    }

    /// Archives or brings back the task with `id` and returns it. Throws `last_task` when it is
    /// the last task not archived (something must remain to start), `unknown_task`.
    public func setArchived(id: Int64, _ archived: Bool) throws(DiligenceError) -> TaskConfig {
        try db.transaction { () throws(DiligenceError) -> TaskConfig in
            guard var task = try task(id: id) else { throw unknownID(id) }
            let active = try db.query("SELECT count(*) FROM tasks WHERE archived = 0 AND id != ?", [.integer(id)]).first?.int(0) ?? 0
            if archived, !task.archived, active == 0 {
                throw DiligenceError(.lastTask, "\(task.name) is the last task not archived; add another before archiving it.")
            }
            try db.run("UPDATE tasks SET archived = ? WHERE id = ?", [.bool(archived), .integer(id)])
            task.archived = archived
            return task
        }
    }

    /// What removing the task with `id` would erase: its sessions and their focused seconds.
    public func recordedTotals(taskID id: Int64) throws(DiligenceError) -> (sessions: Int, focusedSeconds: Int) {
        let row = try db.query("SELECT count(*), coalesce(sum(focused_seconds), 0) FROM sessions WHERE task_id = ?", [.integer(id)]).first
        return (row?.int(0) ?? 0, row?.int(1) ?? 0)
    }

    /// Writes a new task with a new UUID (or the one it brings: an imported task keeps its own).
    func insertTask(_ task: TaskConfig) throws(DiligenceError) -> TaskConfig {
        var stored = task
        if stored.uuid.isEmpty { stored.uuid = Self.newUUID() }
        try db.run(
            "INSERT INTO tasks (\(Self.taskReadColumns)) VALUES (NULL\(String(repeating: ", ?", count: 24)))",
            Self.values(of: task) + [.text(stored.uuid), .bool(task.archived)]
        )
        stored.id = db.lastInsertRowID
        return stored
    }

    /// Throws `duplicate_name` when a task other than `except` has `name` ignoring case.
    /// Compared in Swift rather than by SQLite's NOCASE, which folds ASCII only.
    private func checkNameFree(_ name: String, except id: Int64?) throws(DiligenceError) {
        let key = name.lowercased()
        for other in try tasks() where other.id != id && other.name.lowercased() == key {
            throw DiligenceError(.duplicateName, "A task named \"\(other.name)\" already exists.")
        }
    }

    private func unknownID(_ id: Int64) -> DiligenceError {
        DiligenceError(.unknownTask, "No task with id \(id); it may have been removed.")
    }

    // MARK: Sessions

    /// Writes `session` as it is, without the session rules: a fixture for tests (`@testable`).
    /// Every session the daemon writes goes through `admit`.
    func record(_ session: WorkSession) throws(DiligenceError) -> WorkSession {
        guard try task(id: session.taskID) != nil else { throw unknownID(session.taskID) }
        return try insert(session, source: .timer)
    }

    /// Recorded sessions ordered by start, with `taskName` filled in: all of them, or those of
    /// `taskID`, whose `start` lies in [`from`, `to`) (either bound optional). `after` and
    /// `limit`: one page of them, those ordered after the session `after` (its start and id).
    public func sessions(
        taskID: Int64? = nil, device: DeviceFilter? = nil, from: Double? = nil, to: Double? = nil,
        after: (start: Double, id: Int64)? = nil, limit: Int? = nil
    ) throws(DiligenceError) -> [WorkSession] {
        var filter = Self.sessionFilter(taskID: taskID, device: device, from: from, to: to)
        if let after {
            filter.sql += (filter.sql.isEmpty ? "WHERE " : " AND ") + "(s.start, s.id) > (?, ?)"
            filter.values += [.real(after.start), .integer(after.id)]
        }
        var sessions: [WorkSession] = []
        for row in try db.query(
            "SELECT \(Self.sessionColumns) FROM sessions s JOIN tasks t ON t.id = s.task_id \(filter.sql) ORDER BY s.start, s.id"
                + (limit.map { " LIMIT \($0)" } ?? ""),
            filter.values
        ) {
            sessions.append(try session(from: row))
        }
        return sessions
    }

    /// How many sessions `sessions(taskID:device:from:to:)` would list.
    public func sessionCount(taskID: Int64? = nil, device: DeviceFilter? = nil, from: Double? = nil, to: Double? = nil)
        throws(DiligenceError) -> Int
    {
        let filter = Self.sessionFilter(taskID: taskID, device: device, from: from, to: to)
        return try db.query("SELECT count(*) FROM sessions s JOIN tasks t ON t.id = s.task_id \(filter.sql)", filter.values)
            .first?.int(0) ?? 0
    }

    /// The WHERE clause for sessions of `taskID` starting in [`from`, `to`): only the filters
    /// asked for, so SQLite can use the (start) and (task_id, start) indexes, and each of the
    /// few shapes is prepared once and cached.
    static func sessionFilter(taskID: Int64?, device: DeviceFilter? = nil, from: Double?, to: Double?) -> (
        sql: String, values: [SQLite.Value]
    ) {
        let scope = scope(taskID: taskID, device: device, prefix: "s.")
        var conditions: [String] = scope.sql.isEmpty ? [] : [String(scope.sql.dropFirst(" AND ".count))]
        var values: [SQLite.Value] = scope.values
        if let from {
            conditions.append("s.start >= ?")
            values.append(.real(from))
        }
        if let to {
            conditions.append("s.start < ?")
            values.append(.real(to))
        }
        return (conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "), values)
    }

    /// The columns `session(from:)` reads, in its order.
    static let sessionColumns = """
        s.id, s.task_id, t.name, s.start, s.end, s.planned_seconds, s.focused_seconds, s.pauses, s.outcome, s.uuid, s.note,
        s.away_seconds, s.reason, s.device, s.interruptions, s.segments
        """
    /// How many columns `sessionColumns` names: a query's own columns follow them.
    static let sessionColumnCount = 16

    /// A session from a row of `sessionColumns`.
    func session(from row: SQLite.Row) throws(DiligenceError) -> WorkSession {
        guard let outcome = Outcome(rawValue: row.string(8)) else {
            // The CHECK constraint makes this unreachable short of a hand-edited file.
            throw DiligenceError(
                .storageError, "The database \(path) holds session \(row.int64(0)) with an unknown outcome \"\(row.string(8))\".")
        }
        return WorkSession(
            id: row.int64(0), taskID: row.int64(1), taskName: row.string(2),
            start: row.double(3), end: row.double(4), plannedSeconds: row.int(5),
            focusedSeconds: row.int(6), pauses: row.int(7), outcome: outcome, uuid: row.optionalString(9) ?? "",
            note: row.optionalString(10),
            awaySeconds: row.int(11), reason: row.optionalString(12).flatMap(EndReason.init(rawValue:)),
            device: row.optionalString(13), interruptions: try Self.interruptions(row.optionalString(14)),
            segments: Self.segments(row.optionalString(15))
        )
    }

    /// A session's `interruptions` column (NULL: none), as `interruptionsColumn` wrote it.
    static func interruptions(_ text: String?) throws(DiligenceError) -> [Interruption] {
        guard let text else { return [] }
        let json: JSON
        do { json = try JSON.parse(Array(text.utf8)) } catch {
            throw DiligenceError(.storageError, "A session's interruptions in the database are not JSON: \(error.message)")
        }
        switch Interruption.list(json, wire: false) {
        case .success(let list): return list
        case .failure(let error): throw DiligenceError(.storageError, "A session's interruptions in the database: \(error.message)")
        }
    }

    /// What the `interruptions` column holds for `list`: NULL for none.
    static func interruptionsColumn(_ list: [Interruption]) -> SQLite.Value {
        list.isEmpty ? .null : .text(JSON.array(list.map { $0.json(wire: false) }).serialized)
    }

    /// The `segments` column's text for `session`: NULL when it is the one segment NULL means.
    static func segmentsText(_ session: WorkSession) -> String? {
        if session.segments == FocusSegment.whole(start: session.start, focused: session.focusedSeconds) { return nil }
        return FocusSegment.pairs(session.segments).serialized
    }

    /// The segments a `segments` column holds; nil (one from the start) for NULL or a text
    /// that is not a list of `[start, seconds]` (a hand-edited file).
    static func segments(_ text: String?) -> [FocusSegment]? {
        guard let text else { return nil }
        return FocusSegment.list(pairs: try? JSON.parse(text))
    }

    /// How many completed work sessions count on `day`: those that ended in it, an end exactly
    /// at its start being the day before's (`StatisticsDay.holdsSessionEnd`, docs/statistics.md).
    public func completedCount(endingIn day: StatisticsDay) throws(DiligenceError) -> Int {
        try db.query(
            "SELECT count(*) FROM sessions WHERE outcome = 'completed' AND end > ? AND end <= ?",
            [.real(day.start), .real(day.end)]
        ).first?.int(0) ?? 0
    }

    /// The task of the most recently ended session, nil when nothing is recorded.
    public func lastUsedTaskID() throws(DiligenceError) -> Int64? {
        try db.query("SELECT task_id FROM sessions ORDER BY end DESC, id DESC LIMIT 1").first?.int64(0)
    }

    // MARK: Saved timer

    /// Saves the timer (replacing any saved one) with the clocks read when it was saved:
    /// wall time, CLOCK_BOOTTIME seconds, and the kernel's boot id (to tell a reboot apart).
    public func saveTimer(_ saved: SavedTimer, wall: Double, boottime: Double, bootID: String) throws(DiligenceError) {
        let json = saved.storedJSON.serialized
        try db.run(
            """
            INSERT INTO timer_state (id, saved, saved_wall, saved_boottime, boot_id) VALUES (1, ?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET saved = excluded.saved, saved_wall = excluded.saved_wall,
                saved_boottime = excluded.saved_boottime, boot_id = excluded.boot_id
            """,
            [.text(json), .real(wall), .real(boottime), .text(bootID)]
        )
    }

    /// The saved timer and the clocks at the moment it was saved; nil when none is saved.
    ///
    /// Also nil when the saved JSON does not decode (written by another version, or edited by
    /// hand): the daemon then starts idle rather than failing to start, and the next
    /// `saveTimer` replaces the row.
    public func loadTimer() throws(DiligenceError) -> (saved: SavedTimer, wall: Double, boottime: Double, bootID: String)? {
        guard let row = try db.query("SELECT saved, saved_wall, saved_boottime, boot_id FROM timer_state WHERE id = 1").first else {
            return nil
        }
        guard let stored = try? JSON.parse(row.string(0)), let saved = SavedTimer(storedJSON: stored, savedWall: row.double(1)) else {
            return nil
        }
        return (saved, row.double(1), row.double(2), row.string(3))
    }

    /// Forgets the saved timer (the timer went idle).
    public func clearTimer() throws(DiligenceError) {
        try db.run("DELETE FROM timer_state")
    }
}
