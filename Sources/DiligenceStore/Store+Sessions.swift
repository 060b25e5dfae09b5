import DiligenceCore
import DiligenceJSON
import DiligenceTime

// The one door into `sessions`. Every session the daemon records — from the timer, `history add`,
// an import, the replay of sessions spilled at an exit — passes `admit`: the session rules
// (SessionRules), its task, no overlap with a recorded session or another of the same batch,
// and a session already recorded (the same UUID, or the same task and a start within a second)
// is skipped, not doubled. A session is given its UUID here, unless it brings one (an import).

/// Where a recorded session came from (the `source` column).
public enum SessionSource: String, Sendable {
    /// `sync`: another device's session, merged from its journal (docs/sync.md): it may overlap
    /// this device's sessions (a timer left running on each), and its UUID alone says whether
    /// it is recorded already.
    case timer, manual, `import`, sync
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
    /// Written now: each one's new id (an import of 100 000 need not keep 100 000 copies).
    public var recorded: [Int: Int64] = [:]
    /// The UUID each session written now has: its own, or the one it was given.
    public var uuids: [Int: String] = [:]
    /// Recorded already (by an earlier write, or earlier in this batch), by id: not written
    /// again (`Store.session(id:)` reads one; an import only counts them).
    public var alreadyRecorded: [Int: Int64] = [:]
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
        let candidates = try candidates(in: batch, window: window, refusing: &result)
        let (accepted, repeats) = try classify(candidates, of: batch, reserved: reserved, sync: source == .sync, into: &result)
        result.refused.sort { $0.index < $1.index }
        if mode == .checkOnly || (mode == .allOrNothing && !result.refused.isEmpty) {
            for index in repeats.keys { result.alreadyRecorded[index] = 0 }
            return result
        }
        try write(accepted, of: batch, source: source, into: &result)
        // A session repeating another of the batch is the one that other became.
        for (index, first) in repeats { result.alreadyRecorded[index] = result.recorded[first] ?? 0 }
        return result
    }

    /// The indexes of the sessions of `batch` that meet the session rules and name a task, sorted
    /// by start; the others are refused in `result`.
    private func candidates(
        in batch: [WorkSession], window: ClosedRange<Double>, refusing result: inout Admission
    ) throws(DiligenceError) -> [Int] {
        let taskIDs = Set(try tasks().map(\.id))
        var candidates: [Int] = []
        for (index, session) in batch.enumerated() {
            if let problem = SessionRules.problem(with: session, window: window) {
                result.refused.append(
                    (index, DiligenceError(.invalidSession, "The session of \(session.taskName) is refused: \(problem).")))
            } else if !taskIDs.contains(session.taskID) {
                result.refused.append(
                    (
                        index,
                        DiligenceError(.unknownTask, "No task with id \(session.taskID) (\(session.taskName)); it may have been removed.")
                    ))
            } else {
                candidates.append(index)
            }
        }
        candidates.sort { (batch[$0].start, $0) < (batch[$1].start, $1) }
        return candidates
    }

    /// Decides each of `candidates` (sorted by start): recorded already (in `result`), a repeat
    /// of one accepted earlier in the batch (`repeats`: its index → that one's), refused for an
    /// overlap (in `result`), or accepted (`accepted`, in start order). `sync`: other devices'
    /// sessions, which their UUID alone identifies and which may overlap any other.
    private func classify(
        _ candidates: [Int], of batch: [WorkSession], reserved: (start: Double, end: Double, task: String)?, sync: Bool,
        into result: inout Admission
    ) throws(DiligenceError) -> (accepted: [Int], repeats: [Int: Int]) {
        let recorded = try recordedNeighbours(of: candidates.map { batch[$0] })
        let recordedUUIDs = try sessionIDs(withUUIDs: candidates.map { batch[$0].uuid })
        /// The UUIDs of the sessions accepted so far, and their indexes (room made once: growing
        /// by doubling rehashed every UUID again).
        var acceptedUUIDs: [String: Int] = [:]
        acceptedUUIDs.reserveCapacity(candidates.count)
        // The candidate accepted last: accepted ones never overlap, so sorted by start their
        // ends grow too, and only the last one can reach into the next.
        var last: Int?
        var accepted: [Int] = []
        var repeats: [Int: Int] = [:]
        for index in candidates {
            let s = batch[index]
            // The same UUID is the same session, wherever and whenever it lies now.
            if !s.uuid.isEmpty, !recordedUUIDs.isEmpty, let id = recordedUUIDs[s.uuid] {
                result.alreadyRecorded[index] = id
            } else if !s.uuid.isEmpty, let first = acceptedUUIDs[s.uuid] {
                repeats[index] = first
            } else if sync {
                accepted.append(index)
                acceptedUUIDs[s.uuid] = index
            } else if let id = recorded.sameSession(as: s) {
                result.alreadyRecorded[index] = id
            } else if let previous = last, batch[previous].taskID == s.taskID,
                abs(batch[previous].start - s.start) < SessionRules.sameStart
            {
                repeats[index] = previous
            } else if let overlap = try overlap(of: s, recorded: recorded, reserved: reserved, previous: last.map { batch[$0] }) {
                result.refused.append((index, overlap))
            } else {
                last = index
                accepted.append(index)
                if !s.uuid.isEmpty { acceptedUUIDs[s.uuid] = index }
            }
        }
        return (accepted, repeats)
    }

    /// Why `s` may not be written for an overlap: with a recorded session, the running work phase
    /// (`reserved`) or the session of the batch accepted before it (`previous`); nil when none.
    private func overlap(
        of s: WorkSession, recorded: RecordedSpans, reserved: (start: Double, end: Double, task: String)?, previous: WorkSession?
    ) throws(DiligenceError) -> DiligenceError? {
        func overlaps(_ what: String) -> DiligenceError {
            DiligenceError(
                .overlappingSession,
                "The session of \(s.taskName) from \(RFC3339.format(s.start)) to \(RFC3339.format(s.end)) overlaps \(what)")
        }
        if let id = recorded.overlapping(s) {
            let other = try session(id: id)
            return overlaps(
                "session \(other.id) (\(other.taskName), \(RFC3339.format(other.start)) to \(RFC3339.format(other.end))); "
                    + "remove or shorten one of them.")
        }
        if let reserved, reserved.start < s.end, reserved.end > s.start {
            return overlaps("the running work phase of \(reserved.task) (since \(RFC3339.format(reserved.start))).")
        }
        if let other = previous, other.end > s.start {
            return overlaps(
                "another of the same batch (\(other.taskName), \(RFC3339.format(other.start)) to \(RFC3339.format(other.end))).")
        }
        return nil
    }

    /// Writes the `accepted` sessions of `batch` in one transaction (joining an open one), each
    /// with its UUID (its own, or a new one); their ids and UUIDs go into `result`.
    private func write(
        _ accepted: [Int], of batch: [WorkSession], source: SessionSource, into result: inout Admission
    ) throws(DiligenceError) {
        var random = SQLiteRandom()
        let uuids = accepted.map { batch[$0].uuid.isEmpty ? UUIDText.random(using: &random) : batch[$0].uuid }
        try connection.transaction { () throws(DiligenceError) in
            // A large batch's pages are held until the commit, not spilled and written twice.
            let ids = try connection.withLargePageCache(if: accepted.count > Self.largeBatch) { () throws(DiligenceError) in
                try connection.insertMany(into: Self.insertTarget, columns: Self.insertColumns, count: accepted.count) {
                    Self.row(batch[accepted[$0]], source: source, uuid: uuids[$0])
                }
            }
            result.recorded.reserveCapacity(accepted.count)
            result.uuids.reserveCapacity(accepted.count)
            for (position, (index, id)) in zip(accepted, ids).enumerated() {
                result.recorded[index] = id
                result.uuids[index] = uuids[position]
            }
        }
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

    /// The ids of the recorded sessions with these UUIDs ("" ones are skipped), by UUID: SQLite
    /// looks each up in the UUID index, in lists of a few thousand. When fewer sessions are
    /// recorded than UUIDs asked for, every recorded one is read instead (the lookups cost more).
    /// That is asked only for a large batch: counting the sessions is a pass over an index, which
    /// a phase's one session must not pay.
    private func sessionIDs(withUUIDs uuids: [String]) throws(DiligenceError) -> [String: Int64] {
        var found: [String: Int64] = [:]
        let wanted = uuids.filter { !$0.isEmpty }
        if wanted.count > Self.largeBatch, try connection.query("SELECT count(*) FROM sessions").first?.int(0) ?? 0 < wanted.count {
            try connection.cached("SELECT uuid, id FROM sessions WHERE uuid IS NOT NULL")
                .forEachRow([]) { row throws(DiligenceError) in found[row.string(0)] = row.int64(1) }
            return found
        }
        var start = 0
        while start < wanted.count {
            let part = wanted[start..<min(start + 4096, wanted.count)]
            let list = JSON.array(part.map(JSON.string)).serialized
            try connection.cached("SELECT uuid, id FROM sessions WHERE uuid IN (SELECT value FROM json_each(?))")
                .forEachRow([.text(list)]) { row throws(DiligenceError) in found[row.string(0)] = row.int64(1) }
            start += part.count
        }
        return found
    }

    /// Sessions above which a batch is written with a larger page cache (`withLargePageCache`).
    static let largeBatch = 1_000

    static let insertTarget =
        "sessions (task_id, start, end, planned_seconds, focused_seconds, pauses, outcome, source, uuid, note, away_seconds, reason, device, interruptions, segments)"
    static let insertColumns = 15

    /// A session's values in `insertTarget`'s columns. The device is written with the row (another
    /// device's session merged from its journal): a later UPDATE of 100 000 merged rows cost a
    /// tenth of the merge's time (docs/performance.md).
    static func row(_ session: WorkSession, source: SessionSource, uuid: String) -> [SQLite.Value] {
        [
            .integer(session.taskID), .real(session.start), .real(session.end),
            .int(session.plannedSeconds), .int(session.focusedSeconds), .int(session.pauses),
            .text(session.outcome.rawValue), .text(source.rawValue), .text(uuid), .optional(session.note),
            .int(session.awaySeconds), .optional(session.reason?.rawValue), .optional(session.device),
            interruptionsColumn(session.interruptions),
            .optional(segmentsText(session)),
        ]
    }

    /// A new random UUID for a session or task (SQLite's random source: no system call).
    static func newUUID() -> String {
        var random = SQLiteRandom()
        return UUIDText.random(using: &random)
    }

    /// Replaces session `id` by `edited` (`history_edit`) through the same door as every other
    /// session: the session rules, its task, no overlap with another recorded session nor the
    /// running work phase (`reserved`). It keeps its id, UUID and source; a refusal changes
    /// nothing. Throws `unknown_session`, or the refusal (`invalid_session`, `unknown_task`,
    /// `overlapping_session`).
    public func replaceSession(
        id: Int64, with edited: WorkSession, window: ClosedRange<Double>, reserved: (start: Double, end: Double, task: String)?
    ) throws(DiligenceError) -> WorkSession {
        try through(.history) { () throws(DiligenceError) -> WorkSession in
            let old = try session(id: id)
            let source = try connection.query("SELECT source FROM sessions WHERE id = ?", [.integer(id)]).first?.string(0) ?? "timer"
            // Out of the way while the edited session is checked against the others; a
            // refusal rolls the deletion back.
            try connection.run("DELETE FROM sessions WHERE id = ?", [.integer(id)])
            var replacement = edited
            replacement.uuid = old.uuid
            // The device that recorded it stays the one (docs/sync.md).
            replacement.device = old.device
            // Another device's session (`sync`) stays one: it may overlap this device's.
            let origin = SessionSource(rawValue: source) ?? .timer
            let admission = try admit(
                [replacement], source: origin == .sync ? .sync : .manual, window: window, reserved: reserved, mode: .checkOnly)
            if let refusal = admission.refused.first { throw refusal.error }
            if let other = admission.alreadyRecorded[0] {
                throw DiligenceError(
                    .overlappingSession, "Session \(other) of \(replacement.taskName) starts at the same moment; remove one of them.")
            }
            try connection.run(
                "INSERT INTO sessions (id, \(Self.insertTarget.dropFirst("sessions (".count))"
                    + " VALUES (\(Array(repeating: "?", count: Self.insertColumns + 1).joined(separator: ", ")))",
                [.integer(id)] + Self.row(replacement, source: origin, uuid: old.uuid))
            return try session(id: id)
        }
    }

    /// Writes one session (with a new UUID unless it has one); returns it with its id and UUID.
    func insert(_ session: WorkSession, source: SessionSource) throws(DiligenceError) -> WorkSession {
        var stored = session
        if stored.uuid.isEmpty { stored.uuid = Self.newUUID() }
        stored.id = try connection.insertMany(into: Self.insertTarget, columns: Self.insertColumns, count: 1) { _ in
            Self.row(stored, source: source, uuid: stored.uuid)
        }[0]
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
// staged in memory, invisible to every report, with their line numbers and the lines that could
// not be read; the last chunk passes them all through `admit` at once: nothing is written
// unless every line passes, and every refused line is named.

/// What an import did.
public struct ImportResult: Sendable, Equatable {
    public var imported = 0
    public var skipped = 0
    public var tasksAdded = 0
    public var tasksReplaced = 0
    public var plansSet = 0

    public init() {}
}

/// An import being received (`Store.beginImport` … `commitImport`).
struct PendingImport {
    let id: Int64
    /// The number of the next chunk's first line.
    var nextLine = 1
    var sessions: [WorkSession] = []
    var lines: [Int] = []
    var rejected: [(line: Int, reason: String)] = []
    /// Task definitions (`export --with-tasks`), each with a placeholder id (-1, -2, …) that
    /// the staged sessions of a task not stored yet carry until the commit.
    var tasks: [TaskConfig] = []
    /// Plans: a day and the task's name, with the line each came from.
    var plans: [(line: Int, day: CalendarDay, task: String)] = []
    /// The last chunk is staged and its commit was tried (and found the database locked).
    var committing = false
}

extension Store {
    /// Lines an `invalid_import` message names; the rest are counted.
    public static let importProblemsListed = 20
    /// Sessions one import may hold (they wait in memory, some 80 bytes each, until the last
    /// chunk): a larger file is split and imported in parts.
    public static let maxImportSessions = 1_000_000

    /// Starts a new import, discarding any unfinished one; returns its id.
    public func beginImport() -> Int64 {
        // Random, so a late chunk of a discarded import is never taken for the new one.
        let id = Int64.random(in: 1...(1 << 40))
        pendingImport = PendingImport(id: id)
        return id
    }

    /// The import in progress with `id`; throws `unknown_import` when it is not in progress.
    private func pending(_ id: Int64) throws(DiligenceError) -> PendingImport {
        guard let pendingImport, pendingImport.id == id else {
            throw DiligenceError(
                .unknownImport,
                "Import \(id) is not in progress (it failed, finished, or another import replaced it); send the file again from its first line."
            )
        }
        return pendingImport
    }

    /// The task definitions staged so far by import `id` (their ids are placeholders).
    public func importStagedTasks(_ id: Int64) throws(DiligenceError) -> [TaskConfig] { try pending(id).tasks }

    /// Stages task definitions and plans of import `id` (`export --with-tasks`).
    public func stageImportSetup(_ id: Int64, tasks: [TaskConfig], plans: [(line: Int, day: CalendarDay, task: String)])
        throws(DiligenceError)
    {
        var staged = try pending(id)
        staged.tasks += tasks
        staged.plans += plans
        pendingImport = staged
    }

    /// The line number the next chunk of import `id` starts at.
    public func importNextLine(_ id: Int64) throws(DiligenceError) -> Int { try pending(id).nextLine }

    /// Whether the last chunk of import `id` is staged and its commit was tried (and found the
    /// database locked): sending that chunk again only retries the commit.
    public func importIsCommitting(_ id: Int64) throws(DiligenceError) -> Bool { try pending(id).committing }

    /// Stages one chunk of import `id` that held `lines` lines: the sessions read from it and
    /// the lines that could not be read, each with its line number.
    public func stageImport(
        _ id: Int64, sessions: [(line: Int, session: WorkSession)], rejected: [(line: Int, reason: String)],
        lines: Int
    ) throws(DiligenceError) {
        var staged = try pending(id)
        pendingImport = nil // staged is now the only copy: appending to it does not copy the arrays
        guard staged.sessions.count + sessions.count <= Self.maxImportSessions else {
            throw DiligenceError(
                .invalidImport,
                "An import holds at most \(Self.maxImportSessions) sessions; split the file and import each part; nothing was imported.")
        }
        staged.sessions += sessions.map(\.session)
        staged.lines += sessions.map(\.line)
        staged.rejected += rejected
        staged.nextLine += lines
        pendingImport = staged
    }

    /// Passes every staged session of import `id` through `admit` at once and writes them all,
    /// or nothing: a line that could not be read or a session refused by the rules answers
    /// `invalid_import` naming each line (up to `importProblemsListed`) and why. A session
    /// recorded already is skipped, so importing a file twice adds nothing. Returns how many
    /// were imported and skipped. The import is over afterwards, but for a storage error
    /// (`database_locked`): then it stays staged, and the same last chunk can be sent again.
    public func commitImport(
        _ id: Int64, window: ClosedRange<Double>,
        reserved: (start: Double, end: Double, task: String)?, replaceTasks: Bool = false
    ) throws(DiligenceError) -> ImportResult {
        var staged = try pending(id)
        pendingImport?.committing = true
        // One transaction: the tasks and plans an import restores go with its sessions, or not at all.
        let result = try connection.transaction { () throws(DiligenceError) -> ImportResult in
            var result = ImportResult()
            let ids = try restoreTasks(staged.tasks, replace: replaceTasks, result: &result)
            for index in staged.sessions.indices where staged.sessions[index].taskID < 0 {
                staged.sessions[index].taskID = ids[staged.sessions[index].taskID] ?? 0
            }
            var problems = staged.rejected
            try restorePlans(staged.plans, replace: replaceTasks, result: &result, problems: &problems)
            let admission = try admit(
                staged.sessions, source: .import, window: window, reserved: reserved, mode: problems.isEmpty ? .allOrNothing : .checkOnly)
            problems += admission.refused.map { (line: staged.lines[$0.index], reason: $0.error.message) }
            try Self.refuse(problems)
            result.imported = admission.recorded.count
            result.skipped = admission.alreadyRecorded.count
            return result
        }
        discardImport()
        return result
    }

    /// Throws `invalid_import` naming the problems' lines, when there are any.
    private static func refuse(_ found: [(line: Int, reason: String)]) throws(DiligenceError) {
        var problems = found
        guard problems.isEmpty else {
            problems.sort { $0.line < $1.line }
            let listed = problems.prefix(Self.importProblemsListed).map { "line \($0.line): \($0.reason)" }
            let more = problems.count > Self.importProblemsListed ? "\n… and \(problems.count - Self.importProblemsListed) more." : ""
            throw DiligenceError(
                .invalidImport,
                "\(problems.count) line\(problems.count == 1 ? "" : "s") of the import \(problems.count == 1 ? "is" : "are") refused; nothing was imported.\n"
                    + listed.joined(separator: "\n") + more)
        }
    }

    /// Stores the task definitions of an import: a task matched by UUID, else by name ignoring
    /// case, keeps its settings unless `replace`; another is added (with its UUID). Returns the
    /// stored id of each placeholder id.
    private func restoreTasks(_ defined: [TaskConfig], replace: Bool, result: inout ImportResult) throws(DiligenceError) -> [Int64: Int64] {
        var ids: [Int64: Int64] = [:]
        for definition in defined {
            let all = try tasks()
            let existing =
                all.first { !definition.uuid.isEmpty && $0.uuid == definition.uuid }
                ?? all.first { $0.name.lowercased() == definition.name.lowercased() }
            var task = definition
            if let existing {
                if replace {
                    task.id = existing.id
                    task.name = existing.name
                    _ = try updateTask(task)
                    if task.archived != existing.archived { _ = try setArchived(id: existing.id, task.archived) }
                    result.tasksReplaced += 1
                }
                ids[definition.id] = existing.id
            } else {
                task.id = 0
                ids[definition.id] = try addTask(task).id
                result.tasksAdded += 1
            }
        }
        return ids
    }

    /// Stores the plans of an import: a day without a plan gets it (with `replace`, every day).
    private func restorePlans(
        _ plans: [(line: Int, day: CalendarDay, task: String)], replace: Bool, result: inout ImportResult,
        problems: inout [(line: Int, reason: String)]
    ) throws(DiligenceError) {
        for plan in plans {
            guard let task = try tasks().first(where: { $0.name.lowercased() == plan.task.lowercased() }) else {
                problems.append((plan.line, "a plan for \(plan.task.debugDescription), which is no task"))
                continue
            }
            if !replace, try !self.plans(from: plan.day, through: plan.day).isEmpty { continue }
            try setPlan(day: plan.day, taskID: task.id)
            result.plansSet += 1
        }
    }

    /// Forgets the import in progress, if any.
    public func discardImport() {
        pendingImport = nil
    }

    /// Replaces the recorded session of `revised`'s task that starts when it does (within
    /// `SessionRules.sameStart`) with `revised`'s end, focused and away time, outcome and reason
    /// (time away discarded after the session ended, docs/presence.md). Returns it as stored,
    /// nil when there is no such session (it was removed, or not recorded).
    public func reviseSession(_ revised: WorkSession) throws(DiligenceError) -> WorkSession? {
        try through(.discardAway) { () throws(DiligenceError) -> WorkSession? in
            let found = try connection.query(
                "SELECT id FROM sessions WHERE task_id = ? AND start > ? AND start < ? ORDER BY abs(start - ?) LIMIT 1",
                [
                    .integer(revised.taskID), .real(revised.start - SessionRules.sameStart), .real(revised.start + SessionRules.sameStart),
                    .real(revised.start),
                ])
            guard let id = found.first?.int64(0) else { return nil }
            try connection.run(
                "UPDATE sessions SET end = ?, focused_seconds = ?, away_seconds = ?, outcome = ?, reason = ?, interruptions = ?, segments = ? WHERE id = ?",
                [
                    .real(revised.end), .int(revised.focusedSeconds), .int(revised.awaySeconds), .text(revised.outcome.rawValue),
                    .optional(revised.reason?.rawValue), Self.interruptionsColumn(revised.interruptions),
                    .optional(Self.segmentsText(revised)), .integer(id),
                ])
            return try session(id: id)
        }
    }
}
