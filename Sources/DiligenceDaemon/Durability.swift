#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import DiligenceCore
import DiligenceStore

// What the daemon does when storage fails (docs/reliability.md): it keeps timing, keeps the
// sessions it could not write in memory, retries them with back-off, and never overwrites a
// damaged database.

extension Daemon {
    /// The first retry of an unsaved session comes this many seconds after the failure.
    static let firstRetryDelay = 1.0
    /// Retries back off (doubling) up to this many seconds apart.
    static let maxRetryDelay = 60.0

    // MARK: Retrying unsaved sessions

    /// Arms `retryTimer` while sessions wait to be written; resets the back-off once none do.
    func scheduleRetryIfNeeded() {
        if unsaved.isEmpty {
            retryDelay = Self.firstRetryDelay
            retryTimer.schedule(deadline: .distantFuture)
            return
        }
        retryTimer.schedule(deadline: .now() + retryDelay, leeway: .milliseconds(100))
        retryDelay = min(retryDelay * 2, Self.maxRetryDelay)
    }

    /// Writes what it can and reports each written session to the watchers, as it would have
    /// been reported had the first write worked.
    func retryTimerFired() {
        let now = clocks.now
        let written = retryUnsaved()
        for session in written {
            broadcast("session_recorded", now: now, extra: [("session", session.json)])
        }
        if !written.isEmpty { Systemd.notify("STATUS=\(statusLine(at: now))") }
        scheduleRetryIfNeeded()
    }

    // MARK: Opening the database

    /// Opens the store at `path`. A file SQLite calls corrupt (or not a database at all) is
    /// renamed aside, never overwritten, together with its -wal and -shm files, and a fresh
    /// database is created: the timer keeps working, and the error names the kept file so the
    /// user can recover it (`sqlite3 FILE .recover`).
    static func openStore(_ path: String, wall: Double) throws(DiligenceError) -> (store: Store, keptAside: String?) {
        do {
            return (try Store(location: .path(path)), nil)
        } catch where error.code == "database_corrupt" {
            let aside = path + ".corrupt-" + timestamp(wall)
            guard rename(path, aside) == 0 else {
                throw DiligenceError("database_corrupt", "\(error.message) Moving it aside to \(aside) failed too: \(String(cString: strerror(errno))).")
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

    /// `20261129T184900Z`: UTC, sortable, safe in a file name.
    static func timestamp(_ wall: Double) -> String {
        var t = time_t(wall.rounded(.down))
        var parts = tm()
        gmtime_r(&t, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }
}
