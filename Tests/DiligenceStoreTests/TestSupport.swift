import DiligenceCore
import DiligenceTestSupport
import Glibc

@testable import DiligenceStore

extension TemporaryDirectory {
    /// A path for a file in this directory.
    func file(_ name: String) -> String { path + "/" + name }

    /// The database path most store tests use.
    var database: String { file("diligence.sqlite3") }
}

/// The permission bits of `path`, nil when it does not exist.
func fileMode(_ path: String) -> mode_t? {
    var st = stat()
    guard stat(path, &st) == 0 else { return nil }
    return st.st_mode & 0o777
}

func readBytes(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { break }
        bytes += buffer[0..<n]
    }
    return bytes
}

func writeBytes(_ path: String, _ bytes: [UInt8]) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode_t(0o600))
    precondition(fd >= 0, "cannot create \(path)")
    defer { close(fd) }
    let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    precondition(written == bytes.count)
}

/// A session of `task` from `start` lasting `length` seconds, focused all of it unless `focused` says otherwise.
func session(
    _ task: TaskConfig, start: Double, length: Double = 1500, outcome: Outcome = .completed,
    pauses: Int = 0, focused: Int? = nil
) -> WorkSession {
    WorkSession(
        taskID: task.id, taskName: task.name, start: start, end: start + length,
        plannedSeconds: 1500, focusedSeconds: focused ?? Int(length), pauses: pauses, outcome: outcome
    )
}

/// Runs `body` and returns the `DiligenceError` it threw, nil when it threw nothing.
func error<T>(_ body: () throws(DiligenceError) -> T) -> DiligenceError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}

/// A saved timer as the daemon would produce it (SavedTimer has no public memberwise init):
/// `task`'s work phase started at `wall`, run for `elapsed` seconds, then `then` applied.
func savedTimer(
    _ task: TaskConfig, wall: Double, elapsed: Double,
    then: (inout TimerMachine, Now) throws(DiligenceError) -> Void = { _, _ in }
) throws -> SavedTimer {
    var machine = TimerMachine()
    let start = Now(steady: 1000, wall: wall)
    _ = try machine.start(task, at: start)
    let now = start.adding(elapsed)
    try then(&machine, now)
    return machine.saved(at: now)
}

/// SQL taking a database of this schema back to schema 10 (before flow sessions and overtime).
let withoutFlowColumns = ["mode", "break_ratio", "min_break", "max_break", "flow_nudge", "overtime"]
    .map { "ALTER TABLE tasks DROP COLUMN \($0);" }.joined(separator: " ")

/// SQL taking a database of this schema back to schema 6 (before sync), for migration tests
/// that make an older database out of a new one.
/// Takes out what the interruptions' migration added (sessions' interruptions, tasks' void_on_interrupt).
/// The partial indexes name columns that older schemas lack: they go first.
let withoutInterruptions =
    Store.dropFigureIndexes + "ALTER TABLE sessions DROP COLUMN interruptions; ALTER TABLE tasks DROP COLUMN void_on_interrupt; "

let backToSchema6 =
    Store.dropSessionNotes + "ALTER TABLE sessions DROP COLUMN segments; " + withoutInterruptions + withoutFlowColumns
    + " ALTER TABLE tasks DROP COLUMN dnd; DROP TRIGGER sync_removed_session; DROP TRIGGER sync_restored_session; DROP TRIGGER sync_removed_task;"
    + " DROP TRIGGER sync_restored_task; DROP TABLE sync_removed; "
    + ["sessions", "tasks", "plans"].flatMap { table in
        ["insert", "update", "delete"].map { "DROP TRIGGER sync_\(table)_\($0);" }
    }.joined(separator: " ")
    + " DROP TABLE sync_outbox; DROP TABLE sync_cursors; DROP TABLE sync_sessions; DROP TABLE sync_registers;"
    + " ALTER TABLE sessions DROP COLUMN device; DELETE FROM database_info WHERE name = 'device_id';"
