import DiligenceCore
import DiligenceJSON
import DiligenceTestSupport
import Testing

@testable import DiligenceStore

/// A session's focus segments in the database (issue 31): stored as the timer made them, one
/// segment for a session that has no others, and read back summing to its focused time.
@Suite("Store: focus segments")
struct SegmentStoreTests {
    static let start = 1_800_000_000.0
    static let window = 0.0...1e12

    func sum(_ s: WorkSession) -> Int { s.segments.reduce(0) { $0 + $1.seconds } }

    @Test func segmentsAreStoredAndReadBack() throws {
        let s = try Store(location: .memory)
        let work = try s.findTask("Work")
        var paused = session(work, start: Self.start, length: 1800, pauses: 1, focused: 1500)
        paused.segments = [FocusSegment(start: Self.start, seconds: 600), FocusSegment(start: Self.start + 900, seconds: 900)]
        let admission = try s.admit([paused], source: .timer, window: Self.window, mode: .whatPasses)
        let id = try #require(admission.recorded[0])
        let stored = try s.session(id: id)
        #expect(stored.segments == paused.segments)
        #expect(sum(stored) == stored.focusedSeconds)
        // One segment from the start is what NULL says: not written out.
        let plain = try s.admit([session(work, start: Self.start + 4000)], source: .manual, window: Self.window, mode: .whatPasses)
        let plainID = try #require(plain.recorded[0])
        #expect(try s.connection.query("SELECT segments FROM sessions WHERE id = ?", [.integer(plainID)]).first?.optionalString(0) == nil)
        #expect(try s.session(id: plainID).segments == [FocusSegment(start: Self.start + 4000, seconds: 1500)])
    }

    @Test func anOlderDatabasesSessionsBecomeOneSegmentEach() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let s = try Store(location: .path(dir.database))
            try s.connection.exec(
                Store.dropSessionNotes + "ALTER TABLE sessions DROP COLUMN segments; PRAGMA user_version = \(Store.schemaVersion - 1);")
            let work = try s.findTask("Work")
            try s.connection.run(
                "INSERT INTO sessions (task_id, start, end, planned_seconds, focused_seconds, pauses, outcome, uuid) VALUES (?, ?, ?, 1500, 1200, 2, 'completed', 'a')",
                [.integer(work.id), .real(Self.start), .real(Self.start + 1800)])
        }
        let s = try Store(location: .path(dir.database))
        #expect(try s.connection.query("PRAGMA user_version").first?.int(0) == Store.schemaVersion)
        let old = try #require(try s.sessions().first)
        #expect(old.segments == [FocusSegment(start: Self.start, seconds: 1200)])
        #expect(sum(old) == old.focusedSeconds)
    }

    @Test func aRevisionFitsTheSegments() throws {
        let s = try Store(location: .memory)
        let work = try s.findTask("Work")
        var paused = session(work, start: Self.start, length: 1800, pauses: 1, focused: 1500)
        paused.segments = [FocusSegment(start: Self.start, seconds: 600), FocusSegment(start: Self.start + 900, seconds: 900)]
        _ = try s.admit([paused], source: .timer, window: Self.window, mode: .whatPasses)
        var trimmed = paused
        trimmed.end = Self.start + 1200
        trimmed.focusedSeconds = 900
        trimmed.segments = FocusSegment.fit(paused.segments, start: trimmed.start, end: trimmed.end, focused: 900)
        let revised = try #require(try s.reviseSession(trimmed))
        #expect(revised.segments == [FocusSegment(start: Self.start, seconds: 600), FocusSegment(start: Self.start + 900, seconds: 300)])
        #expect(sum(revised) == revised.focusedSeconds)
    }

    @Test func theSavedTimerKeepsItsStretches() throws {
        let s = try Store(location: .memory)
        let work = try s.findTask("Work")
        let saved = try savedTimer(work, wall: Self.start, elapsed: 300) { (machine, now) throws(DiligenceError) in
            _ = try machine.pause(at: now.adding(-200))
            _ = try machine.resume(at: now.adding(-100))
        }
        #expect(saved.focus == [FocusSpan(from: 0, to: 100)] && saved.focusSince == 200)
        try s.saveTimer(saved, wall: Self.start + 300, boottime: 1300, bootID: "b")
        let loaded = try #require(try s.loadTimer()).saved
        #expect(loaded.focus == saved.focus && loaded.focusSince == saved.focusSince)
    }

    @Test func aSpilledSessionKeepsItsSegments() throws {
        var s = WorkSession(
            taskID: 1, taskName: "W", start: Self.start, end: Self.start + 100, plannedSeconds: 100, focusedSeconds: 80, pauses: 1,
            outcome: .abandoned)
        s.segments = [FocusSegment(start: Self.start, seconds: 30), FocusSegment(start: Self.start + 50, seconds: 50)]
        #expect(WorkSession(storedJSON: try JSON.parse(s.storedJSON.serialized))?.segments == s.segments)
    }
}
