import DiligenceCore

// Every change of a recorded session is an event (docs/protocol.md, "Watch"): TEMP triggers on
// `sessions` note each insert, update and delete of this connection in a temporary table, in the
// transaction that makes it (a rollback takes the note back), with the door it came through;
// the daemon drains the notes after each commit. No door can be forgotten: a write that forgets
// to say its door is still noted, named after the row's `source`.

/// Why a session changed: the door it came through (`source` of the session events).
public enum SessionDoor: String, Sendable {
    case timer, history, `import`, sync
    /// Time away discarded after the session ended trimmed it.
    case discardAway = "discard_away"
    /// Its task was removed, and the session with it.
    case task
}

/// A recorded session that was recorded, changed or removed by one commit.
public struct SessionChange: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case recorded = "session_recorded"
        case changed = "session_changed"
        case removed = "session_removed"
    }

    public var kind: Kind
    /// The session as it is now; a removed one as it was.
    public var session: WorkSession
    public var door: SessionDoor
}

extension Store {
    /// The temporary tables and triggers, made on every open (they belong to this connection
    /// only, so writes of other processes are not noted).
    static let sessionEventSQL: String = {
        let door = { (row: String) in
            """
            coalesce((SELECT door FROM temp.session_door), CASE
                WHEN EXISTS (SELECT 1 FROM main.database_info WHERE name = '\(SyncSetting.merging.rawValue)') THEN 'sync'
                WHEN \(row).source = 'manual' THEN 'history' ELSE \(row).source END)
            """
        }
        return """
            CREATE TEMP TABLE IF NOT EXISTS session_door (id INTEGER PRIMARY KEY CHECK (id = 1), door TEXT NOT NULL);
            CREATE TEMP TABLE IF NOT EXISTS session_notes (
                seq INTEGER PRIMARY KEY, uuid TEXT NOT NULL, kind TEXT NOT NULL, door TEXT NOT NULL,
                id INTEGER, task_id INTEGER, task TEXT, start REAL, end REAL, planned_seconds INTEGER, focused_seconds INTEGER,
                pauses INTEGER, outcome TEXT, note TEXT, away_seconds INTEGER, reason TEXT, device TEXT, interruptions TEXT,
                segments TEXT);
            CREATE TEMP TRIGGER IF NOT EXISTS session_notes_insert AFTER INSERT ON main.sessions WHEN NEW.uuid IS NOT NULL
            BEGIN INSERT INTO session_notes (uuid, kind, door) VALUES (NEW.uuid, 'insert', \(door("NEW"))); END;
            CREATE TEMP TRIGGER IF NOT EXISTS session_notes_update AFTER UPDATE ON main.sessions WHEN NEW.uuid IS NOT NULL
            BEGIN INSERT INTO session_notes (uuid, kind, door) VALUES (NEW.uuid, 'update', \(door("NEW"))); END;
            CREATE TEMP TRIGGER IF NOT EXISTS session_notes_delete AFTER DELETE ON main.sessions WHEN OLD.uuid IS NOT NULL
            BEGIN INSERT INTO session_notes (
                uuid, kind, door, id, task_id, task, start, end, planned_seconds, focused_seconds, pauses, outcome, note,
                away_seconds, reason, device, interruptions, segments)
            VALUES (
                OLD.uuid, 'delete', \(door("OLD")), OLD.id, OLD.task_id,
                coalesce((SELECT name FROM main.tasks WHERE id = OLD.task_id), ''), OLD.start, OLD.end, OLD.planned_seconds,
                OLD.focused_seconds, OLD.pauses, OLD.outcome, OLD.note, OLD.away_seconds, OLD.reason, OLD.device,
                OLD.interruptions, OLD.segments);
            END;
            """
    }()

    /// Drops the triggers (tests that take a database back to an older schema, whose columns
    /// they name).
    static let dropSessionNotes =
        ["insert", "update", "delete"].map { "DROP TRIGGER IF EXISTS temp.session_notes_\($0);" }
        .joined(separator: " ") + " "

    /// Runs `body` (in one transaction) with its session changes noted as coming through `door`.
    func through<T>(_ door: SessionDoor, _ body: () throws(DiligenceError) -> T) throws(DiligenceError) -> T {
        try connection.transaction { () throws(DiligenceError) -> T in
            let before = try connection.query("SELECT door FROM temp.session_door").first?.string(0)
            try connection.run("INSERT OR REPLACE INTO temp.session_door (id, door) VALUES (1, ?)", [.text(door.rawValue)])
            let result = try body()
            if let before {
                try connection.run("UPDATE temp.session_door SET door = ?", [.text(before)])
            } else {
                try connection.run("DELETE FROM temp.session_door")
            }
            return result
        }
    }

    /// The session changes committed since the last call, one per session in the order each
    /// was first changed, and forgets them: a session written and removed again is no change; one
    /// removed and written again under its UUID (`history edit`) is changed. Call outside a
    /// transaction (after its commit): what an open one noted may still be rolled back.
    public func takeSessionChanges() throws(DiligenceError) -> [SessionChange] {
        let rows = try connection.query(
            """
            SELECT id, task_id, task, start, end, planned_seconds, focused_seconds, pauses, outcome, uuid, note, away_seconds,
                reason, device, interruptions, segments, kind, door FROM temp.session_notes ORDER BY seq
            """)
        guard !rows.isEmpty else { return [] }
        try connection.run("DELETE FROM temp.session_notes")
        var order: [String] = []
        var notes: [String: (first: String, door: SessionDoor, removed: WorkSession?)] = [:]
        for row in rows {
            let uuid = row.string(9)
            let door = SessionDoor(rawValue: row.string(Self.sessionColumnCount + 1)) ?? .timer
            let removed = row.string(Self.sessionColumnCount) == "delete" ? try? session(from: row) : nil
            if let known = notes[uuid] {
                notes[uuid] = (known.first, door, removed ?? known.removed)
            } else {
                order.append(uuid)
                notes[uuid] = (row.string(Self.sessionColumnCount), door, removed)
            }
        }
        var changes: [SessionChange] = []
        for uuid in order {
            guard let note = notes[uuid] else { continue }
            let existed = note.first != "insert"
            if let now = try session(uuid: uuid) {
                changes.append(SessionChange(kind: existed ? .changed : .recorded, session: now, door: note.door))
            } else if existed, let removed = note.removed {
                changes.append(SessionChange(kind: .removed, session: removed, door: note.door))
            }
        }
        return changes
    }

    /// The recorded session with `uuid`, nil when there is none.
    public func session(uuid: String) throws(DiligenceError) -> WorkSession? {
        let rows = try connection.cached("SELECT \(Self.sessionColumns) FROM sessions s JOIN tasks t ON t.id = s.task_id WHERE s.uuid = ?")
            .rows([.text(uuid)])
        guard let row = rows.first else { return nil }
        return try session(from: row)
    }
}
