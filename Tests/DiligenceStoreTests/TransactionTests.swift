import DiligenceCore
import DiligenceTestSupport
import Glibc
import Testing

@testable import DiligenceStore

// Store.transaction: the daemon writes a phase end's session and saved timer in one commit
// (one disk flush), so both must be seen together or not at all.

@Test func aSessionAndTheSavedTimerCommitTogether() throws {
    let dir = TemporaryDirectory()
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
    #expect(thrown?.code.rawValue == "unknown_task")
    #expect(try store.sessions().isEmpty)
    #expect(try store.loadTimer() == nil)
}

// transaction(flush: .byCaller): the daemon sends a phase end's events between the commit and
// the disk flush, so the commit must already be what every reader sees.

@Test func aCommitFlushedByTheCallerIsVisibleAtOnceAndTheConnectionStaysFullySynchronous() throws {
    let dir = TemporaryDirectory()
    defer { dir.remove() }
    let db = try SQLite(location: .path(dir.database))
    let reader = try SQLite(location: .path(dir.database))
    try db.exec("CREATE TABLE t (x)")
    try db.transaction(flush: .byCaller) { () throws(DiligenceError) in
        _ = try db.run("INSERT INTO t VALUES (1)")
        #expect(try db.query("PRAGMA synchronous").first?.int(0) == 1) // NORMAL inside
    }
    #expect(try reader.query("SELECT count(*) FROM t").first?.int(0) == 1)
    try db.flushJournal()
    // Every other write still waits for the disk in its COMMIT.
    #expect(try db.query("PRAGMA synchronous").first?.int(0) == 2) // FULL
    // A failed body restores it too.
    _ = error { () throws(DiligenceError) in
        try db.transaction(flush: .byCaller) { () throws(DiligenceError) in throw DiligenceError(.invalidValue, "stop") }
    }
    #expect(try db.query("PRAGMA synchronous").first?.int(0) == 2)
    // An in-memory database has no log to flush.
    try SQLite(location: .memory).flushJournal()
}

@Test func checkpointsRunWhereTheyAreScheduledNotInsideTheCommitThatFilledTheLog() throws {
    let dir = TemporaryDirectory()
    defer { dir.remove() }
    let db = try SQLite(location: .path(dir.database))
    var scheduled: [() -> Void] = []
    db.deferCheckpoints { scheduled.append($0) }
    try db.exec("CREATE TABLE t (x BLOB)")
    func fileSize(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : -1
    }
    let before = fileSize(dir.database)
    // About 1 200 pages of 4 KiB: past the 1 000-page threshold in one commit after another.
    for _ in 0..<12 {
        try db.transaction { () throws(DiligenceError) in
            for _ in 0..<100 { _ = try db.run("INSERT INTO t VALUES (zeroblob(4000))") }
        }
    }
    // SQLite's own hook would have copied the log into the database inside a commit.
    #expect(scheduled.count == 1)
    #expect(fileSize(dir.database) == before)
    scheduled.removeFirst()()
    #expect(fileSize(dir.database) > 4_000_000)
    // The next commit past the threshold asks again.
    for _ in 0..<11 {
        try db.transaction { () throws(DiligenceError) in
            for _ in 0..<100 { _ = try db.run("INSERT INTO t VALUES (zeroblob(4000))") }
        }
    }
    #expect(scheduled.count == 1)
}
