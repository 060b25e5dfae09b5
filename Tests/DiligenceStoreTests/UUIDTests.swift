import DiligenceCore
import DiligenceTestSupport
import Testing

@testable import DiligenceStore

// Every session and task has a stable UUID from its creation on: migrated for rows written
// before, kept by export and import, what an import matches on (issue 13).

@Suite("Store: stable UUIDs of sessions and tasks")
struct StoreUUIDTests {
    static let window = 0.0...1e10

    /// Whether `text` is a version-4 UUID in canonical form.
    static func isVersion4(_ text: String) -> Bool {
        UUIDText.parse(text) == text && Array(text)[14] == "4" && "89ab".contains(Array(text)[19])
    }

    @Test func aRecordedSessionAndANewTaskGetOneEach() throws {
        let s = try Store(location: .memory)
        let work = try s.findTask("Work")
        let added = try s.addTask(TaskConfig(name: "Reading"))
        let tasks = try s.tasks()
        #expect(tasks.allSatisfy { Self.isVersion4($0.uuid) }, "\(tasks.map(\.uuid))")
        #expect(Set(tasks.map(\.uuid)).count == tasks.count)
        #expect(try s.findTask("Reading").uuid == added.uuid)
        // An edit or a rename keeps it.
        var renamed = added
        renamed.name = "Books"
        renamed.goal = 3
        _ = try s.updateTask(renamed)
        #expect(try s.findTask("Books").uuid == added.uuid)

        let admission = try s.admit(
            [session(work, start: 1_000), session(work, start: 5_000)], source: .timer, window: Self.window, mode: .whatPasses)
        let recorded = try s.sessions()
        #expect(recorded.count == 2)
        #expect(recorded.allSatisfy { Self.isVersion4($0.uuid) })
        #expect(recorded[0].uuid != recorded[1].uuid)
        #expect(admission.uuids[0] == recorded[0].uuid && admission.uuids[1] == recorded[1].uuid)
        #expect(try s.session(id: recorded[0].id).uuid == recorded[0].uuid)
    }

    @Test func aSessionThatBringsAUUIDKeepsItAndTheSameUUIDIsNeverWrittenTwice() throws {
        let s = try Store(location: .memory)
        let work = try s.findTask("Work")
        var imported = session(work, start: 1_000)
        imported.uuid = "0b7e9a52-4c1d-4f0e-9a3b-5d6c7e8f9012"
        _ = try s.admit([imported], source: .import, window: Self.window, mode: .allOrNothing)
        #expect(try s.sessions().map(\.uuid) == [imported.uuid])
        // The same session, edited elsewhere (moved an hour on): the same session, skipped.
        var moved = imported
        moved.start += 3_600
        moved.end += 3_600
        let again = try s.admit([moved], source: .import, window: Self.window, mode: .allOrNothing)
        #expect(again.recorded.isEmpty)
        #expect(again.alreadyRecorded[0] == (try s.sessions()[0].id))
        // In a large batch, larger than what is recorded (the recorded UUIDs are then read at
        // once, not looked up one by one): the same.
        var random = SystemRandomNumberGenerator()
        let fresh = (0...Store.largeBatch).map { n in
            var s = session(work, start: 1_000_000 + Double(n) * 10_000)
            s.uuid = UUIDText.random(using: &random)
            return s
        }
        let larger = try s.admit([moved] + fresh, source: .import, window: Self.window, mode: .allOrNothing)
        #expect(larger.alreadyRecorded[0] == (try s.sessions()[0].id))
        #expect(larger.recorded.keys.sorted() == Array(1...fresh.count))
        #expect(try s.sessions().count == 1 + fresh.count)
        // Twice in one batch: written once.
        var other = session(work, start: 20_000)
        other.uuid = "1b7e9a52-4c1d-4f0e-9a3b-5d6c7e8f9012"
        var twin = other
        twin.start += 5_000
        twin.end += 5_000
        let batch = try s.admit([other, twin], source: .import, window: Self.window, mode: .allOrNothing)
        #expect(batch.recorded.keys.sorted() == [0])
        #expect(batch.alreadyRecorded[1] == batch.recorded[0])
        #expect(try s.sessions().count == 2 + fresh.count)
    }

    @Test func aDatabaseOfSchema2GivesEveryExistingRowItsOwnUUID() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let s = try Store(location: .path(dir.database))
            let work = try s.findTask("Work")
            for n in 0..<50 { _ = try s.record(session(work, start: 1_000 + Double(n) * 2_000)) }
            // Back to what schema 2 was: no UUID columns (nor those of archiving, notes and presence, schemas 4 to 6).
            try s.connection.exec(
                backToSchema6
                    + """
                    ALTER TABLE sessions DROP COLUMN away_seconds; ALTER TABLE sessions DROP COLUMN reason; ALTER TABLE tasks DROP COLUMN away;
                    DROP INDEX sessions_uuid; DROP INDEX tasks_uuid;
                    ALTER TABLE sessions DROP COLUMN uuid; ALTER TABLE tasks DROP COLUMN uuid; ALTER TABLE tasks DROP COLUMN archived;
                    ALTER TABLE sessions DROP COLUMN note; PRAGMA user_version = 2;
                    """)
        }
        let s = try Store(location: .path(dir.database))
        #expect(try s.connection.query("PRAGMA user_version").first?.int(0) == Store.schemaVersion)
        let sessions = try s.sessions()
        #expect(sessions.count == 50)
        #expect(sessions.allSatisfy { Self.isVersion4($0.uuid) }, "\(sessions.prefix(3).map(\.uuid))")
        #expect(Set(sessions.map(\.uuid)).count == 50)
        let tasks = try s.tasks()
        #expect(tasks.allSatisfy { Self.isVersion4($0.uuid) } && Set(tasks.map(\.uuid)).count == 7)
        // Kept on the next open; new rows get theirs from the store.
        let reopened = try Store(location: .path(dir.database))
        #expect(try reopened.sessions().map(\.uuid) == sessions.map(\.uuid))
        #expect(try reopened.addTask(TaskConfig(name: "New")).uuid.isEmpty == false)
    }

    @Test func aLargeBatchGetsDistinctUUIDsAndLeavesTheDefaultPageCache() throws {
        let s = try Store(location: .memory)
        let work = try s.findTask("Work")
        let count = Store.largeBatch * 3
        let batch = (0..<count).map { session(work, start: 1_000 + Double($0) * 2_000) }
        let admission = try s.admit(batch, source: .import, window: Self.window, mode: .allOrNothing)
        #expect(admission.recorded.count == count)
        let uuids = try s.sessions().map(\.uuid)
        #expect(uuids.count == count && Set(uuids).count == count)
        #expect(uuids.allSatisfy(Self.isVersion4))
        #expect(try s.connection.query("PRAGMA cache_size").first?.int(0) == -2000)
    }

    @Test func uuidTextIsCheckedAndCanonical() {
        var generator = SeededRandom(seed: 7)
        var seen = Set<String>()
        for _ in 0..<1000 {
            let uuid = UUIDText.random(using: &generator)
            #expect(Self.isVersion4(uuid), "\(uuid)")
            seen.insert(uuid)
        }
        #expect(seen.count == 1000)
        #expect(UUIDText.parse("0B7E9A52-4C1D-4F0E-9A3B-5D6C7E8F9012") == "0b7e9a52-4c1d-4f0e-9a3b-5d6c7e8f9012")
        #expect(UUIDText.parse("0b7e9A52-4c1d-4F0e-9a3b-5d6c7e8f901f") == "0b7e9a52-4c1d-4f0e-9a3b-5d6c7e8f901f")
        for bad in [
            "", "0b7e9a52-4c1d-4f0e-9a3b-5d6c7e8f901", "0b7e9a524c1d-4f0e-9a3b-5d6c7e8f90123", "0b7e9a52-4c1d-4f0e-9a3b-5d6c7e8f901g",
            "{0b7e9a52-4c1d-4f0e-9a3b-5d6c7e8f90}", "0b7e9a52-4c1d-4f0e-9a3b-5d6c7e8f901\u{e9}",
            "0b7e9a52-4c1d-4f0e-9a3b-5d6c7e8f901-", "0b7e9a52-4c1d-4f0e-9a3b05d6c7e8f9012",
        ] {
            #expect(UUIDText.parse(bad) == nil, "\(bad)")
        }
    }
}
