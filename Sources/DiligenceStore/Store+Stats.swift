import DiligenceCore
import DiligenceTime

// Queries behind the reports, the plan, history corrections, export and import.
// Aggregates are never stored: every figure is computed from `sessions` when asked.

/// Which device's sessions a report or a listing takes (`--device`, docs/sync.md): this
/// device's own (`sessions.device` NULL) or those another device recorded, by its id.
public enum DeviceFilter: Hashable, Sendable {
    case this
    case other(String)
}

/// A device `--device` can name: this one, one whose sessions are recorded here, or one whose
/// journal gave its name.
public struct KnownDevice: Equatable, Sendable {
    public var id: String
    /// The name it gave itself; nil when no line of it said one (journals before names).
    public var name: String?
    public var isThis: Bool

    public init(id: String, name: String?, isThis: Bool) {
        self.id = id
        self.name = name
        self.isThis = isThis
    }

    /// `3f2a9c1e (laptop)`: the first eight digits `history` shows, and the name.
    public var label: String { String(id.prefix(8)) + (name.map { " (\($0))" } ?? "") }
}

extension DeviceFilter {
    /// The device `text` names among `devices` (docs/sync.md, "Reports by device"): `this`;
    /// else a device's name, in any case (`DeviceName.key`), which one device alone must have;
    /// else the beginning of an id, in any case. Throws `ambiguous_device` for a name or a
    /// beginning several devices share, `unknown_device` for nothing; both list the devices, in
    /// the order given (this device first: the daemon's `SyncMerge.knownDevices`). `known` is
    /// asked only past `this` (listing the recorded devices reads the sessions table).
    public static func resolve(_ text: String, among known: () throws(DiligenceError) -> [KnownDevice]) throws(DiligenceError)
        -> DeviceFilter
    {
        let wanted = text.lowercased()
        if wanted == "this" { return .this }
        let devices = try known()
        var matches = devices.filter { $0.name.map { DeviceName.key($0) == DeviceName.key(text) } ?? false }
        let byName = !matches.isEmpty
        if !byName, !wanted.isEmpty, wanted.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
            matches = devices.filter { $0.id.lowercased().hasPrefix(wanted) }
        }
        func list(_ devices: [KnownDevice]) -> String {
            devices.map { $0.label + ($0.isThis ? " this device" : "") }.joined(separator: ", ")
        }
        switch matches.count {
        case 1: return matches[0].isThis ? .this : .other(matches[0].id)
        case 0:
            throw DiligenceError(
                .unknownDevice,
                "\"device\": \(text.debugDescription) is not a device: give this, a device's name or the beginning of its id. "
                    + "Known: \(list(devices)).")
        default:
            let what = byName ? "is the name of" : "begins the ids of"
            throw DiligenceError(
                .ambiguousDevice,
                "\"device\": \(text.debugDescription) \(what) several devices: \(list(matches)); give more of the id.")
        }
    }
}

extension Store {
    /// ` AND task_id = ?` and ` AND device …` for the filters given (columns under `prefix`,
    /// "s." in a join), with their values: one way to narrow every session query.
    static func scope(taskID: Int64?, device: DeviceFilter?, prefix: String = "") -> (sql: String, values: [SQLite.Value]) {
        var sql = ""
        var values: [SQLite.Value] = []
        if let taskID {
            sql += " AND \(prefix)task_id = ?"
            values.append(.integer(taskID))
        }
        switch device {
        case nil: break
        case .this: sql += " AND \(prefix)device IS NULL"
        case .other(let id):
            sql += " AND \(prefix)device = ?"
            values.append(.text(id))
        }
        return (sql, values)
    }

    /// The ids of the other devices whose sessions are recorded here, in order (half the time
    /// of counting them, `sessionsByDevice`: 13 against 28 ms for 100 000 sessions).
    public func otherDevices() throws(DiligenceError) -> [String] {
        try connection.query("SELECT DISTINCT device FROM sessions WHERE device IS NOT NULL ORDER BY device").map { $0.string(0) }
    }

    /// How many sessions each device recorded, by its id; this device's own under nil.
    public func sessionsByDevice() throws(DiligenceError) -> [String?: Int] {
        var counts: [String?: Int] = [:]
        for row in try connection.query("SELECT device, count(*) FROM sessions GROUP BY device") {
            counts[row.optionalString(0)] = row.int(1)
        }
        return counts
    }

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
        from: Double, to: Double, taskID: Int64? = nil, device: DeviceFilter? = nil,
        _ body: (_ taskID: Int64, _ start: Double, _ end: Double, _ focused: Int, _ pauses: Int, _ completed: Bool) -> Void
    ) throws(DiligenceError) {
        // `end > from` is checked here, not in SQL: the few sessions of the 8 days before
        // `from` that ended by then cost less than one more SQL comparison on every row.
        var sql = """
            SELECT task_id, start, end, focused_seconds, pauses, outcome = 'completed', id FROM sessions
            WHERE start >= ? AND start <= ?
            """
        let scope = Self.scope(taskID: taskID, device: device)
        sql += scope.sql
        let values: [SQLite.Value] = [.real(from - Self.longestSessionSpan), .real(to)] + scope.values
        // Rows in the covering index's order (`sessions_report`); two sessions of one start —
        // only two devices' can share one — go by uuid (`inStartOrder`).
        var ties: [ReportRow] = []
        try connection.cached(sql + " ORDER BY start").forEachRow(values) { row throws(DiligenceError) in
            let start = row.double(1)
            let end = row.double(2)
            // Only a session of no length may start at `to`: it ends there, on the last day.
            guard end > from, start < to || end == start else { return }
            if let last = ties.last, last.start != start { try inStartOrder(&ties, body) }
            ties.append(
                ReportRow(
                    id: row.int64(6), taskID: row.int64(0), start: start, end: end, focused: row.int(3), pauses: row.int(4),
                    completed: row.int64(5) != 0))
        }
        try inStartOrder(&ties, body)
    }

    /// Calls `body` with the task id, kind and moment of every interruption marked in
    /// [`from`, `to`) on a recorded session (of `taskID`, of `device`), read by SQLite from the
    /// sessions' `interruptions` column: only sessions that have some hold it.
    public func forEachInterruption(
        from: Double, to: Double, taskID: Int64? = nil, device: DeviceFilter? = nil,
        _ body: (_ taskID: Int64, _ kind: InterruptionKind, _ at: Double) -> Void
    ) throws(DiligenceError) {
        // `+`: the task's own index would look up every session of the task (`sessions_interrupted`).
        let scope = Self.scope(taskID: taskID, device: device, prefix: "+s.")
        let sql = """
            SELECT s.task_id, json_extract(j.value, '$.kind'), json_extract(j.value, '$.at')
            FROM sessions s, json_each(s.interruptions) j
            WHERE s.interruptions IS NOT NULL AND s.start >= ? AND s.start <= ?\(scope.sql)
            """
        let values: [SQLite.Value] = [.real(from - Self.longestSessionSpan), .real(to)] + scope.values
        try connection.cached(sql).forEachRow(values) { row throws(DiligenceError) in
            let at = row.double(2)
            guard at >= from, at < to, let kind = InterruptionKind(rawValue: row.string(1)) else { return }
            body(row.int64(0), kind, at)
        }
    }

    /// A session as `forEachSession` reads it.
    struct ReportRow {
        var id: Int64, taskID: Int64, start: Double, end: Double, focused: Int, pauses: Int, completed: Bool
    }

    /// Gives `body` the sessions of one start, `rows`, and empties it. Several go by uuid, on
    /// every device alike (`SharedTime` gives the time they share to the first; the order of
    /// rows would differ between devices): uuids are read only then, as the report's covering
    /// index does not hold them (an ORDER BY start, uuid made `stats year` 35 % slower).
    private func inStartOrder(
        _ rows: inout [ReportRow],
        _ body: (_ taskID: Int64, _ start: Double, _ end: Double, _ focused: Int, _ pauses: Int, _ completed: Bool) -> Void
    ) throws(DiligenceError) {
        if rows.count > 1 {
            var uuids: [Int64: String] = [:]
            for row in rows {
                try connection.cached("SELECT uuid FROM sessions WHERE id = ?").forEachRow([.integer(row.id)]) {
                    r throws(DiligenceError) in uuids[row.id] = r.string(0)
                }
            }
            rows.sort { (uuids[$0.id] ?? "") < (uuids[$1.id] ?? "") }
        }
        for row in rows { body(row.taskID, row.start, row.end, row.focused, row.pauses, row.completed) }
        rows.removeAll(keepingCapacity: true)
    }

    /// Calls `body` with the task id and end of every completed session that counts on the days
    /// [`from`, `to`) (it ended after `from` and by `to`: `DayGrid.index(ofEnd:)`): what streaks
    /// need, read on the index of completed sessions' ends.
    public func forEachCompletedSession(
        from: Double, to: Double, taskID: Int64? = nil, device: DeviceFilter? = nil, _ body: (_ taskID: Int64, _ end: Double) -> Void
    ) throws(DiligenceError) {
        var sql = """
            SELECT task_id, end FROM sessions
            WHERE outcome = 'completed' AND end > ? AND end <= ? AND start >= ? AND start <= ?
            """
        let scope = Self.scope(taskID: taskID, device: device)
        sql += scope.sql
        let values: [SQLite.Value] = [.real(from), .real(to), .real(from - Self.longestSessionSpan), .real(to)] + scope.values
        try connection.cached(sql).forEachRow(values) { row throws(DiligenceError) in
            body(row.int64(0), row.double(1))
        }
    }

    /// Completed sessions and focused seconds of [`from`, `to`) by the rules of
    /// `StatsAccumulator` (focus split in proportion to the wall-clock time inside; a completed
    /// session counts when it ended after `from` and by `to`): the totals of a report's previous
    /// period. SQLite sums the sessions wholly inside and counts the completed ones on their
    /// index; only the few that cross `from` or `to` come up as rows. The answer is kept while
    /// nothing is written (`writeCount`): a past period's totals are asked again and again
    /// (each `stats year` asks for last year's) and do not change.
    public func totals(from: Double, to: Double, taskID: Int64? = nil, device: DeviceFilter? = nil) throws(DiligenceError) -> Tally {
        try remembered(\.totalsMemo, Self.rangeKey(from, to, taskID, device)) { () throws(DiligenceError) in
            try sumTotals(from: from, to: to, taskID: taskID, device: device)
        }
    }

    /// `compute`'s answer for `key`, kept in `memo` while nothing is written. The write count is
    /// read after `compute`: the TEMP tables a query fills count as writes.
    private func remembered<T>(
        _ memo: ReferenceWritableKeyPath<Store, WriteMemo<T>>, _ key: String, _ compute: () throws(DiligenceError) -> T
    ) throws(DiligenceError) -> T {
        if let kept = self[keyPath: memo].value(key, writes: writeCount) { return kept }
        let value = try compute()
        self[keyPath: memo].keep(value, key, writes: writeCount)
        return value
    }

    private static func rangeKey(_ from: Double, _ to: Double, _ taskID: Int64?, _ device: DeviceFilter?) -> String {
        "\(from) \(to) \(taskID.map(String.init) ?? "") \(device.map { "\($0)" } ?? "")"
    }

    /// Seconds away during the work of the sessions that began in [from, to) (`away_seconds`,
    /// docs/presence.md), of one task or all; of time two devices' sessions share, once
    /// (`SharedTime`, as `totals`).
    /// Kept as `totals` is, while nothing is written: neither query is on a covering index (a
    /// table row read per session), and with `holdsOtherDevicesSessions` they were 39 % of `stats all`.
    public func awaySeconds(from: Double, to: Double, taskID: Int64? = nil, device: DeviceFilter? = nil) throws(DiligenceError) -> Int {
        try remembered(\.rangeMemo, "away " + Self.rangeKey(from, to, taskID, device)) { () throws(DiligenceError) in
            try sumAwaySeconds(from: from, to: to, taskID: taskID, device: device)
        }
    }

    /// Seconds worked past the bell (overtime: focused beyond planned) by the sessions that
    /// began in [`from`, `to`), derived from the columns every session has; focus counts them too.
    public func overtimeSeconds(from: Double, to: Double, taskID: Int64? = nil, device: DeviceFilter? = nil) throws(DiligenceError)
        -> Int
    {
        // Only sessions past their bell add any: they alone are in `sessions_overtime`, which `+`
        // keeps the task's own index (every session of the task, looked up) from displacing.
        let scope = Self.scope(taskID: taskID, device: device, prefix: "+")
        var seconds = 0
        try connection.cached(
            "SELECT coalesce(sum(focused_seconds - planned_seconds), 0) FROM sessions"
                + " WHERE focused_seconds > planned_seconds AND start >= ? AND start < ?" + scope.sql
        ).forEachRow([.real(from), .real(to)] + scope.values) { row throws(DiligenceError) in
            seconds = row.int(0)
        }
        return seconds
    }

    private func sumAwaySeconds(from: Double, to: Double, taskID: Int64?, device: DeviceFilter?) throws(DiligenceError) -> Int {
        if device == nil, try holdsOtherDevicesSessions(from: from, to: to) {
            return try awaySessionBySession(from: from, to: to, taskID: taskID)
        }
        // The sessions with time away alone (`sessions_away`, as `overtimeSeconds`).
        let scope = Self.scope(taskID: taskID, device: device, prefix: "+")
        var seconds = 0
        try connection.cached(
            "SELECT coalesce(sum(away_seconds), 0) FROM sessions WHERE away_seconds <> 0 AND start >= ? AND start < ?" + scope.sql
        )
        .forEachRow([.real(from), .real(to)] + scope.values) { row throws(DiligenceError) in
            seconds = row.int(0)
        }
        return seconds
    }

    /// `awaySeconds` where two devices' sessions may overlap: each session with time away keeps
    /// the share `SharedTime` leaves it, in start (then uuid) order, after the latest end of the
    /// sessions before it, which began up to `longestSessionSpan` before `from`. Those ends come
    /// from one pass over the covering index; only the sessions with time away are read whole
    /// (reading every session's row, sorted by uuid, was 52 % of `stats all` with another device).
    private func awaySessionBySession(from: Double, to: Double, taskID: Int64?) throws(DiligenceError) -> Int {
        let away = try sessionsAway(from: from, to: to, taskID: taskID)
        guard !away.isEmpty else { return 0 }
        let scope = Self.scope(taskID: taskID, device: nil)
        var coveredUntil = [Double](repeating: -.infinity, count: away.count)
        var latest = -Double.infinity
        var next = 0
        var previousStart = -Double.infinity
        var tied: Set<Double> = []
        try connection.cached("SELECT start, end FROM sessions WHERE start >= ? AND start < ?" + scope.sql + " ORDER BY start")
            .forEachRow([.real(from - Self.longestSessionSpan), .real(to)] + scope.values) { row throws(DiligenceError) in
                let start = row.double(0)
                let end = row.double(1)
                while next < away.count, away[next].start <= start {
                    coveredUntil[next] = latest
                    next += 1
                }
                if start == previousStart { tied.insert(start) }
                previousStart = start
                if end > start { latest = max(latest, end) } // `SharedTime`: one of no length covers nothing
            }
        while next < away.count {
            coveredUntil[next] = latest
            next += 1
        }
        var seconds = 0.0
        for (i, session) in away.enumerated() {
            var covered = coveredUntil[i]
            // Sessions of the same start come before it by uuid.
            if tied.contains(session.start) {
                try connection.cached(
                    "SELECT coalesce(max(end), ?) FROM sessions WHERE start = ? AND uuid < ? AND end > start" + scope.sql
                ).forEachRow([.real(covered), .real(session.start), .text(session.uuid)] + scope.values) { row throws(DiligenceError) in
                    covered = max(covered, row.double(0))
                }
            }
            var shared = SharedTime(coveredUntil: covered)
            seconds += Double(session.seconds) * shared.uncovered(start: session.start, end: session.end).share
        }
        return Int(seconds.rounded())
    }

    /// The sessions with time away that began in [`from`, `to`), in start, then uuid, order.
    private func sessionsAway(from: Double, to: Double, taskID: Int64?) throws(DiligenceError)
        -> [(start: Double, end: Double, seconds: Int, uuid: String)]
    {
        let scope = Self.scope(taskID: taskID, device: nil, prefix: "+")
        var away: [(start: Double, end: Double, seconds: Int, uuid: String)] = []
        try connection.cached(
            "SELECT start, end, away_seconds, uuid FROM sessions WHERE away_seconds <> 0 AND start >= ? AND start < ?" + scope.sql
                + " ORDER BY start, uuid"
        ).forEachRow([.real(from), .real(to)] + scope.values) { row throws(DiligenceError) in
            away.append((row.double(0), row.double(1), row.int(2), row.string(3)))
        }
        return away
    }

    private func sumTotals(from: Double, to: Double, taskID: Int64?, device: DeviceFilter?) throws(DiligenceError) -> Tally {
        // One device's sessions never overlap: only all devices' together may.
        if device == nil, try holdsOtherDevicesSessions(from: from, to: to) {
            return try sumSessionBySession(from: from, to: to, taskID: taskID)
        }
        let scope = Self.scope(taskID: taskID, device: device)
        let task = scope.sql
        func values(_ v: [Double]) -> [SQLite.Value] { v.map { .real($0) } + scope.values }
        var completed = 0
        try connection.cached("SELECT count(*) FROM sessions WHERE outcome = 'completed' AND end > ? AND end <= ?" + task)
            .forEachRow(values([from, to])) { row throws(DiligenceError) in completed = row.int(0) }
        var focused = 0.0
        try connection.cached(
            "SELECT coalesce(sum(focused_seconds), 0) FROM sessions WHERE start >= ? AND start <= ? AND end <= ? AND end > ?" + task
        ).forEachRow(values([from, to, to, from])) { row throws(DiligenceError) in focused = Double(row.int(0)) }
        // The sessions that reach past `from` (they began at most `longestSessionSpan` before it),
        // then those that began inside and reach past `to`: their share inside.
        func addShares(_ sql: String, _ bounds: [Double]) throws(DiligenceError) {
            try connection.cached(sql + task).forEachRow(values(bounds)) { row throws(DiligenceError) in
                let start = row.double(0)
                let end = row.double(1)
                focused += Double(row.int(2)) * (min(end, to) - max(start, from)) / (end - start)
            }
        }
        try addShares(
            "SELECT start, end, focused_seconds FROM sessions WHERE start >= ? AND start < ? AND end > ?",
            [from - Self.longestSessionSpan, from, from])
        try addShares(
            "SELECT start, end, focused_seconds FROM sessions WHERE start >= ? AND start >= ? AND start < ? AND end > ?",
            [from, to - Self.longestSessionSpan, to, to])
        return Tally(completed: completed, focusedSeconds: focused)
    }

    /// Whether a session another device recorded (`sessions.device`) reaches into [from, to):
    /// only then can two sessions overlap (this device records one at a time), and the sums of
    /// `sumTotals` would count their shared time twice.
    private func holdsOtherDevicesSessions(from: Double, to: Double) throws(DiligenceError) -> Bool {
        try remembered(\.rangeMemo, "devices \(from) \(to)") { () throws(DiligenceError) in
            var found = false
            try connection.cached("SELECT 1 FROM sessions WHERE start >= ? AND start <= ? AND device IS NOT NULL LIMIT 1")
                .forEachRow([.real(from - Self.longestSessionSpan), .real(to)]) { _ throws(DiligenceError) in found = true }
            return found ? 1 : 0
        } != 0
    }

    /// `totals` one session at a time, by `StatsAccumulator`'s rules: time sessions share
    /// counts once (`SharedTime`), a session's focus inside [from, to) in proportion to its
    /// wall-clock time there, a completed one when it ended after `from` and by `to`.
    private func sumSessionBySession(from: Double, to: Double, taskID: Int64?) throws(DiligenceError) -> Tally {
        var tally = Tally()
        var shared = SharedTime()
        try forEachSession(from: from, to: to, taskID: taskID) { _, start, end, focused, _, completed in
            if completed, end <= to { tally.completed += 1 }
            let kept = shared.uncovered(start: start, end: end)
            let keptFocus = Double(focused) * kept.share
            guard end > kept.start else {
                if end == start { tally.focusedSeconds += keptFocus } // no length: all on the day it ends in
                return
            }
            let inside = min(end, to) - max(kept.start, from)
            if inside > 0 { tally.focusedSeconds += keptFocus * inside / (end - kept.start) }
        }
        return tally
    }

    /// The start of each task's earliest recorded session, by task id (a task without one is absent).
    public func firstSessionStarts(device: DeviceFilter? = nil) throws(DiligenceError) -> [Int64: Double] {
        let scope = Self.scope(taskID: nil, device: device)
        let rows = try connection.query("SELECT task_id, min(start) FROM sessions WHERE 1" + scope.sql + " GROUP BY task_id", scope.values)
        return Dictionary(rows.map { ($0.int64(0), $0.double(1)) }, uniquingKeysWith: min)
    }

    /// The start of the earliest recorded session (of `taskID`), nil when there is none.
    public func firstSessionStart(taskID: Int64? = nil, device: DeviceFilter? = nil) throws(DiligenceError) -> Double? {
        let scope = Self.scope(taskID: taskID, device: device)
        let row = try connection.query("SELECT min(start) FROM sessions WHERE 1" + scope.sql, scope.values).first
        guard let row, !row.isNull(0) else { return nil }
        return row.double(0)
    }

    // MARK: Plan

    /// Plans `taskID` for `day` (replacing what was planned). Throws `unknown_task`.
    public func setPlan(day: CalendarDay, taskID: Int64) throws(DiligenceError) {
        guard try task(id: taskID) != nil else {
            throw DiligenceError(.unknownTask, "No task with id \(taskID); it may have been removed.")
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
        guard
            let row = try connection.query(
                "SELECT \(Self.sessionColumns) FROM sessions s JOIN tasks t ON t.id = s.task_id WHERE s.id = ?", [.integer(id)]
            ).first
        else {
            throw DiligenceError(.unknownSession, "No session with id \(id); `diligencectl history` lists them with their ids.")
        }
        return try session(from: row)
    }

    /// Sessions (of `taskID`) starting in [`from`, `to`), oldest first; with `limit`, only the
    /// most recent `limit` of them.
    public func history(
        taskID: Int64? = nil, device: DeviceFilter? = nil, from: Double? = nil, to: Double? = nil, limit: Int? = nil
    ) throws(DiligenceError) -> [WorkSession] {
        guard let limit else { return try sessions(taskID: taskID, device: device, from: from, to: to) }
        let filter = Self.sessionFilter(taskID: taskID, device: device, from: from, to: to)
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

    /// The start and id of the `n`th most recent session (of `taskID`) starting in [`from`,
    /// `to`); nil when there are fewer: a streamed `history` with a limit pages on from it.
    public func latest(
        _ n: Int, taskID: Int64? = nil, device: DeviceFilter? = nil, from: Double? = nil, to: Double? = nil
    ) throws(DiligenceError) -> (start: Double, id: Int64)? {
        let filter = Self.sessionFilter(taskID: taskID, device: device, from: from, to: to)
        guard
            let row = try connection.query(
                "SELECT s.start, s.id FROM sessions s JOIN tasks t ON t.id = s.task_id \(filter.sql) ORDER BY s.start DESC, s.id DESC LIMIT 1 OFFSET ?",
                filter.values + [.int(n - 1)]
            ).first
        else { return nil }
        return (row.double(0), row.int64(1))
    }

    /// Deletes session `id` and returns it; throws `unknown_session`.
    public func removeSession(id: Int64) throws(DiligenceError) -> WorkSession {
        try through(.history) { () throws(DiligenceError) -> WorkSession in
            let removed = try session(id: id)
            try connection.run("DELETE FROM sessions WHERE id = ?", [.integer(id)])
            return removed
        }
    }
}

/// Answers of read queries kept while nothing is written: each with the `writeCount` it was read
/// at, a bounded few (a report asks for a handful of ranges).
struct WriteMemo<Value> {
    private var kept: [String: (writes: Int64, value: Value)] = [:]

    func value(_ key: String, writes: Int64) -> Value? {
        guard let entry = kept[key], entry.writes == writes else { return nil }
        return entry.value
    }

    mutating func keep(_ value: Value, _ key: String, writes: Int64) {
        if kept.count >= 32 { kept.removeAll() }
        kept[key] = (writes, value)
    }
}
