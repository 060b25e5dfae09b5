import CSQLite
import DiligenceCore
import Glibc

/// A copy of a database made with SQLite's online backup API (`sqlite3_backup_*`) from a
/// connection of its own: it reads one consistent snapshot while the daemon's connection goes
/// on writing (WAL: a reader never blocks the writer), so it may run off the daemon's queue.
public enum DatabaseBackup {
    /// What the copy holds, read back from it.
    public struct Summary: Sendable, Equatable {
        public var bytes: Int64
        public var sessions: Int
        public var tasks: Int
    }

    /// Copies the database at `source` into `target`, an empty file the caller created (so an
    /// existing file is never overwritten). The copy is a single file (rollback journal, no
    /// -wal), checked with `quick_check` and read back; on any failure `target` is removed.
    public static func copy(_ source: String, to target: String) throws(DiligenceError) -> Summary {
        do throws(DiligenceError) {
            try runBackup(source, to: target)
            let copy = try SQLite(location: .fileAlone(target))
            let check = try copy.query("PRAGMA quick_check").first?.string(0) ?? ""
            guard check == "ok" else {
                throw DiligenceError(.storageError, "The copy \(target) failed SQLite's check (\(check.prefix(200))); it was removed.")
            }
            var status = stat()
            let bytes = stat(target, &status) == 0 ? Int64(status.st_size) : 0
            return Summary(
                bytes: bytes,
                sessions: try copy.query("SELECT count(*) FROM sessions").first?.int(0) ?? 0,
                tasks: try copy.query("SELECT count(*) FROM tasks").first?.int(0) ?? 0)
        } catch {
            remove(target)
            throw error
        }
    }

    /// Removes a copy and the rollback journal SQLite may have left beside it.
    public static func remove(_ target: String) {
        unlink(target)
        unlink(target + "-journal")
    }

    /// How long a step waits for a lock before trying again, and how often it tries: the
    /// daemon's own checkpoint may hold the file a moment.
    static let busyPause: useconds_t = 10_000
    static let busyTries = 300

    private static func runBackup(_ source: String, to target: String) throws(DiligenceError) {
        let from = try open(source, flags: SQLITE_OPEN_READONLY)
        defer { sqlite3_close_v2(from) }
        let into = try open(target, flags: SQLITE_OPEN_READWRITE)
        defer { sqlite3_close_v2(into) }
        guard let backup = sqlite3_backup_init(into, "main", from, "main") else {
            throw failure(into, target, "could not start the copy")
        }
        // All pages in one step: one read transaction, so the copy is one moment's database.
        var rc = SQLITE_OK
        var tries = 0
        repeat {
            rc = sqlite3_backup_step(backup, -1)
            if rc == SQLITE_BUSY || rc == SQLITE_LOCKED {
                tries += 1
                usleep(busyPause)
            }
        } while (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED) && tries < busyTries
        let finished = sqlite3_backup_finish(backup)
        guard rc == SQLITE_DONE, finished == SQLITE_OK else {
            throw failure(into, target, "the copy stopped (SQLite error \(rc): \(String(cString: sqlite3_errstr(rc))))")
        }
        // The source's WAL mode came with its pages: a copy that is one file whatever opens it.
        guard sqlite3_exec(into, "PRAGMA journal_mode = DELETE", nil, nil, nil) == SQLITE_OK else {
            throw failure(into, target, "could not make the copy a single file")
        }
    }

    private static func open(_ path: String, flags: Int32) throws(DiligenceError) -> OpaquePointer? {
        var handle: OpaquePointer?
        let rc = sqlite3_open_v2(path, &handle, flags | SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK else {
            let error = SQLite.error(
                code: rc, detail: handle.flatMap { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc)), path: path)
            sqlite3_close_v2(handle)
            throw error
        }
        sqlite3_busy_timeout(handle, 2000)
        return handle
    }

    private static func failure(_ handle: OpaquePointer?, _ target: String, _ what: String) -> DiligenceError {
        let detail = handle.map { String(cString: sqlite3_errmsg($0)) } ?? ""
        let full = sqlite3_errcode(handle) & 0xff == SQLITE_FULL ? " The disk is full." : ""
        return DiligenceError(.storageError, "Backup to \(target): \(what) (SQLite: \(detail)).\(full) Nothing was kept there.")
    }
}
