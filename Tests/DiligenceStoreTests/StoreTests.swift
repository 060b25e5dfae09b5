import DiligenceCore
import DiligenceJSON
import DiligenceTestSupport
import DiligenceTime
import Glibc
import Testing

@testable import DiligenceStore

// MARK: Opening and seeding

@Test func freshDatabaseHoldsTheSevenDefaultsInOrder() throws {
    let store = try Store(location: .memory)
    let tasks = try store.tasks()
    #expect(tasks.map(\.id) == Array(1...7))
    #expect(
        tasks.map {
            var t = $0
            t.id = 0
            t.uuid = ""
            return t
        } == TaskConfig.defaults)
    #expect(store.path == ":memory:")
}

@Test func reopeningDoesNotSeedAgain() throws {
    let dir = TemporaryDirectory()
    defer { dir.remove() }
    do {
        let store = try Store(location: .path(dir.database))
        _ = try store.addTask(TaskConfig(name: "Reading"))
    }
    let store = try Store(location: .path(dir.database))
    #expect(try store.tasks().map(\.name) == TaskConfig.defaults.map(\.name) + ["Reading"])
    #expect(try store.connection.query("PRAGMA user_version").first?.int(0) == Store.schemaVersion)
    #expect(store.path == dir.database)
}

@Test func newDatabaseFileIsPrivate() throws {
    let dir = TemporaryDirectory()
    defer { dir.remove() }
    let store = try Store(location: .path(dir.database))
    _ = try store.record(session(try store.findTask("Work"), start: 1000))
    #expect(fileMode(dir.database) == 0o600)
    // SQLite gives the WAL file the database file's mode; the open connection keeps the file.
    #expect(fileMode(dir.database + "-wal") == 0o600)
    #expect(try store.connection.query("PRAGMA journal_mode").first?.string(0) == "wal")
    #expect(try store.connection.query("PRAGMA synchronous").first?.int(0) == 2) // FULL
    #expect(try store.connection.query("PRAGMA foreign_keys").first?.int(0) == 1)
}

@Test func missingDirectoryIsAStorageErrorNamingThePath() throws {
    let dir = TemporaryDirectory()
    defer { dir.remove() }
    let path = dir.file("no-such-dir/db.sqlite3")
    let failure = error { () throws(DiligenceError) in try Store(location: .path(path)) }
    #expect(failure?.code.rawValue == "storage_error")
    #expect(failure?.message.contains(path) == true)
}

@Test func reopeningAFileKeepsEverything() throws {
    let dir = TemporaryDirectory()
    defer { dir.remove() }
    let saved = try savedTimer(TaskConfig.defaults[0], wall: 1_700_000_000.5, elapsed: 612.25) { machine, now throws(DiligenceError) in
        _ = try machine.pause(at: now)
    }
    #expect(saved.state == .paused && saved.pauses == 1)
    let (task, recorded): (TaskConfig, WorkSession)
    do {
        let store = try Store(location: .path(dir.database))
        task = try store.addTask(TaskConfig(name: "Reading", color: .green, reminderMinute: 480, sound: "rain"))
        recorded = try store.record(session(task, start: 5000, pauses: 2))
        try store.saveTimer(saved, wall: 10, boottime: 20, bootID: "boot-a")
    }
    let store = try Store(location: .path(dir.database))
    #expect(try store.task(id: task.id) == task)
    #expect(try store.sessions() == [recorded])
    let loaded = try store.loadTimer()
    #expect(loaded?.saved == saved)
    #expect(loaded?.bootID == "boot-a")
}

// MARK: Tasks

@Test func addedTaskRoundTripsWithItsNewID() throws {
    let store = try Store(location: .memory)
    let task = TaskConfig(
        name: "Reading", description: "Books, not feeds", color: .orange, workSeconds: 50 * 60,
        shortBreakSeconds: 600, longBreakSeconds: 1800, longBreakEvery: 0, breaks: false,
        autostart: .breaks, focusMode: true, goal: 6, reminderMinute: 21 * 60 + 30, sound: "café"
    )
    let added = try store.addTask(task)
    #expect(added.id == 8)
    var expected = task
    expected.id = 8
    expected.uuid = added.uuid
    #expect(UUIDText.parse(added.uuid) == added.uuid)
    #expect(added == expected)
    #expect(try store.task(id: 8) == expected)
    #expect(try store.tasks().last == expected)
    #expect(try store.task(id: 99) == nil)
}

@Test func duplicateNamesAreRefusedIgnoringCase() throws {
    let store = try Store(location: .memory)
    for name in ["Work", "work", "WORK"] {
        let failure = error { () throws(DiligenceError) in try store.addTask(TaskConfig(name: name)) }
        #expect(failure == DiligenceError(.duplicateName, "A task named \"Work\" already exists."))
    }
    // Beyond ASCII, where SQLite's NOCASE would not fold.
    _ = try store.addTask(TaskConfig(name: "Été"))
    #expect(error { () throws(DiligenceError) in try store.addTask(TaskConfig(name: "ÉTÉ")) }?.code.rawValue == "duplicate_name")
    #expect(try store.tasks().count == 8)
}

@Test func validationErrorsSurfaceWithTheirCodes() throws {
    let store = try Store(location: .memory)
    let cases: [(TaskConfig, String)] = [
        (TaskConfig(name: ""), "invalid_name"),
        (TaskConfig(name: " \u{200B}"), "invalid_name"),
        (TaskConfig(name: "tab\there"), "invalid_name"),
        (TaskConfig(name: String(repeating: "x", count: 65)), "invalid_name"),
        (TaskConfig(name: "Zero", workSeconds: 0), "invalid_duration"),
        (TaskConfig(name: "Neg", goal: -1), "invalid_value"),
        (TaskConfig(name: "Late", reminderMinute: 24 * 60), "invalid_value"),
    ]
    for (task, code) in cases {
        #expect(error { () throws(DiligenceError) in try store.addTask(task) }?.code.rawValue == code)
        var edited = task
        edited.id = 1
        #expect(error { () throws(DiligenceError) in try store.updateTask(edited) }?.code.rawValue == code)
    }
    #expect(
        try store.tasks().map {
            var t = $0
            t.uuid = ""
            t.id = 0
            return t
        } == TaskConfig.defaults)
}

@Test func namesAreStoredNormalizedAndOldNamesSurviveEdits() throws {
    let store = try Store(location: .memory)
    let added = try store.addTask(TaskConfig(name: " Cafe\u{301}\u{A0}"))
    #expect(Array(added.name.unicodeScalars) == Array("Caf\u{E9}".unicodeScalars))
    #expect(Array(try store.findTask("café").name.unicodeScalars) == Array("Caf\u{E9}".unicodeScalars))
    // A name stored before the rules (here written straight into the table) keeps working.
    try store.connection.run("UPDATE tasks SET name = ? WHERE id = ?", [.text("Old\u{200B}"), .integer(added.id)])
    var old = try store.findTask("Old\u{200B}")
    old.goal = 3
    #expect(try store.updateTask(old).name == "Old\u{200B}")
    old.name = "New\u{200B}"
    #expect(error { () throws(DiligenceError) in try store.updateTask(old) }?.code.rawValue == "invalid_name")
}

@Test func editAndRenameKeepTheSessions() throws {
    let store = try Store(location: .memory)
    var work = try store.findTask("Work")
    let recorded = try store.record(session(work, start: 100))
    work.name = "Deep work"
    work.workSeconds = 50 * 60
    work.goal = 4
    work.sound = "rain"
    #expect(try store.updateTask(work) == work)
    #expect(try store.task(id: work.id) == work)
    #expect(try store.tasks().first == work)
    var expected = recorded
    expected.taskName = "Deep work"
    #expect(try store.sessions() == [expected])
    #expect(error { () throws(DiligenceError) in try store.findTask("Work") }?.code.rawValue == "unknown_task")
}

@Test func renameChecksDuplicatesExceptItself() throws {
    let store = try Store(location: .memory)
    var study = try store.findTask("Study")
    study.name = "STUDY" // its own name in another case is fine
    #expect(try store.updateTask(study).name == "STUDY")
    study.name = "work"
    let failure = error { () throws(DiligenceError) in try store.updateTask(study) }
    #expect(failure == DiligenceError(.duplicateName, "A task named \"Work\" already exists."))
    #expect(try store.task(id: study.id)?.name == "STUDY")
}

@Test func updatingAnUnknownIDIsUnknownTask() throws {
    let store = try Store(location: .memory)
    let failure = error { () throws(DiligenceError) in try store.updateTask(TaskConfig(id: 42, name: "Ghost")) }
    #expect(failure?.code.rawValue == "unknown_task")
    #expect(try store.tasks().count == 7)
}

@Test func findTaskPrefersExactThenUniqueCaseInsensitive() throws {
    let store = try Store(location: .memory)
    #expect(try store.findTask("Study").name == "Study")
    #expect(try store.findTask("sTuDy").name == "Study")
    // Two names equal ignoring case can exist only from outside the API (NOCASE folds ASCII
    // only): insert them directly to check that the exact one wins and a guess is refused.
    try store.connection.run(
        "INSERT INTO tasks (name, description, color, work_seconds, short_break_seconds, long_break_seconds, long_break_every, breaks, autostart, focus_mode, goal) VALUES (?, '', 'blue', 1500, 300, 900, 4, 1, 'none', 0, 0)",
        ["Étude"]
    )
    try store.connection.run(
        "INSERT INTO tasks (name, description, color, work_seconds, short_break_seconds, long_break_seconds, long_break_every, breaks, autostart, focus_mode, goal) VALUES (?, '', 'blue', 1500, 300, 900, 4, 1, 'none', 0, 0)",
        ["étude"]
    )
    #expect(try store.findTask("étude").id == 9)
    #expect(try store.findTask("Étude").id == 8)
    #expect(error { () throws(DiligenceError) in try store.findTask("ÉTUDE") }?.code.rawValue == "unknown_task")
}

@Test func unknownTaskListsTheNames() throws {
    let store = try Store(location: .memory)
    let failure = error { () throws(DiligenceError) in try store.findTask("Writing") }
    #expect(
        failure
            == DiligenceError(
                .unknownTask,
                "No task named \"Writing\". Tasks: Work, Study, Exercise, Meditate, Wish, Daily, Errands."
            ))
}

@Test func removeTakesItsSessionsAndPlans() throws {
    let store = try Store(location: .memory)
    let work = try store.findTask("Work")
    let study = try store.findTask("Study")
    for start in [100.0, 5000, 9000] {
        _ = try store.record(session(study, start: start))
    }
    let kept = try store.record(session(work, start: 200, outcome: .skipped))
    try store.connection.run(
        "INSERT INTO plans (day, task_id) VALUES ('2025-03-03', ?), ('2025-03-04', ?)", [.integer(study.id), .integer(work.id)])

    #expect(try store.removeTask(id: study.id) == 3)
    #expect(try store.task(id: study.id) == nil)
    #expect(try store.sessions() == [kept])
    #expect(try store.connection.query("SELECT day, task_id FROM plans").map(\.values) == [["2025-03-04", .integer(work.id)]])
    #expect(try store.tasks().count == 6)
    #expect(try store.removeTask(id: try store.findTask("Wish").id) == 0)
    #expect(error { () throws(DiligenceError) in try store.removeTask(id: study.id) }?.code.rawValue == "unknown_task")
}

@Test func theLastTaskCannotBeRemoved() throws {
    let store = try Store(location: .memory)
    let tasks = try store.tasks()
    for task in tasks.dropLast() {
        _ = try store.removeTask(id: task.id)
    }
    let last = tasks.last!
    _ = try store.record(session(last, start: 1))
    let failure = error { () throws(DiligenceError) in try store.removeTask(id: last.id) }
    #expect(failure == DiligenceError(.lastTask, "Errands is the last task not archived; add another before removing it."))
    #expect(try store.tasks() == [last])
    #expect(try store.sessions().count == 1)
}

// MARK: Sessions

@Test func recordedSessionsRoundTripFieldByField() throws {
    let store = try Store(location: .memory)
    let work = try store.findTask("Work")
    let study = try store.findTask("Study")
    let input = WorkSession(
        taskID: study.id, taskName: "ignored: the join fills it", start: 1_700_000_123.25,
        end: 1_700_001_723.5, plannedSeconds: 1500, focusedSeconds: 1480, pauses: 3, outcome: .abandoned
    )
    let stored = try store.record(input)
    #expect(stored.id > 0)
    let later = try store.record(session(work, start: 1_700_009_000))
    let earlier = try store.record(session(work, start: 1_600_000_000, outcome: .skipped))

    let all = try store.sessions()
    #expect(all.map(\.id) == [earlier.id, stored.id, later.id]) // by start, not by id
    let read = all[1]
    #expect(read.id == stored.id)
    #expect(read.taskID == study.id)
    #expect(read.taskName == "Study")
    #expect(read.start == 1_700_000_123.25)
    #expect(read.end == 1_700_001_723.5)
    #expect(read.plannedSeconds == 1500)
    #expect(read.focusedSeconds == 1480)
    #expect(read.pauses == 3)
    #expect(read.outcome == .abandoned)

    #expect(try store.sessions(taskID: work.id).map(\.id) == [earlier.id, later.id])
    #expect(try store.sessions(from: 1_700_000_123.25).map(\.id) == [stored.id, later.id]) // from inclusive
    #expect(try store.sessions(to: 1_700_000_123.25).map(\.id) == [earlier.id]) // to exclusive
    #expect(try store.sessions(taskID: work.id, from: 1_650_000_000, to: 1_800_000_000).map(\.id) == [later.id])
    #expect(try store.sessions(taskID: 99).isEmpty)
}

@Test func recordingForAMissingTaskIsUnknownTask() throws {
    let store = try Store(location: .memory)
    let ghost = TaskConfig(id: 99, name: "Ghost")
    #expect(error { () throws(DiligenceError) in try store.record(session(ghost, start: 1)) }?.code.rawValue == "unknown_task")
    #expect(try store.sessions().isEmpty)
}

/// A session counts on the day it ends; one ending exactly at a day's start is the day before's.
@Test func completedCountTakesTheSessionsThatEndInTheDay() throws {
    let store = try Store(location: .memory)
    let work = try store.findTask("Work")
    let day = 86_400.0
    func count(_ from: Double, _ to: Double) throws -> Int {
        try store.completedCount(endingIn: StatisticsDay(date: CalendarDay(daysSince1970: Int(from / day)), start: from, end: to))
    }
    // Ends exactly at the start of the day: not counted (it belongs to the day before).
    _ = try store.record(session(work, start: day - 1500, length: 1500))
    // Ends inside.
    _ = try store.record(session(work, start: day + 100))
    // Ends exactly at the end of the day: counted (the day ends with it).
    _ = try store.record(session(work, start: 2 * day - 1500, length: 1500))
    // Ends just before the day.
    _ = try store.record(session(work, start: day - 1501, length: 1500))
    // Inside, but not completed.
    _ = try store.record(session(work, start: day + 5000, outcome: .skipped))
    _ = try store.record(session(work, start: day + 9000, outcome: .abandoned))

    #expect(try count(day, 2 * day) == 2)
    #expect(try count(day - 1, 2 * day + 1) == 3)
    #expect(try count(day - 2, day) == 2)
    #expect(try count(2 * day, 3 * day) == 0)
    #expect(try count(day, day) == 0)
}

@Test func lastUsedTaskIsTheTaskOfTheLatestEnd() throws {
    let store = try Store(location: .memory)
    #expect(try store.lastUsedTaskID() == nil)
    let work = try store.findTask("Work")
    let wish = try store.findTask("Wish")
    _ = try store.record(session(wish, start: 1000, length: 100)) // ends 1100
    #expect(try store.lastUsedTaskID() == wish.id)
    // Recorded later and started earlier, but ended later: it is the last used.
    _ = try store.record(session(work, start: 900, length: 500, outcome: .abandoned)) // ends 1400
    #expect(try store.lastUsedTaskID() == work.id)
    _ = try store.record(session(wish, start: 0, length: 10)) // ends 10
    #expect(try store.lastUsedTaskID() == work.id)
}

// MARK: Saved timer

@Test func savedTimerRoundTripsOverwritesAndClears() throws {
    let store = try Store(location: .memory)
    #expect(try store.loadTimer() == nil)
    let first = try savedTimer(try store.findTask("Study"), wall: 1_700_000_000.123, elapsed: 123.456789)
    #expect(first.state == .running && abs(first.elapsed - 123.456789) < 1e-6)
    try store.saveTimer(first, wall: 1_700_000_123.5, boottime: 4567.25, bootID: "3f2a-boot")
    var loaded = try store.loadTimer()
    #expect(loaded?.saved == first)
    #expect(loaded?.wall == 1_700_000_123.5)
    #expect(loaded?.boottime == 4567.25)
    #expect(loaded?.bootID == "3f2a-boot")

    let second = try savedTimer(try store.findTask("Wish"), wall: 1_700_100_000, elapsed: 60) { machine, now throws(DiligenceError) in
        _ = try machine.skip(at: now)
    }
    #expect(second.state == .pending && second != first)
    // A work phase's note is saved with the timer (issue 13).
    let noted = try savedTimer(try store.findTask("Study"), wall: 1_700_000_000, elapsed: 10) { machine, _ throws(DiligenceError) in
        try machine.setNote("chapter 3")
    }
    try store.saveTimer(noted, wall: 1, boottime: 2, bootID: "noted")
    #expect(try store.loadTimer()?.saved.note == "chapter 3")
    try store.saveTimer(second, wall: 2, boottime: 3, bootID: "other")
    loaded = try store.loadTimer()
    #expect(loaded?.saved == second)
    #expect(loaded?.bootID == "other")
    #expect(try store.connection.query("SELECT count(*) FROM timer_state").first?.int(0) == 1)

    try store.clearTimer()
    #expect(try store.loadTimer() == nil)
}

@Test func anUndecodableSavedTimerLoadsAsNil() throws {
    let store = try Store(location: .memory)
    try store.connection.run("INSERT INTO timer_state VALUES (1, '{\"state\": \"dancing\"}', 1, 2, 'b')")
    #expect(try store.loadTimer() == nil)
    // And the next save replaces it.
    let saved = TimerMachine().saved(at: Now(steady: 1, wall: 1))
    try store.saveTimer(saved, wall: 1, boottime: 1, bootID: "b")
    #expect(try store.loadTimer()?.saved == saved)
}

@Test func aTimerSavedByAnEarlierVersionStillRestores() throws {
    // Exactly what Foundation's JSONEncoder wrote for SavedTimer before the store kept its own
    // JSON (keys in another order, an absent optional, whole doubles without a fraction).
    let store = try Store(location: .memory)
    let earlier = """
        {"round":2,"state":"running","phase":"work","duration":1500,"elapsed":30.25,"pauses":1,\
        "phaseStartWall":1700000000.5,"task":{"id":1,"name":"Study","description":"","color":"blue",\
        "workSeconds":1500,"shortBreakSeconds":300,"longBreakSeconds":900,"longBreakEvery":4,\
        "breaks":true,"autostart":"none","focusMode":false,"goal":0,"sound":"rain"}}
        """
    try store.connection.run("INSERT INTO timer_state VALUES (1, ?, 1700000100.5, 2, 'b')", [.text(earlier)])
    let task = TaskConfig(id: 1, name: "Study", sound: "rain")
    #expect(
        try store.loadTimer()?.saved
            == SavedTimer(
                state: .running, phase: .work, task: task, round: 2, duration: 1500,
                elapsed: 30.25, pauses: 1, phaseStartWall: 1_700_000_000.5,
                phaseAge: 100)) // not kept then: the wall clock's 100 s since the start
}

@Test func aStoredSessionRoundTripsExactly() throws {
    // The spill file keeps sessions this way; `recordOnce` finds a spilled one by its exact start.
    let session = WorkSession(
        id: 7, taskID: 3, taskName: "Écrire \"vite\"", start: 1_700_000_000.1234567,
        end: 1_700_001_500.000001, plannedSeconds: 1500, focusedSeconds: 1499, pauses: 2,
        outcome: .abandoned)
    let text = JSON.array([session.storedJSON]).serialized
    let parsed = try JSON.parse(text).arrayValue?.compactMap(WorkSession.init(storedJSON:))
    #expect(parsed == [session])
    #expect(WorkSession(storedJSON: .object([("id", .int(1))])) == nil)
}

// MARK: Damaged, foreign and busy databases

@Test func aFileThatIsNotADatabaseIsCorruptAndUntouched() throws {
    let dir = TemporaryDirectory()
    defer { dir.remove() }
    let garbage = (0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }
    writeBytes(dir.database, garbage)
    chmod(dir.database, 0o644)
    let failure = error { () throws(DiligenceError) in try Store(location: .path(dir.database)) }
    #expect(failure?.code.rawValue == "database_corrupt")
    #expect(failure?.message.contains(dir.database) == true)
    #expect(failure?.message.contains("not modified") == true)
    #expect(readBytes(dir.database) == garbage)
    #expect(fileMode(dir.database) == 0o644)
}

@Test func aNewerSchemaIsRefused() throws {
    let dir = TemporaryDirectory()
    defer { dir.remove() }
    do {
        let db = try SQLite(location: .path(dir.database))
        try db.exec("PRAGMA user_version = \(Store.schemaVersion + 1)")
    }
    let failure = error { () throws(DiligenceError) in try Store(location: .path(dir.database)) }
    #expect(failure?.code.rawValue == "database_too_new")
    #expect(failure?.message.contains(dir.database) == true)
    let db = try SQLite(location: .path(dir.database))
    #expect(try db.query("SELECT count(*) FROM sqlite_master").first?.int(0) == 0)
}

@Test func aWriteLockedByAnotherConnectionIsDatabaseLockedInBoundedTime() throws {
    let dir = TemporaryDirectory()
    defer { dir.remove() }
    let store = try Store(location: .path(dir.database))
    let holder = try SQLite(location: .path(dir.database))
    try holder.exec("BEGIN EXCLUSIVE; INSERT INTO plans (day, task_id) VALUES ('2025-01-01', 1)")

    let clock = ContinuousClock()
    let began = clock.now
    let failure = error { () throws(DiligenceError) in try store.addTask(TaskConfig(name: "Blocked")) }
    let waited = clock.now - began
    #expect(failure?.code.rawValue == "database_locked")
    #expect(failure?.message.contains(dir.database) == true)
    #expect(waited >= .milliseconds(1500)) // the busy timeout waited
    #expect(waited < .seconds(10))
    let recordFailure = error { () throws(DiligenceError) in try store.record(session(try store.findTask("Work"), start: 1)) }
    #expect(recordFailure?.code.rawValue == "database_locked")

    try holder.exec("ROLLBACK")
    #expect(try store.addTask(TaskConfig(name: "Unblocked")).name == "Unblocked")
}

@Test func openingADatabaseLockedForReadingIsDatabaseLocked() throws {
    let dir = TemporaryDirectory()
    defer { dir.remove() }
    // A rollback-journal database in an exclusive transaction keeps out readers too.
    let holder = try SQLite(location: .path(dir.database))
    try holder.exec("PRAGMA journal_mode = DELETE; BEGIN EXCLUSIVE; CREATE TABLE other (x)")
    let clock = ContinuousClock()
    let began = clock.now
    let failure = error { () throws(DiligenceError) in try Store(location: .path(dir.database)) }
    #expect(failure?.code.rawValue == "database_locked")
    #expect(clock.now - began < .seconds(10))
    try holder.exec("ROLLBACK")
    #expect(try Store(location: .path(dir.database)).tasks().count == 7)
}

// MARK: Whose database (finding 7) and which one (finding 2)

@Test func anotherProgramsDatabaseIsRefusedAndLeftAsItWas() throws {
    let dir = TemporaryDirectory()
    defer { dir.remove() }
    do {
        // Another program's file: its own table, the default (rollback) journal.
        let other = try SQLite(location: .path(dir.database))
        try other.exec(
            "PRAGMA journal_mode = DELETE; CREATE TABLE photos (id INTEGER PRIMARY KEY, path TEXT); INSERT INTO photos (path) VALUES ('a.jpg')"
        )
    }
    let before = readFileBytes(dir.database)
    let failure = error { () throws(DiligenceError) in try Store(location: .path(dir.database)) }
    #expect(failure?.code.rawValue == "foreign_database")
    #expect(failure?.message.contains("photos") == true && failure?.message.contains(dir.database) == true, "\(failure?.message ?? "")")
    #expect(readFileBytes(dir.database) == before, "the file was modified")
    #expect(access(dir.database + "-wal", F_OK) != 0, "a WAL file was created beside it")
    // Another program's application id, even with diligence's table names: refused too.
    let second = TemporaryDirectory()
    defer { second.remove() }
    do {
        let other = try SQLite(location: .path(second.database))
        try other.exec(
            "PRAGMA application_id = 42; CREATE TABLE tasks (id INTEGER); CREATE TABLE sessions (id INTEGER); CREATE TABLE plans (day TEXT); CREATE TABLE timer_state (id INTEGER); PRAGMA user_version = 1"
        )
    }
    #expect(error { () throws(DiligenceError) in try Store(location: .path(second.database)) }?.code.rawValue == "foreign_database")
}

/// Another program's database renamed over diligence's, diligence's stale -wal left beside it
/// (issue 26): SQLite replays that log over the file, so the file read through it looked like
/// diligence's, and the next checkpoint would have overwritten the other program's pages.
@Test func anotherProgramsDatabaseWithAStaleWalBesideItIsRefusedAndBothLeftAsTheyWere() throws {
    let dir = TemporaryDirectory()
    defer { dir.remove() }
    var staleLog: [UInt8] = []
    do {
        let store = try Store(location: .path(dir.database))
        for i in 0..<8 { _ = try store.record(session(try store.findTask("Work"), start: 1000 + Double(i) * 3600)) }
        // Taken while it is open: a clean close copies the log into the file and removes it.
        staleLog = try #require(readBytes(dir.database + "-wal"))
    }
    #expect(staleLog.count > 4096)
    let other = dir.file("photos.db")
    do {
        let photos = try SQLite(location: .path(other))
        try photos.exec(
            "PRAGMA journal_mode = DELETE; CREATE TABLE photos (id INTEGER PRIMARY KEY, path TEXT); INSERT INTO photos (path) VALUES ('a.jpg')"
        )
    }
    #expect(rename(other, dir.database) == 0)
    writeBytes(dir.database + "-wal", staleLog)
    unlink(dir.database + "-shm")
    let before = try #require(readBytes(dir.database))

    let failure = error { () throws(DiligenceError) in try Store(location: .path(dir.database)) }
    #expect(failure?.code.rawValue == "foreign_database", "\(failure.map { "\($0)" } ?? "opened as diligence's")")
    #expect(failure?.message.contains("photos") == true && failure?.message.contains("-wal") == true, "\(failure?.message ?? "")")
    #expect(readBytes(dir.database) == before, "the other program's file was modified")
    #expect(readBytes(dir.database + "-wal") == staleLog, "the stale log was modified")
}

@Test func aDatabaseHasAnIdentityThatLastsAndOlderOnesGetOne() throws {
    let dir = TemporaryDirectory()
    defer { dir.remove() }
    let identity = try Store(location: .path(dir.database)).identity
    #expect(identity.count == 32 && identity.allSatisfy(\.isHexDigit))
    #expect(try Store(location: .path(dir.database)).identity == identity)
    let other = TemporaryDirectory()
    defer { other.remove() }
    #expect(try Store(location: .path(other.database)).identity != identity)
    // A schema-1 database (written before the identity existed): tasks kept, identity given.
    do {
        let db = try SQLite(location: .path(other.database))
        try db.exec(
            backToSchema6
                + """
                DROP TABLE database_info; DROP INDEX sessions_uuid; DROP INDEX tasks_uuid;
                ALTER TABLE sessions DROP COLUMN away_seconds; ALTER TABLE sessions DROP COLUMN reason; ALTER TABLE tasks DROP COLUMN away;
                ALTER TABLE sessions DROP COLUMN uuid; ALTER TABLE tasks DROP COLUMN uuid; ALTER TABLE tasks DROP COLUMN archived;
                ALTER TABLE sessions DROP COLUMN note; PRAGMA application_id = 0; PRAGMA user_version = 1
                """)
    }
    let migrated = try Store(location: .path(other.database))
    #expect(migrated.identity.count == 32)
    #expect(try migrated.tasks().count == 7)
    #expect(try migrated.tasks().allSatisfy { UUIDText.parse($0.uuid) != nil }, "schema 3 gave each task a UUID")
    #expect(try migrated.connection.query("PRAGMA application_id").first?.int64(0) == Int64(Store.applicationID))
}

// MARK: Archived tasks (issue 13, finding 2)

@Test func aDatabaseOfSchema3KeepsItsTasksNotArchived() throws {
    let dir = TemporaryDirectory()
    defer { dir.remove() }
    do {
        let s = try Store(location: .path(dir.database))
        _ = try s.record(session(try s.findTask("Work"), start: 1_000))
        try s.connection.exec(
            backToSchema6
                + """
                ALTER TABLE sessions DROP COLUMN away_seconds; ALTER TABLE sessions DROP COLUMN reason; ALTER TABLE tasks DROP COLUMN away;
                ALTER TABLE tasks DROP COLUMN archived; ALTER TABLE sessions DROP COLUMN note; PRAGMA user_version = 3
                """)
    }
    let s = try Store(location: .path(dir.database))
    #expect(try s.connection.query("PRAGMA user_version").first?.int(0) == Store.schemaVersion)
    #expect(try s.tasks().count == 7 && s.tasks().allSatisfy { !$0.archived })
    #expect(try s.sessions().count == 1)
}

@Test func archivingKeepsTheSessionsAndTheLastActiveTaskStays() throws {
    let store = try Store(location: .memory)
    let tasks = try store.tasks()
    _ = try store.record(session(tasks[0], start: 1_000))
    let archived = try store.setArchived(id: tasks[0].id, true)
    #expect(archived.archived)
    #expect(try store.task(id: tasks[0].id)?.archived == true)
    #expect(try store.sessions().count == 1)
    #expect(try store.recordedTotals(taskID: tasks[0].id).sessions == 1)
    for task in tasks.dropFirst().dropLast() { _ = try store.setArchived(id: task.id, true) }
    let last = tasks.last!
    #expect(error { () throws(DiligenceError) in try store.setArchived(id: last.id, true) }?.code.rawValue == "last_task")
    #expect(error { () throws(DiligenceError) in try store.removeTask(id: last.id) }?.code.rawValue == "last_task")
    // An archived task can still be removed: the active one remains.
    #expect(try store.removeTask(id: tasks[0].id) == 1)
    // The active scope refuses an archived task by name, and a beginning prefers an active one.
    #expect(error { () throws(DiligenceError) in try store.findTask("Study", scope: .active) }?.code.rawValue == "task_archived")
    #expect(try store.findTask("Stu").name == "Study")
    #expect(try store.findTask("Err", scope: .active).name == "Errands")
}

@Test func savedTimerKeepsTheWorkPhasesInterruptions() throws {
    let store = try Store(location: .memory)
    var strict = try store.findTask("Study")
    strict.voidOnInterrupt = true
    let marked = try savedTimer(strict, wall: 1_700_000_000, elapsed: 10) { machine, now throws(DiligenceError) in
        _ = try machine.interrupt(.internal, note: "idea", at: now)
        _ = try machine.interrupt(.internal, at: now.adding(1))
    }
    #expect(marked.interruptions.count == 2)
    try store.saveTimer(marked, wall: 1, boottime: 2, bootID: "marked")
    let loaded = try #require(try store.loadTimer()).saved
    #expect(loaded == marked)
    #expect(loaded.interruptions.map(\.note) == ["idea", nil])
    #expect(loaded.task?.voidOnInterrupt == true)
}
