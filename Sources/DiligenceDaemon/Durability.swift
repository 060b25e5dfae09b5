import DiligenceCore
import DiligenceProtocol
import DiligenceStore
import DiligenceTime
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

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
        if unsaved.isEmpty && !timerSaveOwed {
            retryDelay = Self.firstRetryDelay
            retryTimer.schedule(deadline: .distantFuture)
            // Everything spilled at an exit for this database is in it now.
            spillWritten()
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
        if !written.isEmpty || timerSaveOwed {
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
        if let id = admission.recorded[0] {
            var recorded = session
            recorded.id = id
            return recorded
        }
        if let id = admission.alreadyRecorded[0] {
            let existing = try store.session(id: id)
            Log.info(
                "The \(session.outcome.rawValue) session of \(session.taskName) started at \(RFC3339.format(session.start)) is recorded already; not writing it twice."
            )
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
        if case .object(let members) = line { line = .object(members.filter { $0.0 != "id" } + [("reason", .string(error.message))]) }
        let text = line.serialized
        Log.error(
            "A session could not be recorded and was set aside in \(setAsidePath): \(error.message) Session: \(text)",
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
    ///
    /// `{"format": 2, "entries": [{"database": IDENTITY, "session": {...}}]}`: each session as
    /// `export --format jsonl` writes it (its task by name), with the identity of the database
    /// it belongs to (`Store.identity`). A start replays only its own database's entries and
    /// keeps the others in the file for theirs. The first format (a list of sessions naming
    /// their task by id) is still read: its sessions are replayed into whatever database opens
    /// next, by task name.
    var spillPath: String { Files.directory(of: paths.socket) + "/unsaved-sessions.json" }

    static let spillFormat = 2

    /// Writes the unsaved sessions, and the entries of other databases found at start, to
    /// `spillPath` (0600, fsynced, replacing it whole). Called by `stop`.
    func spillUnsaved() {
        guard !unsaved.isEmpty || !spilledElsewhere.isEmpty else { return }
        do {
            try writeSpill(unsaved)
            if !unsaved.isEmpty {
                Log.error(
                    "\(unsaved.count) session(s) could not be written to \(paths.database) before exiting; kept in \(spillPath) and recorded at the next start.",
                    fields: [("EVENT", "sessions_spilled")])
            }
        } catch {
            Log.error(
                "\(unsaved.count) session(s) could not be written to \(paths.database) nor kept in \(spillPath) (\(error)); they are lost: "
                    + unsaved.map(\.json.serialized).joined(separator: " "))
        }
    }

    /// Replaces the spill file by `mine` (of this database) and the other databases' entries;
    /// removes it when there are none.
    private func writeSpill(_ mine: [WorkSession]) throws(Errno) {
        let entries = mine.map { JSON.object([("database", .string(store.identity)), ("session", $0.json)]) } + spilledElsewhere
        if entries.isEmpty {
            if access(spillPath, F_OK) == 0 { unlink(spillPath) }
            return
        }
        try Files.replace(spillPath, with: JSON.object([("format", .int(Self.spillFormat)), ("entries", .array(entries))]).serialized)
    }

    /// Once every unsaved session is in the database, the spill file keeps only other
    /// databases' entries (or goes).
    func spillWritten() {
        guard access(spillPath, F_OK) == 0 else { return }
        do { try writeSpill([]) } catch {
            Log.warning(
                "\(spillPath) could not be rewritten (\(error)); its sessions are recorded, and a later start skips them as recorded already."
            )
        }
    }

    /// Takes back what an exit spilled for this database: each session's task is found by its
    /// name, and it goes through the one door like any other (`recordOnce`): one the database
    /// holds already (the previous daemon wrote it after all) is not written again, one that
    /// can never be recorded (its task is gone, the rules refuse it) is set aside without
    /// holding up the rest, and one that cannot be written now is retried by `retryTimer`.
    func loadSpilled() {
        let text: String?
        do { text = try Files.read(spillPath) } catch {
            Log.error("\(spillPath) cannot be read (\(error.message)); left as it is.")
            return
        }
        guard let text else { return }
        guard let spilled = try? JSON.parse(text) else {
            Log.error("\(spillPath) is not JSON; left as it is.")
            return
        }
        var taken: [JSON] = []
        if let list = spilled.arrayValue {
            // Format 1: sessions with their task's id, which another database gives another task.
            taken = list.map { item in
                guard let old = WorkSession(storedJSON: item) else { return item }
                return old.json
            }
        } else if spilled["format"]?.intValue == Int64(Self.spillFormat), let entries = spilled["entries"]?.arrayValue {
            for entry in entries {
                if entry["database"]?.stringValue == store.identity, let session = entry["session"] {
                    taken.append(session)
                } else {
                    spilledElsewhere.append(entry)
                }
            }
        } else {
            Log.error("\(spillPath) is not a spill file this diligence knows; left as it is.")
            return
        }
        guard !taken.isEmpty else { return }
        Log.info(
            "Taking back \(taken.count) session(s) kept in \(spillPath) at an exit\(spilledElsewhere.isEmpty ? "" : "; \(spilledElsewhere.count) of other databases stay there")."
        )
        for item in taken {
            switch WorkSession.exported(item) {
            case .success(let session):
                do {
                    var mine = session
                    let task = try store.findTask(session.taskName, wholeName: true)
                    mine.taskID = task.id
                    unsaved.append(mine)
                } catch {
                    setAside(session, because: error)
                }
            case .failure(let problem):
                Log.error(
                    "An entry of \(spillPath) is not a session (\(problem.message)); left out: \(item.serialized)",
                    fields: [("EVENT", "session_set_aside")])
            }
        }
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
