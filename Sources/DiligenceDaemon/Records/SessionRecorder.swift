import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceStore
import DiligenceTime
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// The one door every session of this daemon goes through on its way to the database, whatever
/// its source: the timer's phase ends (`recordOnce`, `record`), sessions entered by hand
/// (`admit`), an import (`commitImport`), and what an earlier run could not write (`replaySpilled`).
/// Each passes the store's door (`Store.admit`, the session rules) with the date window of now.
///
/// When storage fails (docs/reliability.md) the timer keeps timing: a session that cannot be
/// written waits in `unsaved` and is retried with back-off (`retryTimer`); at exit what still
/// waits is spilled to `spillPath` and replayed at the next start; a session the rules refuse
/// for good is set aside in `setAsidePath`. Runs on the daemon's queue, like everything else.
/// Who hears of what the recorder writes after its phase end was reported.
protocol RecorderListener: AnyObject {
    /// A session written by a retry or a replay: reported as `session_recorded`.
    func recordedLate(_ session: WorkSession)
    /// A retry ran; whether a save of the timer is still owed.
    func retryEnded(wroteSessions: Bool) -> Bool
}

final class SessionRecorder {
    /// The first retry of an unsaved session comes this many seconds after the failure.
    static let firstRetryDelay = 1.0
    /// Retries back off (doubling) up to this many seconds apart.
    static let maxRetryDelay = 60.0
    static let spillFormat = 2

    /// Hears of sessions written late and of each retry; the timer's driver, set by `connect`.
    private weak var listener: RecorderListener?

    /// `[timer] min_session` in seconds: the timer's work stopped or skipped after less focus
    /// is not recorded (`whyNotRecorded`).
    var minSession = SessionRules.defaultMinSession
    /// A drain of the session changes is scheduled after a commit (`Daemon.sessionsCommitted`).
    var changesScheduled = false

    private let store: Store
    private let clocks: Clocks
    private let database: String
    /// Sessions that could not be written yet (storage error), oldest first.
    private(set) var unsaved: [WorkSession] = []
    /// Entries of the spill file that belong to other databases: kept in it, never replayed here.
    private var spilledElsewhere: [JSON] = []
    /// Fires while something waits to be written; idle otherwise.
    private let retryTimer: DispatchSourceTimer
    /// Seconds until the next retry: doubles after each failure up to `maxRetryDelay`.
    private var retryDelay = SessionRecorder.firstRetryDelay

    /// Where sessions that can never be recorded are kept, one JSON line each (the session as
    /// `export --format jsonl` writes it, plus `reason`): beside the database, so they outlive
    /// a reboot; `diligencectl import` takes the file back once the reason is dealt with.
    let setAsidePath: String

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
    let spillPath: String

    init(store: Store, clocks: Clocks, paths: DaemonPaths, queue: DispatchQueue) {
        self.store = store
        self.clocks = clocks
        self.database = paths.database
        self.setAsidePath = paths.database + ".set-aside.jsonl"
        self.spillPath = Files.directory(of: paths.socket) + "/unsaved-sessions.json"
        retryTimer = DispatchSource.makeTimerSource(queue: queue)
        retryTimer.setEventHandler { [unowned self, queue] in
            dispatchPrecondition(condition: .onQueue(queue))
            self.retryTimerFired()
        }
        retryTimer.schedule(deadline: .distantFuture)
        retryTimer.activate()
    }

    /// The one listener of late writes; before it, no write may be retried.
    func connect(_ listener: RecorderListener) {
        self.listener = listener
    }

    private var connected: RecorderListener {
        guard let listener else { preconditionFailure("SessionRecorder.connect(_:) was not called before a retry") }
        return listener
    }

    /// At exit: writes what it can (unreported: the watchers are going), spills the rest.
    func stop() {
        writeUnsaved()
        spillUnsaved()
        retryTimer.cancel()
    }

    // MARK: The door

    /// Records a session of the timer (or one an earlier run could not write) through the
    /// store's one door (`Store.admit`, the session rules). A work phase is one session — same
    /// task, same start — so one recorded already is not written twice (after a storage fault a
    /// timer state that could not be saved is restored as it was, and completes the same phase
    /// again). A session the rules refuse can never be recorded (the wall clock read 1970, or
    /// stepped back onto a recorded session, or its task is gone): it is set aside (`setAside`)
    /// and nil is returned. Storage errors throw: the session is then retried.
    func recordOnce(_ session: WorkSession) throws(DiligenceError) -> WorkSession? {
        let admission = try admit([session], source: .timer, mode: .whatPasses)
        if let id = admission.recorded[0] {
            var recorded = session
            recorded.id = id
            recorded.uuid = admission.uuids[0] ?? session.uuid
            return recorded
        }
        if let id = admission.alreadyRecorded[0] {
            let existing = try store.session(id: id)
            Log.info(
                "The \(session.outcome.rawValue) session of \(session.taskName) started at \(RFC3339.format(session.start)) is recorded already; not writing it twice."
            )
            return existing
        }
        setAside(session, because: admission.refused.first?.error ?? DiligenceError(.invalidSession, "refused"))
        return nil
    }

    /// Why a session of the timer is not worth recording (`SessionRules.whyNotRecorded` under
    /// `min_session`), nil when it is. The driver asks before it records a phase end's sessions.
    func whyNotRecorded(_ session: WorkSession) -> String? {
        SessionRules.whyNotRecorded(session, minimum: minSession)
    }

    /// A session trimmed after it was recorded (time away discarded): written over the recorded
    /// one. Nil, with a log line, when it cannot be (removed meanwhile, or the database fails).
    func revise(_ revised: WorkSession) -> WorkSession? {
        do {
            guard let stored = try store.reviseSession(revised) else {
                Log.warning("The session of \(revised.taskName) to trim is no longer recorded; nothing to change.")
                return nil
            }
            return stored
        } catch {
            Log.error("Could not trim the session of \(revised.taskName): \(error.message)")
            return nil
        }
    }

    /// A timer session written on its own: nil when it waits in `unsaved` or was set aside.
    func record(_ session: WorkSession) -> WorkSession? {
        do {
            return try recordOnce(session)
        } catch {
            Log.error("Could not record a \(session.outcome.rawValue) session of \(session.taskName); will retry: \(error.message)")
            unsaved.append(session)
            return nil
        }
    }

    /// Sessions a write could not take (another process holds the database): they wait in
    /// `unsaved` for the retry timer.
    func keep(_ sessions: [WorkSession]) {
        unsaved += sessions
    }

    /// Any source's sessions through the store's door, in the date window of now. A new source
    /// of sessions comes in here (with a `SessionSource` of its own). `reserved`: the span of
    /// the running work phase, which no session from outside the timer may overlap.
    func admit(
        _ sessions: [WorkSession], source: SessionSource, reserved: (start: Double, end: Double, task: String)? = nil,
        mode: AdmissionMode
    ) throws(DiligenceError) -> Admission {
        try store.admit(sessions, source: source, window: DateWindow.sessions(now: clocks.now.wall), reserved: reserved, mode: mode)
    }

    /// A recorded session changed by hand (`history edit`), through the same door: the store
    /// checks it as if it were new, against the others and the running work (`reserved`).
    func replace(
        _ id: Int64, with edited: WorkSession, reserved: (start: Double, end: Double, task: String)?
    ) throws(DiligenceError) -> WorkSession {
        try store.replaceSession(id: id, with: edited, window: DateWindow.sessions(now: clocks.now.wall), reserved: reserved)
    }

    /// The last chunk of an import: every staged session through the door at once.
    func commitImport(
        _ id: Int64, reserved: (start: Double, end: Double, task: String)?, replaceTasks: Bool
    ) throws(DiligenceError) -> ImportResult {
        try store.commitImport(id, window: DateWindow.sessions(now: clocks.now.wall), reserved: reserved, replaceTasks: replaceTasks)
    }

    // MARK: Retrying unsaved sessions

    /// Writes the unsaved sessions, oldest first, until one fails, and reports each written one
    /// (`recordedLate`), as it would have been reported had the first write worked.
    @discardableResult
    func retry() -> [WorkSession] {
        let written = writeUnsaved()
        written.forEach(connected.recordedLate)
        return written
    }

    /// Writes the unsaved sessions, oldest first, until one fails; returns those written.
    @discardableResult
    private func writeUnsaved() -> [WorkSession] {
        var written: [WorkSession] = []
        while let session = unsaved.first {
            do {
                // Set aside (nil) or written: either way it no longer waits.
                if let stored = try recordOnce(session) {
                    written.append(stored)
                    Log.info(
                        "Recorded the delayed \(session.outcome.rawValue) session of \(session.taskName).",
                        fields: [("EVENT", "session_recorded"), ("TASK", session.taskName)])
                }
                unsaved.removeFirst()
            } catch {
                break
            }
        }
        return written
    }

    /// Arms `retryTimer` while sessions or the timer wait to be written; resets the back-off
    /// once nothing does.
    func scheduleRetry(timerSaveOwed: Bool) {
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

    private func retryTimerFired() {
        let written = retry()
        scheduleRetry(timerSaveOwed: connected.retryEnded(wroteSessions: !written.isEmpty))
    }

    // MARK: Sessions set aside

    /// Keeps `session` in `setAsidePath` (appended, fsynced) and logs it in full, so nothing is
    /// lost even when the file cannot be written.
    func setAside(_ session: WorkSession, because error: DiligenceError) {
        var line = session.json
        if case .object(let members) = line { line = .object(members.filter { $0.0 != "id" } + [("reason", .string(error.message))]) }
        let text = line.serialized
        Log.error(
            "A session could not be recorded and was set aside in \(setAsidePath): \(error.message) Session: \(text)",
            fields: [("EVENT", "session_set_aside"), ("CODE", error.code.rawValue), ("TASK", session.taskName)])
        do {
            try Files.append(text + "\n", to: setAsidePath)
        } catch {
            Log.error("\(setAsidePath) could not be written either (\(error)); the session is only in this log line.")
        }
    }

    // MARK: Sessions unsaved at exit

    /// Writes the unsaved sessions, and the entries of other databases found at start, to
    /// `spillPath` (0600, fsynced, replacing it whole).
    private func spillUnsaved() {
        guard !unsaved.isEmpty || !spilledElsewhere.isEmpty else { return }
        do {
            try writeSpill(unsaved)
            if !unsaved.isEmpty {
                Log.error(
                    "\(unsaved.count) session(s) could not be written to \(database) before exiting; kept in \(spillPath) and recorded at the next start.",
                    fields: [("EVENT", "sessions_spilled")])
            }
        } catch {
            Log.error(
                "\(unsaved.count) session(s) could not be written to \(database) nor kept in \(spillPath) (\(error)); they are lost: "
                    + unsaved.map(\.json.serialized).joined(separator: " "))
        }
    }

    /// Replaces the spill file by `mine` (of this database) and the other databases' entries;
    /// removes it when there are none.
    private func writeSpill(_ mine: [WorkSession]) throws(Errno) {
        let entries = mine.map { JSON.object([("database", .string(store.identity)), ("session", $0.json)]) } + spilledElsewhere
        if entries.isEmpty {
            Sys.unlink(spillPath)
            return
        }
        try Files.replace(spillPath, with: JSON.object([("format", .int(Self.spillFormat)), ("entries", .array(entries))]).serialized)
    }

    /// Once every unsaved session is in the database, the spill file keeps only other
    /// databases' entries (or goes).
    private func spillWritten() {
        guard Sys.exists(spillPath) else { return }
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
    func replaySpilled() {
        guard let taken = readSpill(), !taken.isEmpty else { return }
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
        retry()
        // At start-up nothing of the timer is owed yet.
        scheduleRetry(timerSaveOwed: false)
    }

    /// This database's spilled sessions in the export shape (other databases' entries go to
    /// `spilledElsewhere`); nil when there is no spill file or it cannot be read (logged).
    private func readSpill() -> [JSON]? {
        let text: String?
        do { text = try Files.read(spillPath) } catch {
            Log.error("\(spillPath) cannot be read (\(error.message)); left as it is.")
            return nil
        }
        guard let text else { return nil }
        guard let spilled = try? JSON.parse(text) else {
            Log.error("\(spillPath) is not JSON; left as it is.")
            return nil
        }
        if let list = spilled.arrayValue {
            // Format 1: sessions with their task's id, which another database gives another task.
            return list.map { item in WorkSession(storedJSON: item)?.json ?? item }
        }
        guard spilled["format"]?.intValue == Int64(Self.spillFormat), let entries = spilled["entries"]?.arrayValue else {
            Log.error("\(spillPath) is not a spill file this diligence knows; left as it is.")
            return nil
        }
        var taken: [JSON] = []
        for entry in entries {
            if entry["database"]?.stringValue == store.identity, let session = entry["session"] {
                taken.append(session)
            } else {
                spilledElsewhere.append(entry)
            }
        }
        return taken
    }
}
