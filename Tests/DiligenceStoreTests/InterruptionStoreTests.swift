import DiligenceCore
import DiligenceTestSupport
import Testing

@testable import DiligenceStore

/// The interruptions' migration: sessions carry their interruptions, tasks their strict rule.
@Suite("Store: interruptions")
struct InterruptionStoreTests {
    static let marks = [
        Interruption(kind: .internal, at: 1_790_000_100.5, note: "idea"),
        Interruption(kind: .external, at: 1_790_000_200, note: nil),
    ]

    @Test func aSessionsInterruptionsAreStoredAndReadBack() throws {
        let s = try Store(location: .memory)
        var marked = session(try s.findTask("Work"), start: 1_790_000_000)
        marked.interruptions = Self.marks
        let admission = try s.admit([marked], source: .timer, window: 0...4e9, mode: .allOrNothing)
        let id = try #require(admission.recorded[0])
        #expect(try s.session(id: id).interruptions == Self.marks)
        #expect(try s.history().first?.interruptions == Self.marks)
        #expect(try s.sessions().first?.interruptions == Self.marks)
        let plain = try s.record(session(try s.findTask("Work"), start: 1_790_010_000))
        #expect(try s.session(id: plain.id).interruptions.isEmpty)
        #expect(try s.connection.query("SELECT count(*) FROM sessions WHERE interruptions IS NULL").first?.int(0) == 1)
    }

    @Test func theDoorRefusesInterruptionsOutsideTheSession() throws {
        let s = try Store(location: .memory)
        var stray = session(try s.findTask("Work"), start: 1_790_000_000)
        stray.interruptions = [Interruption(kind: .external, at: 1_790_009_000)]
        let admission = try s.admit([stray], source: .manual, window: 0...4e9, mode: .whatPasses)
        #expect(admission.recorded[0] == nil)
        #expect(admission.refused.first?.error.message.contains("interruption") == true)
    }

    @Test func aTasksVoidOnInterruptIsStored() throws {
        let s = try Store(location: .memory)
        var work = try s.findTask("Work")
        #expect(!work.voidOnInterrupt)
        work.voidOnInterrupt = true
        _ = try s.updateTask(work)
        #expect(try s.findTask("Work").voidOnInterrupt)
        let added = try s.addTask(TaskConfig(name: "Strict", voidOnInterrupt: true))
        #expect(try s.task(id: added.id)?.voidOnInterrupt == true)
    }

    @Test func anOlderDatabaseGainsTheColumnsAndKeepsItsSessions() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let s = try Store(location: .path(dir.database))
            _ = try s.record(session(try s.findTask("Work"), start: 1_790_000_000))
            try s.connection.exec(
                Store.dropSessionNotes + "ALTER TABLE sessions DROP COLUMN segments; " + withoutInterruptions
                    + "PRAGMA user_version = 11;")
        }
        let s = try Store(location: .path(dir.database))
        #expect(try s.connection.query("PRAGMA user_version").first?.int(0) == Store.schemaVersion)
        #expect(try s.sessions().map(\.interruptions) == [[]])
        #expect(try s.tasks().allSatisfy { !$0.voidOnInterrupt })
    }
}
