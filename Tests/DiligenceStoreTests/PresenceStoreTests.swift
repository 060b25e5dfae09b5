import DiligenceCore
import DiligenceTestSupport
import Testing

@testable import DiligenceStore

/// Schema 6: a session's time away and why it ended; a task's own away policy.
@Suite("Store: presence columns")
struct PresenceStoreTests {
    @Test func aSessionKeepsItsTimeAwayAndReason() throws {
        let s = try Store(location: .memory)
        var left = session(try s.findTask("Work"), start: 1_790_000_000, length: 900)
        left.outcome = .abandoned
        left.awaySeconds = 120
        left.reason = .left
        let stored = try s.record(left)
        let read = try s.session(id: stored.id)
        #expect(read.awaySeconds == 120)
        #expect(read.reason == .left)
        #expect(try s.sessions().map(\.awaySeconds) == [120])
    }

    @Test func aTasksAwayPolicyIsStoredAndCleared() throws {
        let s = try Store(location: .memory)
        var work = try s.findTask("Work")
        #expect(work.awayPolicy == nil)
        work.awayPolicy = .continue
        _ = try s.updateTask(work)
        #expect(try s.findTask("Work").awayPolicy == .continue)
        work.awayPolicy = nil
        _ = try s.updateTask(work)
        #expect(try s.findTask("Work").awayPolicy == nil)
        let added = try s.addTask(TaskConfig(name: "Reading", awayPolicy: .abandon))
        #expect(try s.task(id: added.id)?.awayPolicy == .abandon)
    }

    @Test func revisingTrimsTheSessionOfTheSameTaskAndStart() throws {
        let s = try Store(location: .memory)
        let work = try s.findTask("Work")
        var completed = session(work, start: 1_790_000_000)
        completed.awaySeconds = 900
        let stored = try s.record(completed)
        var trimmed = completed
        trimmed.start += 0.4
        trimmed.end = completed.start + 600
        trimmed.focusedSeconds = 600
        trimmed.awaySeconds = 0
        trimmed.outcome = .abandoned
        trimmed.reason = .left
        let revised = try #require(try s.reviseSession(trimmed))
        #expect(revised.id == stored.id)
        #expect(revised.start == completed.start)
        #expect(revised.end == completed.start + 600)
        #expect(revised.focusedSeconds == 600)
        #expect(revised.outcome == .abandoned && revised.reason == .left)
        var elsewhere = trimmed
        elsewhere.start += 5
        #expect(try s.reviseSession(elsewhere) == nil)
    }

    @Test func aSchema5DatabaseGainsTheColumnsAndKeepsItsSessions() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let s = try Store(location: .path(dir.database))
            _ = try s.record(session(try s.findTask("Work"), start: 1_790_000_000))
            try s.connection.exec(
                backToSchema6
                    + """
                    ALTER TABLE sessions DROP COLUMN away_seconds; ALTER TABLE sessions DROP COLUMN reason;
                    ALTER TABLE tasks DROP COLUMN away; PRAGMA user_version = 5;
                    """)
        }
        let s = try Store(location: .path(dir.database))
        #expect(try s.connection.query("PRAGMA user_version").first?.int(0) == Store.schemaVersion)
        let sessions = try s.sessions()
        #expect(sessions.count == 1)
        #expect(sessions[0].awaySeconds == 0 && sessions[0].reason == nil)
        #expect(try s.tasks().allSatisfy { $0.awayPolicy == nil })
    }
}
