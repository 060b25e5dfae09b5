#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import DiligenceCore
import DiligenceProtocol
import DiligenceStore
import DiligenceTime

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
            // Everything spilled at the last exit is in the database now.
            if access(spillPath, F_OK) == 0 { unlink(spillPath) }
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
        if !written.isEmpty {
            // The phase end that could not write them could not save the timer either.
            saveTimer(at: now)
            Systemd.notify("STATUS=\(statusLine(at: now))")
        }
        scheduleRetryIfNeeded()
    }

    /// Records a session of the timer (or one an earlier run could not write) through the
    /// store's one door (`Store.admit`, the session rules). A work phase is one session — same
    /// task, same start — so one recorded already is not written twice (after a storage fault a
    /// timer state that could not be saved is restored as it was, and completes the same phase
    /// again). A session the rules refuse can never be recorded (the wall clock read 1970, or
    /// stepped back onto a recorded session, or its task is gone): it is set aside (`setAside`)
    /// and nil is returned. Storage errors throw: the session is then retried.
    func recordOnce(_ session: WorkSession) throws(DiligenceError) -> WorkSession? {
        let admission = try store.admit([session], source: .timer, window: DateWindow.sessions(now: clocks.now.wall), mode: .whatPasses)
        if let recorded = admission.recorded[0] { return recorded }
        if let existing = admission.alreadyRecorded[0] {
            Log.info("The \(session.outcome.rawValue) session of \(session.taskName) started at \(RFC3339.format(session.start)) is recorded already; not writing it twice.")
            return existing
        }
        setAside(session, because: admission.refused.first?.error ?? DiligenceError("invalid_session", "refused"))
        return nil
    }

    // MARK: Sessions set aside

    /// Where sessions that can never be recorded are kept, one JSON line each (the session as
    /// `export --format jsonl` writes it, plus `reason`): beside the database, so they outlive
    /// a reboot; `diligencectl import` takes the file back once the reason is dealt with.
    var setAsidePath: String { paths.database + ".set-aside.jsonl" }

    /// Keeps `session` in `setAsidePath` (appended, fsynced) and logs it in full, so nothing is
    /// lost even when the file cannot be written.
    func setAside(_ session: WorkSession, because error: DiligenceError) {
        var line = session.json
        if case let .object(members) = line { line = .object(members.filter { $0.0 != "id" } + [("reason", .string(error.message))]) }
        let text = line.serialized
        Log.error("A session could not be recorded and was set aside in \(setAsidePath): \(error.message) Session: \(text)",
                  fields: [("EVENT", "session_set_aside"), ("CODE", error.code), ("TASK", session.taskName)])
        do {
            try Files.append(text + "\n", to: setAsidePath)
        } catch {
            Log.error("\(setAsidePath) could not be written either (\(error)); the session is only in this log line.")
        }
    }

    // MARK: Sessions unsaved at exit

    /// Where sessions still unwritten at exit wait for the next start: next to the socket, in
    /// `$XDG_RUNTIME_DIR` (a tmpfs, so not the full or broken disk the database is on). It
    /// survives a daemon restart, not a reboot.
    var spillPath: String { Files.directory(of: paths.socket) + "/unsaved-sessions.json" }

    /// Writes the unsaved sessions to `spillPath` (0600, fsynced). Called by `stop`.
    func spillUnsaved() {
        guard !unsaved.isEmpty else { return }
        do {
            try Files.replace(spillPath, with: JSON.array(unsaved.map(\.storedJSON)).serialized)
            Log.error("\(unsaved.count) session(s) could not be written to \(paths.database) before exiting; kept in \(spillPath) and recorded at the next start.", fields: [("EVENT", "sessions_spilled")])
        } catch {
            Log.error("\(unsaved.count) session(s) could not be written to \(paths.database) nor kept in \(spillPath) (\(error)); they are lost.")
        }
    }

    /// Takes back what the last exit spilled. A session the database already holds (the
    /// previous daemon wrote it after all) is not written again (`recordOnce`).
    func loadSpilled() {
        guard let text = try? Files.read(spillPath) else { return }
        let items = (try? JSON.parse(text))?.arrayValue
        let spilled = items?.compactMap(WorkSession.init(storedJSON:)) ?? []
        guard let items, spilled.count == items.count else {
            Log.error("\(spillPath) is not a list of sessions; left as it is.")
            return
        }
        unsaved += spilled
        Log.info("Took back \(unsaved.count) session(s) kept in \(spillPath) at the last exit.")
        for session in retryUnsaved() { broadcast("session_recorded", now: clocks.now, extra: [("session", session.json)]) }
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
            let aside = path + ".corrupt-" + RFC3339.compactUTC(wall)
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
}

