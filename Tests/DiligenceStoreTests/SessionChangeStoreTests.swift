import DiligenceCore
import DiligenceTestSupport
import Testing

@testable import DiligenceStore

/// The session changes a commit made, noted by TEMP triggers whatever wrote them (issue 31).
@Suite("Store: session changes")
struct SessionChangeStoreTests {
    static let start = 1_800_000_000.0
    static let window = 0.0...1e12

    func kinds(_ changes: [SessionChange]) -> [String] { changes.map { "\($0.kind.rawValue) \($0.door.rawValue)" } }

    @Test func aMergeIsTheSyncDoorAndARollbackNotesNothing() throws {
        let s = try Store(location: .memory)
        let work = try s.findTask("Work")
        var theirs = session(work, start: Self.start)
        theirs.uuid = "0b5c3c1e-2f43-4b6e-9a56-0c1d2e3f4a5b"
        theirs.device = "other"
        _ = try s.mergeTransaction { () throws(DiligenceError) in
            try s.admit([theirs], source: .sync, window: Self.window, mode: .whatPasses)
        }
        #expect(kinds(try s.takeSessionChanges()) == ["session_recorded sync"])
        #expect(try s.takeSessionChanges().isEmpty, "drained once")

        _ = try? s.transaction { () throws(DiligenceError) in
            _ = try s.admit([session(work, start: Self.start + 5000)], source: .manual, window: Self.window, mode: .whatPasses)
            throw DiligenceError(.storageError, "rolled back")
        }
        #expect(try s.takeSessionChanges().isEmpty, "what was rolled back never happened")

        _ = try s.mergeTransaction { () throws(DiligenceError) in
            try s.connection.run("DELETE FROM sessions WHERE uuid = ?", [.text(theirs.uuid)])
        }
        let removed = try s.takeSessionChanges()
        #expect(kinds(removed) == ["session_removed sync"])
        #expect(removed.first?.session.uuid == theirs.uuid && removed.first?.session.taskName == "Work")
    }

    @Test func aSessionWrittenAndRemovedInOneCommitIsNoChange() throws {
        let s = try Store(location: .memory)
        let work = try s.findTask("Work")
        try s.transaction { () throws(DiligenceError) in
            let admission = try s.admit([session(work, start: Self.start)], source: .timer, window: Self.window, mode: .whatPasses)
            _ = try s.removeSession(id: admission.recorded[0] ?? 0)
        }
        #expect(try s.takeSessionChanges().isEmpty)
    }
}
