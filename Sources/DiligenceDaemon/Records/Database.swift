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
        } catch  where error.code == .databaseCorrupt {
            let aside = path + ".corrupt-" + RFC3339.compactUTC(wall)
            do { try Sys.rename(path, to: aside) } catch let failure {
                throw DiligenceError(.databaseCorrupt, "\(error.message) Moving it aside to \(aside) failed too: \(failure.reason).")
            }
            for suffix in ["-wal", "-shm"] where Sys.exists(path + suffix) {
                try? Sys.rename(path + suffix, to: aside + suffix)
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
        let descriptor = try Self.openLockFile(path, database: database)
        // A child process between fork and exec holds a copy of a descriptor for a moment (and
        // with it a lock just released): a lock still held after a quarter second is a daemon's.
        var locked = false
        do {
            for attempt in 0...25 {
                if case .done = try Sys.lockExclusive(descriptor) {
                    locked = true
                    break
                }
                if attempt < 25 { Sys.sleep(seconds: 0.01) }
            }
        } catch {
            Sys.close(descriptor)
            throw DiligenceError(.storageError, "Cannot lock \(path): \(error.reason).")
        }
        guard locked else {
            Sys.close(descriptor)
            let holder = DatabaseLock.holder(ofDatabase: database)
            let who = holder.map { " (pid \($0.pid), socket \($0.socket))" } ?? ""
            throw DiligenceError(
                .alreadyRunning,
                "Another diligenced is already running\(who) on the database \(database); a second one would run every phase twice. "
                    + (holder.map { "Talk to it with `diligencectl --socket \($0.socket)`, or stop it first." } ?? "Stop it first."))
        }
        fd = descriptor
        Sys.overwrite(fd, with: Array(DatabaseLock.contents(pid: Sys.processID, socket: socket).utf8))
    }

    /// Opens (creating) the lock file; an existing one in a directory that cannot be written
    /// still locks, opened read-only.
    private static func openLockFile(_ path: String, database: String) throws(DiligenceError) -> Int32 {
        do {
            do { return try Sys.open(path, O_RDWR | O_CREAT, mode: 0o600) } catch  where error.code == EROFS || error.code == EACCES {
                return try Sys.open(path, O_RDONLY)
            }
        } catch {
            throw DiligenceError(
                .storageError,
                "Cannot create \(path), the lock that keeps a second diligenced off the database \(database): \(error.reason). Check that its directory is writable."
            )
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
