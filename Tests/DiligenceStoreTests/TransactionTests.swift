import DiligenceCore
import Testing
@testable import DiligenceStore

// Store.transaction: the daemon writes a phase end's session and saved timer in one commit
// (one disk flush), so both must be seen together or not at all.

@Test func aSessionAndTheSavedTimerCommitTogether() throws {
    let dir = TempDir()
    defer { dir.remove() }
    let store = try Store(location: .path(dir.database))
    let reader = try Store(location: .path(dir.database))
    let study = try store.findTask("Study")
    let saved = try savedTimer(study, wall: 1_700_000_000, elapsed: 30)
    try store.transaction { () throws(DiligenceError) in
        _ = try store.record(session(study, start: 1_700_000_000))
        try store.saveTimer(saved, wall: 1_700_000_030, boottime: 40, bootID: "boot")
        // Another connection sees nothing of it before the commit...
        #expect(try reader.sessions().isEmpty)
        #expect(try reader.loadTimer() == nil)
    }
    // ...and both after it.
    #expect(try reader.sessions().count == 1)
    #expect(try reader.loadTimer()?.saved == saved)
}

@Test func aTransactionThatThrowsWritesNothing() throws {
    let store = try Store(location: .memory)
    let study = try store.findTask("Study")
    let saved = try savedTimer(study, wall: 1_700_000_000, elapsed: 30)
    let thrown = error { () throws(DiligenceError) in
        try store.transaction { () throws(DiligenceError) in
            _ = try store.record(session(study, start: 1_700_000_000))
            try store.saveTimer(saved, wall: 1_700_000_030, boottime: 40, bootID: "boot")
            // A session of a task that does not exist fails after the others were written.
            var orphan = session(study, start: 1_700_000_100)
            orphan.taskID = 999
            _ = try store.record(orphan)
        }
    }
    #expect(thrown?.code == "unknown_task")
    #expect(try store.sessions().isEmpty)
    #expect(try store.loadTimer() == nil)
}
