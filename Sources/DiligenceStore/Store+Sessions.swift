import DiligenceCore
import DiligenceTime

// The one door into `sessions`. Every session the daemon records — from the timer, `history add`,
// an import, the replay of sessions spilled at an exit — passes `admit`: the session rules
// (SessionRules), its task, no overlap with a recorded session or another of the same batch,
// and a session already recorded (same task, start within a second) is skipped, not doubled.

/// Where a recorded session came from (the `source` column).
public enum SessionSource: String, Sendable {
    case timer, manual, `import`
}

/// How `admit` treats a batch with refused sessions.
public enum AdmissionMode: Sendable {
    /// Write what passes (the timer, a replay of spilled sessions).
    case whatPasses
    /// Write nothing unless everything passes (`history add`, an import).
    case allOrNothing
    /// Write nothing; only say what would happen.
    case checkOnly
}

/// What `admit` did with each session of a batch, by its index in the batch.
public struct Admission: Sendable {
    /// Written now, with their ids.
    public var recorded: [Int: WorkSession] = [:]
    /// Recorded already (by an earlier write, or earlier in this batch): not written again.
    public var alreadyRecorded: [Int: WorkSession] = [:]
    /// Refused, in batch order: `invalid_session`, `unknown_task`, `overlapping_session`.
    public var refused: [(index: Int, error: DiligenceError)] = []
}

extension Store {
    /// Checks `batch` against the session rules and the recorded sessions and writes what
    /// `mode` says, in one transaction (joining an open one). `window`: the date window's
    /// wall-clock bounds now; `reserved`: the span of the work phase that is running, which no
    /// session entered by hand or imported may overlap.
    ///
    /// Linear in the batch and the recorded sessions it reaches: 100 000 imported sessions are
    /// checked against each other and the database in one pass each (docs/performance.md).
    public func admit(
        _ batch: [WorkSession], source: SessionSource, window: ClosedRange<Double>,
        reserved: (start: Double, end: Double, task: String)? = nil, mode: AdmissionMode
    ) throws(DiligenceError) -> Admission {
        var result = Admission()
        guard !batch.isEmpty else { return result }
        let taskIDs = Set(try tasks().map(\.id))
        var candidates: [Int] = []
        for (index, session) in batch.enumerated() {
            if let problem = SessionRules.problem(with: session, window: window) {
                result.refused.append((index, DiligenceError("invalid_session", "The session of \(session.taskName) is refused: \(problem).")))
            } else if !taskIDs.contains(session.taskID) {
                result.refused.append((index, DiligenceError("unknown_task", "No task with id \(session.taskID) (\(session.taskName)); it may have been removed.")))
            } else {
                candidates.append(index)
            }
        }
        candidates.sort { (batch[$0].start, $0) < (batch[$1].start, $1) }
        let recorded = try recordedNeighbours(of: candidates.map { batch[$0] })
        // The candidate accepted last: accepted ones never overlap, so sorted by start their
        // ends grow too, and only the last one can reach into the next.
        var last: Int?
        var accepted: [Int] = []
        for index in candidates {
            let s = batch[index]
            if let id = recorded.sameSession(as: s) {
                result.alreadyRecorded[index] = try session(id: id)
                continue
            }
            if let previous = last, batch[previous].taskID == s.taskID, abs(batch[previous].start - s.start) < SessionRules.sameStart {
                result.alreadyRecorded[index] = batch[previous]
                continue
            }
            if let id = recorded.overlapping(s) {
                let other = try session(id: id)
                result.refused.append((index, DiligenceError("overlapping_session",
                    "The session of \(s.taskName) from \(RFC3339.format(s.start)) to \(RFC3339.format(s.end)) overlaps session \(other.id) "
                        + "(\(other.taskName), \(RFC3339.format(other.start)) to \(RFC3339.format(other.end))); remove or shorten one of them.")))
                continue
            }
            if let reserved, reserved.start < s.end, reserved.end > s.start {
                result.refused.append((index, DiligenceError("overlapping_session",
                    "The session of \(s.taskName) from \(RFC3339.format(s.start)) to \(RFC3339.format(s.end)) overlaps the running work phase of \(reserved.task) "
                        + "(since \(RFC3339.format(reserved.start))).")))
                continue
            }
            if let previous = last, batch[previous].end > s.start {
                let other = batch[previous]
                result.refused.append((index, DiligenceError("overlapping_session",
                    "The session of \(s.taskName) from \(RFC3339.format(s.start)) to \(RFC3339.format(s.end)) overlaps another of the same batch "
                        + "(\(other.taskName), \(RFC3339.format(other.start)) to \(RFC3339.format(other.end))).")))
                continue
            }
            last = index
            accepted.append(index)
        }
        result.refused.sort { $0.index < $1.index }
        if mode == .checkOnly || (mode == .allOrNothing && !result.refused.isEmpty) { return result }
        try connection.transaction { () throws(DiligenceError) in
            for index in accepted { result.recorded[index] = try insert(batch[index], source: source) }
        }
        // A duplicate within the batch is the session its first occurrence became.
        for (index, first) in result.alreadyRecorded where first.id == 0 {
            if let twin = accepted.first(where: { batch[$0].taskID == first.taskID && batch[$0].start == first.start }) {
                result.alreadyRecorded[index] = result.recorded[twin]
            }
        }
        return result
    }

    /// The recorded sessions `sorted` (by start) could overlap or repeat: those starting from a
    /// span's length before the first up to the end of the last, in start order.
    private func recordedNeighbours(of sorted: [WorkSession]) throws(DiligenceError) -> RecordedSpans {
        var spans = RecordedSpans()
        guard let first = sorted.first else { return spans }
        let until = sorted.map(\.end).max() ?? first.end
        try connection.cached("SELECT id, task_id, start, end FROM sessions WHERE start >= ? AND start < ? ORDER BY start")
            .forEachRow([.real(first.start - Self.longestSessionSpan), .real(until)]) { row throws(DiligenceError) in
                spans.append(id: row.int64(0), task: row.int64(1), start: row.double(2), end: row.double(3))
            }
        return spans
    }

    /// Writes one session; returns it with its id.
    func insert(_ session: WorkSession, source: SessionSource) throws(DiligenceError) -> WorkSession {
        try connection.run(
            """
            INSERT INTO sessions (task_id, start, end, planned_seconds, focused_seconds, pauses, outcome, source)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .integer(session.taskID), .real(session.start), .real(session.end),
                .int(session.plannedSeconds), .int(session.focusedSeconds), .int(session.pauses),
                .text(session.outcome.rawValue), .text(source.rawValue),
            ]
        )
        var stored = session
        stored.id = connection.lastInsertRowID
        return stored
    }
}

/// Recorded sessions in start order, with the greatest end so far at each: whether any of them
/// overlaps a span is one binary search (recorded sessions of older versions may overlap each
/// other, so the last one alone would not tell).
struct RecordedSpans {
    private var ids: [Int64] = []
    private var tasks: [Int64] = []
    private var starts: [Double] = []
    /// `maxEnd[i]`: the greatest end among sessions 0...i, and `maxEndID[i]` whose it is.
    private var maxEnd: [Double] = []
    private var maxEndID: [Int64] = []

    mutating func append(id: Int64, task: Int64, start: Double, end: Double) {
        ids.append(id)
        tasks.append(task)
        starts.append(start)
        if let previous = maxEnd.last, previous >= end {
            maxEnd.append(previous)
            maxEndID.append(maxEndID[maxEndID.count - 1])
        } else {
            maxEnd.append(end)
            maxEndID.append(id)
        }
    }

    /// How many sessions start before `wall`.
    private func count(startingBefore wall: Double) -> Int {
        var low = 0
        var high = starts.count
        while low < high {
            let mid = (low + high) / 2
            if starts[mid] < wall { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The id of a recorded session of the same task starting within a second of `s`.
    func sameSession(as s: WorkSession) -> Int64? {
        var i = count(startingBefore: s.start - SessionRules.sameStart)
        while i < starts.count, starts[i] < s.start + SessionRules.sameStart {
            if tasks[i] == s.taskID && abs(starts[i] - s.start) < SessionRules.sameStart { return ids[i] }
            i += 1
        }
        return nil
    }

    /// The id of a recorded session overlapping `s` (starting before its end, ending after its start).
    func overlapping(_ s: WorkSession) -> Int64? {
        let n = count(startingBefore: s.end)
        guard n > 0, maxEnd[n - 1] > s.start else { return nil }
        return maxEndID[n - 1]
    }
}

// MARK: Import

// An import arrives in chunks (a request line holds at most 64 KiB). Each chunk's sessions are
// staged in TEMP tables of this connection, invisible to every report, with their line numbers
// and the lines that could not be read; the last chunk passes them all through `admit` at once:
// nothing is written unless every line passes, and every refused line is named.

extension Store {
    /// Lines an `invalid_import` message names; the rest are counted.
    public static let importProblemsListed = 20

    private func ensureStaging() throws(DiligenceError) {
        try connection.exec(
            """
            CREATE TEMP TABLE IF NOT EXISTS import_staging (
                import_id INTEGER NOT NULL, line INTEGER NOT NULL, task_id INTEGER NOT NULL, task_name TEXT NOT NULL,
                start REAL NOT NULL, end REAL NOT NULL, planned_seconds INTEGER NOT NULL, focused_seconds INTEGER NOT NULL,
                pauses INTEGER NOT NULL, outcome TEXT NOT NULL
            );
            CREATE TEMP TABLE IF NOT EXISTS import_rejected (import_id INTEGER NOT NULL, line INTEGER NOT NULL, reason TEXT NOT NULL);
            CREATE TEMP TABLE IF NOT EXISTS import_pending (
                import_id INTEGER PRIMARY KEY, next_line INTEGER NOT NULL, committing INTEGER NOT NULL DEFAULT 0
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

    /// Whether the last chunk of import `id` is staged and its commit was tried (and found the
    /// database locked): sending that chunk again only retries the commit.
    public func importIsCommitting(_ id: Int64) throws(DiligenceError) -> Bool {
        _ = try importNextLine(id)
        return try connection.query("SELECT committing FROM import_pending WHERE import_id = ?", [.integer(id)]).first?.bool(0) ?? false
    }

    /// Stages one chunk of import `id` that held `lines` lines: the sessions read from it and
    /// the lines that could not be read, each with its line number.
    public func stageImport(_ id: Int64, sessions: [(line: Int, session: WorkSession)], rejected: [(line: Int, reason: String)],
                            lines: Int) throws(DiligenceError) {
        let next = try importNextLine(id)
        try connection.transaction(temporaryOnly: true) { () throws(DiligenceError) in
            for (line, session) in sessions {
                try connection.run(
                    """
                    INSERT INTO temp.import_staging (import_id, line, task_id, task_name, start, end, planned_seconds, focused_seconds, pauses, outcome)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                    [
                        .integer(id), .int(line), .integer(session.taskID), .text(session.taskName), .real(session.start), .real(session.end),
                        .int(session.plannedSeconds), .int(session.focusedSeconds), .int(session.pauses), .text(session.outcome.rawValue),
                    ]
                )
            }
            for (line, reason) in rejected {
                try connection.run("INSERT INTO temp.import_rejected (import_id, line, reason) VALUES (?, ?, ?)", [.integer(id), .int(line), .text(reason)])
            }
            try connection.run("UPDATE import_pending SET next_line = ? WHERE import_id = ?", [.int(next + lines), .integer(id)])
        }
    }

    /// Passes every staged session of import `id` through `admit` at once and writes them all,
    /// or nothing: a line that could not be read or a session refused by the rules answers
    /// `invalid_import` naming each line (up to `importProblemsListed`) and why. A session
    /// recorded already is skipped, so importing a file twice adds nothing. Returns how many
    /// were imported and skipped. The import is over afterwards, but for a storage error
    /// (`database_locked`): then it stays staged, and the same last chunk can be sent again.
    public func commitImport(_ id: Int64, window: ClosedRange<Double>,
                             reserved: (start: Double, end: Double, task: String)?) throws(DiligenceError) -> (imported: Int, skipped: Int) {
        _ = try importNextLine(id)
        try connection.run("UPDATE import_pending SET committing = 1 WHERE import_id = ?", [.integer(id)])
        var lines: [Int] = []
        var staged: [WorkSession] = []
        try connection.cached(
            """
            SELECT line, task_id, task_name, start, end, planned_seconds, focused_seconds, pauses, outcome
            FROM temp.import_staging WHERE import_id = ? ORDER BY line
            """
        ).forEachRow([.integer(id)]) { row throws(DiligenceError) in
            lines.append(row.int(0))
            staged.append(WorkSession(taskID: row.int64(1), taskName: row.string(2), start: row.double(3), end: row.double(4),
                                      plannedSeconds: row.int(5), focusedSeconds: row.int(6), pauses: row.int(7),
                                      outcome: Outcome(rawValue: row.string(8)) ?? .completed))
        }
        var problems = try connection.query("SELECT line, reason FROM temp.import_rejected WHERE import_id = ? ORDER BY line", [.integer(id)])
            .map { (line: $0.int(0), reason: $0.string(1)) }
        let admission = try admit(staged, source: .import, window: window, reserved: reserved, mode: problems.isEmpty ? .allOrNothing : .checkOnly)
        problems += admission.refused.map { (line: lines[$0.index], reason: $0.error.message) }
        guard problems.isEmpty else {
            try? discardImport()
            problems.sort { $0.line < $1.line }
            let listed = problems.prefix(Self.importProblemsListed).map { "line \($0.line): \($0.reason)" }
            let more = problems.count > Self.importProblemsListed ? "\n… and \(problems.count - Self.importProblemsListed) more." : ""
            throw DiligenceError("invalid_import", "\(problems.count) line\(problems.count == 1 ? "" : "s") of the import \(problems.count == 1 ? "is" : "are") refused; nothing was imported.\n"
                + listed.joined(separator: "\n") + more)
        }
        try? discardImport()
        return (admission.recorded.count, admission.alreadyRecorded.count)
    }

    /// Forgets the import in progress, if any.
    public func discardImport() throws(DiligenceError) {
        try ensureStaging()
        try connection.exec("DELETE FROM temp.import_staging; DELETE FROM temp.import_rejected; DELETE FROM temp.import_pending;")
    }
}
