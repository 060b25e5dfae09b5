import DiligenceCore
import DiligenceProtocol
import DiligenceStore
import DiligenceTime
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

// Opening the database at start: a damaged file is moved aside, never overwritten, and one
// daemon holds each database. What happens when a write fails later is SessionRecorder's.

extension Daemon {
    /// Opens the store at `path`. A file SQLite calls corrupt (or not a database at all) is
    /// renamed aside, never overwritten, together with its -wal and -shm files, and a fresh
    /// database is created: the timer keeps working, and the error names the kept file so the
    /// user can recover it (`sqlite3 FILE .recover`).
    static func openStore(_ path: String, wall: Double) throws(DiligenceError) -> (store: Store, keptAside: String?) {
        do {
            return (try Store(location: .path(path)), nil)
        } catch  where error.code == "database_corrupt" {
            let aside = path + ".corrupt-" + RFC3339.compactUTC(wall)
            guard rename(path, aside) == 0 else {
                throw DiligenceError(
                    "database_corrupt", "\(error.message) Moving it aside to \(aside) failed too: \(String(cString: strerror(errno))).")
            }
            for suffix in ["-wal", "-shm"] where access(path + suffix, F_OK) == 0 {
                _ = rename(path + suffix, aside + suffix)
            }
            Log.error(
                "The database \(path) is damaged or not a diligence database; it was kept as \(aside) and a new one was started. "
                    + "Recover what it holds with `sqlite3 \(aside) .recover`.",
                fields: [("EVENT", "database_corrupt"), ("KEPT_AS", aside)])
            return (try Store(location: .path(path)), aside)
        }
    }
}

/// This daemon's hold on its database's lock (`DatabaseLock`): taken at start, before the
/// database is opened, and kept until the daemon exits. A second daemon on the same database
/// stops at once, naming the database and the running daemon's pid and socket: two daemons
/// would run the same phase twice (hooks, notifications) and race on every write.
final class HeldDatabaseLock {
    private var fd: Int32 = -1
    let path: String

    init(database: String, socket: String) throws(DiligenceError) {
        path = DatabaseLock.path(forDatabase: database)
        // Close-on-exec: a hook or a sound player must not carry the lock past the daemon.
        var descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if descriptor < 0 && (errno == EROFS || errno == EACCES) {
            // An existing lock file in a directory that cannot be written still locks.
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
        }
        guard descriptor >= 0 else {
            throw DiligenceError(
                "storage_error",
                "Cannot create \(path), the lock that keeps a second diligenced off the database \(database): \(String(cString: strerror(errno))). Check that its directory is writable."
            )
        }
        // A child process between fork and exec holds a copy of a descriptor for a moment (and
        // with it a lock just released): a lock still held after a quarter second is a daemon's.
        var attempts = 0
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK && attempts < 25 {
            attempts += 1
            usleep(10_000)
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            Sys.close(descriptor)
            guard reason == EWOULDBLOCK else {
                throw DiligenceError("storage_error", "Cannot lock \(path): \(String(cString: strerror(reason))).")
            }
            let holder = DatabaseLock.holder(ofDatabase: database)
            let who = holder.map { " (pid \($0.pid), socket \($0.socket))" } ?? ""
            throw DiligenceError(
                "already_running",
                "Another diligenced is already running\(who) on the database \(database); a second one would run every phase twice. "
                    + (holder.map { "Talk to it with `diligencectl --socket \($0.socket)`, or stop it first." } ?? "Stop it first."))
        }
        fd = descriptor
        let text = Array(DatabaseLock.contents(pid: getpid(), socket: socket).utf8)
        if ftruncate(fd, 0) == 0 {
            _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        }
    }

    /// Lets the next daemon have the database (the kernel also does this when the process ends).
    func release() {
        guard fd >= 0 else { return }
        Sys.close(fd)
        fd = -1
    }

    deinit { release() }
}
