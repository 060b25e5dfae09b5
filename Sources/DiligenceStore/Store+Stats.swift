import DiligenceCore
import DiligenceTime

// Queries behind the reports, the plan, history corrections, export and import.
// Aggregates are never stored: every figure is computed from `sessions` when asked.

extension Store {
    /// The longest wall-clock span a session is assumed to have when a report looks for sessions
    /// that began before its first day but reach into it. A work phase is at most 168 hours;
    /// a day more covers pauses. It keeps range queries on the `start` index.
    public static let longestSessionSpan: Double = 8 * 86400

    // MARK: Reports

    /// Calls `body` for every recorded session (of `taskID`, when given) whose wall-clock span
    /// reaches into [`from`, `to`) — it ends after `from`: one ending exactly there is the day
    /// before's (`DayGrid.index(ofEnd:)`) —, in start order, without building a `WorkSession`
    /// per row. `body` receives task id, start, end, focused seconds, pauses and whether it was
    /// completed.
    public func forEachSession(
        from: Double, to: Double, taskID: Int64? = nil,
        _ body: (_ taskID: Int64, _ start: Double, _ end: Double, _ focused: Int, _ pauses: Int, _ completed: Bool) -> Void
    ) throws(DiligenceError) {
        // `end > from` is checked here, not in SQL: the few sessions of the 8 days before
        // `from` that ended by then cost less than one more SQL comparison on every row.
        var sql = """
            SELECT task_id, start, end, focused_seconds, pauses, outcome = 'completed' FROM sessions
            WHERE start >= ? AND start <= ?
            """
        var values: [SQLite.Value] = [.real(from - Self.longestSessionSpan), .real(to)]
        if let taskID {
            sql += " AND task_id = ?"
            values.append(.integer(taskID))
        }
        try connection.cached(sql + " ORDER BY start").forEachRow(values) { row throws(DiligenceError) in
            let start = row.double(1), end = row.double(2)
            // Only a session of no length may start at `to`: it ends there, on the last day.
            guard end > from, start < to || end == start else { return }
            body(row.int64(0), start, end, row.int(3), row.int(4), row.int64(5) != 0)
        }
    }

    /// Calls `body` with the task id and end of every completed session that counts on the days
    /// [`from`, `to`) (it ended after `from` and by `to`: `DayGrid.index(ofEnd:)`): what streaks
    /// need, read on the index of completed sessions' ends.
    public func forEachCompletedSession(
        from: Double, to: Double, taskID: Int64? = nil, _ body: (_ taskID: Int64, _ end: Double) -> Void
    ) throws(DiligenceError) {
        var sql = """
            SELECT task_id, end FROM sessions
            WHERE outcome = 'completed' AND end > ? AND end <= ? AND start >= ? AND start <= ?
            """
        var values: [SQLite.Value] = [.real(from), .real(to), .real(from - Self.longestSessionSpan), .real(to)]
        if let taskID {
            sql += " AND task_id = ?"
            values.append(.integer(taskID))
        }
        try connection.cached(sql).forEachRow(values) { row throws(DiligenceError) in
            body(row.int64(0), row.double(1))
        }
    }

    /// The start of the earliest recorded session (of `taskID`), nil when there is none.
    public func firstSessionStart(taskID: Int64? = nil) throws(DiligenceError) -> Double? {
        let row = if let taskID {
            try connection.query("SELECT min(start) FROM sessions WHERE task_id = ?", [.integer(taskID)]).first
        } else {
            try connection.query("SELECT min(start) FROM sessions").first
        }
        guard let row, !row.isNull(0) else { return nil }
        return row.double(0)
    }

    // MARK: Plan

    /// Plans `taskID` for `day` (replacing what was planned). Throws `unknown_task`.
    public func setPlan(day: CalendarDay, taskID: Int64) throws(DiligenceError) {
        guard try task(id: taskID) != nil else {
            throw DiligenceError("unknown_task", "No task with id \(taskID); it may have been removed.")
        }
        try connection.run(
            "INSERT INTO plans (day, task_id) VALUES (?, ?) ON CONFLICT (day) DO UPDATE SET task_id = excluded.task_id",
            [.text(day.description), .integer(taskID)]
        )
    }

    /// Forgets the plan of `day`; whether there was one.
    @discardableResult
    public func clearPlan(day: CalendarDay) throws(DiligenceError) -> Bool {
        try connection.run("DELETE FROM plans WHERE day = ?", [.text(day.description)]) > 0
    }

    /// The planned task id of each day in [`from`, `through`] that has a plan.
    public func plans(from: CalendarDay, through: CalendarDay) throws(DiligenceError) -> [CalendarDay: Int64] {
        var plans: [CalendarDay: Int64] = [:]
        for row in try connection.query(
            "SELECT day, task_id FROM plans WHERE day >= ? AND day <= ?",
            [.text(from.description), .text(through.description)]
        ) {
            if let day = CalendarDay(row.string(0)) { plans[day] = row.int64(1) }
        }
        return plans
    }

    // MARK: History

    /// The session with `id`; throws `unknown_session` when there is none.
    public func session(id: Int64) throws(DiligenceError) -> WorkSession {
        guard let row = try connection.query(
            "SELECT \(Self.sessionColumns) FROM sessions s JOIN tasks t ON t.id = s.task_id WHERE s.id = ?", [.integer(id)]
        ).first else {
            throw DiligenceError("unknown_session", "No session with id \(id); `diligencectl history` lists them with their ids.")
        }
        return try session(from: row)
    }

    /// Sessions (of `taskID`) starting in [`from`, `to`), oldest first; with `limit`, only the
    /// most recent `limit` of them.
    public func history(taskID: Int64? = nil, from: Double? = nil, to: Double? = nil, limit: Int? = nil) throws(DiligenceError) -> [WorkSession] {
        guard let limit else { return try sessions(taskID: taskID, from: from, to: to) }
        let filter = Self.sessionFilter(taskID: taskID, from: from, to: to)
        let values = filter.values + [.int(limit)]
        var list: [WorkSession] = []
        for row in try connection.query(
            "SELECT \(Self.sessionColumns) FROM sessions s JOIN tasks t ON t.id = s.task_id \(filter.sql) ORDER BY s.start DESC, s.id DESC LIMIT ?",
            values
        ) {
            list.append(try session(from: row))
        }
        return list.reversed()
    }

    /// A session whose wall-clock span overlaps [`start`, `end`), the earliest one; nil when none.
    public func overlappingSession(start: Double, end: Double) throws(DiligenceError) -> WorkSession? {
        guard let row = try connection.query(
            """
            SELECT \(Self.sessionColumns) FROM sessions s JOIN tasks t ON t.id = s.task_id
            WHERE s.start >= ? AND s.start < ? AND s.end > ? ORDER BY s.start LIMIT 1
            """,
            [.real(start - Self.longestSessionSpan), .real(end), .real(start)]
        ).first else { return nil }
        return try session(from: row)
    }

    /// Stores a session entered by hand (`source` = `manual`) unless it overlaps a recorded
    /// one: then throws `overlapping_session` naming it. Checked and written in one transaction.
    public func addManualSession(_ session: WorkSession, describe: (WorkSession) -> String) throws(DiligenceError) -> WorkSession {
        try connection.transaction { () throws(DiligenceError) -> WorkSession in
            guard try task(id: session.taskID) != nil else {
                throw DiligenceError("unknown_task", "No task with id \(session.taskID); it may have been removed.")
            }
            if let other = try overlappingSession(start: session.start, end: session.end) {
                throw DiligenceError("overlapping_session", "The session overlaps session \(other.id) (\(describe(other))); remove or shorten one of them.")
            }
            try insert(session, source: "manual")
            var stored = session
            stored.id = connection.lastInsertRowID
            return stored
        }
    }

    /// Deletes session `id` and returns it; throws `unknown_session`.
    public func removeSession(id: Int64) throws(DiligenceError) -> WorkSession {
        try connection.transaction { () throws(DiligenceError) -> WorkSession in
            let removed = try session(id: id)
            try connection.run("DELETE FROM sessions WHERE id = ?", [.integer(id)])
            return removed
        }
    }

    /// Moves session `id` to task `taskID` and returns it changed; throws `unknown_session`
    /// or `unknown_task`.
    public func changeSessionTask(id: Int64, taskID: Int64) throws(DiligenceError) -> WorkSession {
        try connection.transaction { () throws(DiligenceError) -> WorkSession in
            _ = try session(id: id)
            guard try task(id: taskID) != nil else {
                throw DiligenceError("unknown_task", "No task with id \(taskID); it may have been removed.")
            }
            try connection.run("UPDATE sessions SET task_id = ? WHERE id = ?", [.integer(taskID), .integer(id)])
            return try session(id: id)
        }
    }

    private func insert(_ session: WorkSession, source: String) throws(DiligenceError) {
        try connection.run(
            """
            INSERT INTO sessions (task_id, start, end, planned_seconds, focused_seconds, pauses, outcome, source)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .integer(session.taskID), .real(session.start), .real(session.end),
                .int(session.plannedSeconds), .int(session.focusedSeconds), .int(session.pauses),
                .text(session.outcome.rawValue), .text(source),
            ]
        )
    }

    // MARK: Import

    // An import arrives in chunks (a request line holds at most 64 KiB). Chunks are staged in a
    // TEMP table of this connection, invisible to every report, and moved into `sessions` in one
    // transaction by `commitImport`: a bad line anywhere leaves `sessions` untouched.

    private func ensureStaging() throws(DiligenceError) {
        try connection.exec(
            """
            CREATE TEMP TABLE IF NOT EXISTS import_staging (
                import_id INTEGER NOT NULL, task_id INTEGER NOT NULL, start REAL NOT NULL, end REAL NOT NULL,
                planned_seconds INTEGER NOT NULL, focused_seconds INTEGER NOT NULL, pauses INTEGER NOT NULL,
                outcome TEXT NOT NULL, source TEXT NOT NULL
            );
            CREATE TEMP TABLE IF NOT EXISTS import_pending (
                import_id INTEGER PRIMARY KEY, next_line INTEGER NOT NULL
            );
            """
        )
    }

    /// Starts a new import, discarding any unfinished one; returns its id.
    public func beginImport() throws(DiligenceError) -> Int64 {
        try discardImport()
        // Random, so a late chunk of a discarded import is never taken for the new one.
        let id = Int64.random(in: 1...(1 << 40))
        try connection.run("INSERT INTO import_pending (import_id, next_line) VALUES (?, 1)", [.integer(id)])
        return id
    }

    /// The line number the next chunk of import `id` starts at; throws `unknown_import` when
    /// `id` is not the import in progress.
    public func importNextLine(_ id: Int64) throws(DiligenceError) -> Int {
        try ensureStaging()
        guard let row = try connection.query("SELECT next_line FROM import_pending WHERE import_id = ?", [.integer(id)]).first else {
            throw DiligenceError("unknown_import", "Import \(id) is not in progress (it failed, finished, or another import replaced it); send the file again from its first line.")
        }
        return row.int(0)
    }

    /// Stages the sessions of one chunk of import `id` that held `lines` lines.
    public func stageImport(_ id: Int64, sessions: [WorkSession], lines: Int) throws(DiligenceError) {
        let next = try importNextLine(id)
        try connection.transaction { () throws(DiligenceError) in
            for session in sessions {
                try connection.run(
                    """
                    INSERT INTO temp.import_staging (import_id, task_id, start, end, planned_seconds, focused_seconds, pauses, outcome, source)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'import')
                    """,
                    [
                        .integer(id), .integer(session.taskID), .real(session.start), .real(session.end),
                        .int(session.plannedSeconds), .int(session.focusedSeconds), .int(session.pauses),
                        .text(session.outcome.rawValue),
                    ]
                )
            }
            try connection.run("UPDATE import_pending SET next_line = ? WHERE import_id = ?", [.int(next + lines), .integer(id)])
        }
    }

    /// Moves import `id` into `sessions` in one transaction. A staged session equal to a recorded
    /// one (same task, start within a second, same end) is skipped, so importing a file twice adds
    /// nothing. Returns how many were imported and skipped.
    public func commitImport(_ id: Int64) throws(DiligenceError) -> (imported: Int, skipped: Int) {
        _ = try importNextLine(id)
        defer { try? discardImport() }
        return try connection.transaction { () throws(DiligenceError) -> (imported: Int, skipped: Int) in
            let staged = try connection.query("SELECT count(*) FROM temp.import_staging WHERE import_id = ?", [.integer(id)]).first?.int(0) ?? 0
            let imported = try connection.run(
                """
                INSERT INTO sessions (task_id, start, end, planned_seconds, focused_seconds, pauses, outcome, source)
                SELECT i.task_id, i.start, i.end, i.planned_seconds, i.focused_seconds, i.pauses, i.outcome, i.source
                FROM temp.import_staging i
                WHERE i.import_id = ? AND NOT EXISTS (
                    SELECT 1 FROM sessions s
                    WHERE s.task_id = i.task_id AND s.start > i.start - 1 AND s.start < i.start + 1
                        AND abs(s.end - i.end) < 1
                )
                ORDER BY i.start
                """,
                [.integer(id)]
            )
            return (imported, staged - imported)
        }
    }

    /// Forgets the import in progress, if any.
    public func discardImport() throws(DiligenceError) {
        try ensureStaging()
        try connection.exec("DELETE FROM temp.import_staging; DELETE FROM temp.import_pending;")
    }
}
