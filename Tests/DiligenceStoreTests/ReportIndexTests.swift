import DiligenceCore
import DiligenceTestSupport
import Testing

@testable import DiligenceStore

/// Reports read their sessions from the covering index `sessions_report`, which every open
/// creates when missing (outside the schema version: it changes no data).
@Suite struct ReportIndexTests {
    /// The plan SQLite picks for the statement `forEachSession` runs (after it ran once).
    func reportPlan(_ store: Store) throws -> String {
        try store.forEachSession(from: 0, to: 1) { _, _, _, _, _, _ in }
        let rows = try store.connection.query(
            "EXPLAIN QUERY PLAN SELECT task_id, start, end, focused_seconds, pauses, outcome = 'completed' FROM sessions WHERE start >= ? AND start < ? ORDER BY start",
            [.real(0), .real(1)])
        return rows.map { $0.string(3) }.joined(separator: "; ")
    }

    @Test func reportsReadSessionsFromTheCoveringIndexAlone() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Store(location: .path(dir.database))
        let plan = try reportPlan(store)
        #expect(plan.contains("COVERING INDEX sessions_report"), "\(plan)")
    }

    @Test func aDatabaseWithoutTheIndexGetsItOnOpenAndKeepsItsSessions() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let store = try Store(location: .path(dir.database))
            try store.connection.exec(
                """
                INSERT INTO sessions (task_id, start, end, planned_seconds, focused_seconds, pauses, outcome)
                VALUES (1, 1000, 2500, 1500, 1500, 1, 'completed');
                DROP INDEX sessions_report;
                """)
        }
        let store = try Store(location: .path(dir.database))
        #expect(try reportPlan(store).contains("COVERING INDEX sessions_report"))
        var seen: [(Double, Double, Int, Bool)] = []
        try store.forEachSession(from: 0, to: 5000) { _, start, end, _, pauses, completed in seen.append((start, end, pauses, completed)) }
        #expect(seen.count == 1 && seen[0] == (1000, 2500, 1, true))
        #expect(try store.connection.query("PRAGMA user_version").first?.int(0) == Store.schemaVersion, "the schema version is unchanged")
    }

    @Test func theStartOnlyIndexIsDroppedOnOpenAndStartRangesUseTheReportIndex() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        func startIndexes(_ store: Store) throws -> Int {
            try store.connection.query("SELECT count(*) FROM sqlite_master WHERE name = 'sessions_start'").first?.int(0) ?? -1
        }
        do {
            let store = try Store(location: .path(dir.database))
            #expect(try startIndexes(store) == 0)
            // A database an earlier build opened last still has it.
            try store.connection.exec("CREATE INDEX sessions_start ON sessions(start)")
        }
        let store = try Store(location: .path(dir.database))
        #expect(try startIndexes(store) == 0)
        let plan = try store.connection.query("EXPLAIN QUERY PLAN SELECT id FROM sessions WHERE start >= 0 AND start < 1 ORDER BY start")
            .map { $0.string(3) }.joined(separator: "; ")
        #expect(plan.contains("USING") && plan.contains("INDEX sessions_report"), "\(plan)")
    }

    @Test func sessionsEndingBeforeTheRangeAreLeftOut() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Store(location: .path(dir.database))
        try store.connection.exec(
            """
            INSERT INTO sessions (task_id, start, end, planned_seconds, focused_seconds, pauses, outcome) VALUES
                (1, 86400, 88000, 1500, 1500, 0, 'completed'),  -- ends before the range: left out
                (1, 90000, 200000, 1500, 1500, 0, 'skipped'),   -- began before, reaches into it
                (1, 180000, 181500, 1500, 1500, 0, 'completed');
            """)
        var starts: [Double] = []
        try store.forEachSession(from: 172800, to: 259200) { _, start, _, _, _, _ in starts.append(start) }
        #expect(starts == [90000, 180000])
    }
    /// The figures few sessions have (time away, overtime, interruptions, another device's
    /// sessions) are read from partial indexes holding only those sessions, with and without a
    /// task or a device: never by looking every session of the range up in the table.
    @Test func figuresFewSessionsHaveAreReadFromTheirPartialIndexes() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Store(location: .path(dir.database))
        try store.connection.exec(
            """
            INSERT INTO sessions (task_id, start, end, planned_seconds, focused_seconds, pauses, outcome, away_seconds, interruptions)
            VALUES (1, 1000, 2500, 1500, 1500, 0, 'completed', 0, NULL),
                (1, 3000, 5500, 1500, 2400, 0, 'completed', 60, '[{"kind":"internal","at":3100}]');
            """)
        var figures: [Int] = []
        for task in [nil, Int64(1)] {
            for device in [nil, DeviceFilter.this, .other("feed")] {
                figures.append(try store.awaySeconds(from: 0, to: 9000, taskID: task, device: device))
                figures.append(try store.overtimeSeconds(from: 0, to: 9000, taskID: task, device: device))
                var marks = 0
                try store.forEachInterruption(from: 0, to: 9000, taskID: task, device: device) { _, _, _ in marks += 1 }
                figures.append(marks)
            }
        }
        #expect(figures == [60, 900, 1, 60, 900, 1, 0, 0, 0, 60, 900, 1, 60, 900, 1, 0, 0, 0])
        let figureQueries = store.connection.cachedStatements.filter {
            $0.contains("away_seconds") || $0.contains("planned_seconds") || $0.contains("json_each") || $0.contains("device IS NOT NULL")
        }
        #expect(figureQueries.count == 19, "\(figureQueries)")
        let partial = ["sessions_away", "sessions_overtime", "sessions_interrupted", "sessions_other_device"]
        for sql in figureQueries {
            let plan = try store.connection.query("EXPLAIN QUERY PLAN " + sql).map { $0.string(3) }.joined(separator: "; ")
            #expect(partial.contains { plan.contains("INDEX \($0) ") }, "\(sql): \(plan)")
        }
    }
    /// Random sessions of three devices, overlapping, some with time away, several of one start
    /// (ties go by uuid): their time away, with and without a task, is what `SharedTime` leaves
    /// each, taken in start and uuid order; and no query reads every session's row for it.
    @Test func timeAwayOfOverlappingDevicesReadsOnlyTheSessionsWithTimeAwayWhole() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try Store(location: .path(dir.database))
        var random = SeededRandom(seed: 28)
        var rows: [(task: Int64, start: Double, end: Double, away: Int, uuid: String)] = []
        for i in 0..<400 {
            let start = Double(Int.random(in: 0..<200, using: &random) * 600)
            let end = start + Double([0, 300, 1500, 5000].randomElement(using: &random)!)
            let away = Bool.random(using: &random) ? Int.random(in: 1..<900, using: &random) : 0
            let device = ["NULL", "'aaaa'", "'bbbb'"][i % 3]
            let uuid = String(format: "%08x-0000-4000-8000-000000000000", UInt32.random(in: 0...UInt32.max, using: &random))
            let task = Int64.random(in: 1...2, using: &random)
            try store.connection.exec(
                """
                INSERT INTO sessions (task_id, start, end, planned_seconds, focused_seconds, pauses, outcome, away_seconds, device, uuid)
                VALUES (\(task), \(start), \(end), 1500, 1500, 0, 'completed', \(away), \(device), '\(uuid)')
                """)
            rows.append((task, start, end, away, uuid))
        }
        rows.sort { ($0.start, $0.uuid) < ($1.start, $1.uuid) }
        for (from, to) in [(0.0, 120_000.0), (30_000.0, 90_000.0), (60_000.0, 60_600.0)] {
            for task in [nil, Int64(2)] {
                var shared = SharedTime()
                var expected = 0.0
                for row in rows where task == nil || row.task == task {
                    guard row.start < to else { break }
                    let kept = shared.uncovered(start: row.start, end: row.end)
                    if row.start >= from { expected += Double(row.away) * kept.share }
                }
                #expect(try store.awaySeconds(from: from, to: to, taskID: task) == Int(expected.rounded()), "\(from) \(to) \(task ?? 0)")
            }
        }
        for sql in store.connection.cachedStatements where sql.contains("FROM sessions") {
            let plan = try store.connection.query("EXPLAIN QUERY PLAN " + sql).map { $0.string(3) }.joined(separator: "; ")
            #expect(!plan.contains("USING INDEX sessions_report (start>? AND start<?)"), "\(sql): \(plan)")
        }
    }
}
