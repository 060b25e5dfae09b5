import CLinux
import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceStore
import DiligenceTime
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// The running daemon: owns the timer machine, the store and the control server, and drives
/// the machine from one serial queue (no locks anywhere: every handler runs on `queue`).
public final class Daemon: TimerOutlet {
    let paths: DaemonPaths
    let queue = DispatchQueue(label: "diligenced")
    var config: DaemonConfig {
        didSet {
            records.stats.dayStartsAt = config.dayStartsAt
            records.recorder.minSession = config.minSession
            driver.suspendPolicy = config.suspend
            sync.journal.configured = config.syncDirectory
            sync.journal.configuredName = config.deviceName
            records.timewarrior.settings = config.timewarrior
        }
    }
    /// What is wrong with the config file and the database, said in every status.
    var problems: Problems
    /// The sources of events made at start, closed at stop.
    var watches = Watches()
    /// Why the person is away, one reason per source; empty: here.
    var absence = AwayState()
    let store: Store
    /// The timer, its deadlines and its clocks: every change of it goes through `driver.changeTimer`.
    let driver: TimerDriver
    /// The sessions' one door, the reports, the exports and the hold on the database.
    var records: Records
    /// This device's journal in the sync folder and the other devices' merged in.
    let sync: SyncParts
    /// Notifications, hooks, sounds, do not disturb, reminders and the session's signals; made
    /// last in `init`, as each calls back into the daemon.
    private(set) var desktop: Desktop!
    private(set) var server: ControlServer!

    var clocks: Clocks { driver.clocks }
    var machine: TimerMachine { driver.machine }

    /// `clocks` is the system's unless a test supplies its own readings.
    public init(paths: DaemonPaths, clocks: Clocks = Clocks()) throws(DiligenceError) {
        self.paths = paths
        let loaded = Self.startupConfig(paths)
        self.config = loaded.config
        self.problems = Problems(config: loaded.problems)
        try Files.makeDirectories(Files.directory(of: paths.database))
        // Before anything is written beside the database or into it: one daemon per database.
        let lock = try HeldDatabaseLock(database: paths.database, socket: paths.socket)
        if case .some(let text) = loaded.accepted { Self.keepLastGood(text, paths) }
        let (store, keptAside) = try Self.openStore(paths.database, wall: clocks.wall)
        self.store = store
        // From now on a write that finds another process's lock fails at once instead of
        // holding the queue (and every status request behind it): a command waits for the
        // lock off the queue (`serve`), a phase end's sessions in `unsaved`.
        store.lockWait = 0
        let recorder = SessionRecorder(store: store, clocks: clocks, paths: paths, queue: queue)
        recorder.minSession = loaded.config.minSession
        self.driver = TimerDriver(queue: queue, clocks: clocks, store: store, recorder: recorder, suspendPolicy: loaded.config.suspend)
        let stats = StatsService(store: store, clocks: clocks, recorder: recorder, dayStartsAt: loaded.config.dayStartsAt)
        self.records = Records(
            recorder: recorder, stats: stats, exports: QueueBound(ExportReader(), on: DispatchQueue(label: "diligenced.export")),
            lock: lock, keptAside: keptAside,
            timewarrior: TimewarriorMirror(
                store: store, queue: queue, outboxPath: paths.database == ":memory:" ? "" : paths.database + ".timewarrior-outbox"))
        let journal = try SyncJournal(store: store, clocks: clocks, queue: queue)
        journal.configured = loaded.config.syncDirectory
        journal.configuredName = loaded.config.deviceName
        let merge = SyncMerge(
            store: store, recorder: recorder, journal: journal, clocks: clocks, queue: queue, today: { [stats] in stats.todayDate })
        self.sync = SyncParts(journal: journal, merge: merge)
        journal.connect(removals: { [unowned merge] in merge.history.removals })
        // A checkpoint runs after the work item whose commit filled the log (a phase end's
        // events, a command's answer), not inside that commit.
        store.connect(
            checkpoints: { [queue] checkpoint in
                let checkpoint = QueueBound(checkpoint, on: queue)
                queue.async { checkpoint.value() }
            },
            committed: { [unowned self] in
                self.sync.journal.committed()
                self.sessionsCommitted()
            },
            logLost: { [unowned self] rescued in self.writeAheadLogLost(rescued: rescued) })
        desktop = Desktop(
            notifier: Notifier(queue: queue) { [unowned self] message in self.ringBell(for: message) },
            hooks: Hooks(queue: queue), sound: Sound(queue: queue),
            focusGuard: FocusGuard(queue: queue) { [unowned self] record in self.saveFocusRecord(record) },
            reminders: Reminders(queue: queue) { [unowned self] task in self.remind(task) },
            logind: Logind(
                queue: queue, prepareForSleep: { [unowned self] sleeping in self.sleepSignal(sleeping) },
                presence: { [unowned self] signal in self.logindSignal(signal) }),
            screenSaver: ScreenSaverWatch(queue: queue) { [unowned self] active in self.presenceSignal(.screenSaver, away: active) },
            taskwarrior: TaskwarriorBridge(queue: queue))
    }

    // MARK: Start and stop

    /// Binds the socket, restores the saved timer, and tells systemd it is ready. Call on `queue`.
    public func start() throws(DiligenceError) {
        server = ControlServer(listening: try ListeningSocket.open(path: paths.socket), queue: queue) { [unowned self] connection, line in
            self.handleLine(line, from: connection)
        }
        server.allowRoot = config.allowRoot
        driver.connect(self)
        records.stats.connect(
            StatsService.Links(
                runningWork: { [unowned self] now in self.driver.runningWork(at: now) },
                tasksImported: { [unowned self] in self.tasksImported() },
                devices: { [unowned self] recorded in self.sync.merge.knownDevices(recorded: recorded) }))
        sync.merge.connect(merged: { [unowned self] folded in self.syncMerged(folded: folded) })
        precondition(store.isConnected, "the store's commits reach no journal: Store.connect was never called")
        precondition(sync.journal.isConnected && sync.merge.isConnected, "the sync journal or merge was never connected")
        sync.journal.write(now: clocks.wall)
        records.recorder.replaySpilled()
        records.timewarrior.settings = config.timewarrior
        driver.start()
        recoverFocus()
        // After the timer: what the first merge does to its task (renamed, removed, joined to
        // another's row) reaches it as any merge's does (`syncMerged`).
        sync.merge.follow(sync.journal.directory())
        try server.start()
        startWatchdog()
        desktop.logind.start()
        desktop.screenSaver.start()
        watches.clockJump = ClockJumpWatch(queue: queue) { [unowned self] in self.driver.deadlineReached() }
        if getenv("TZ") == nil {
            watches.zone = DirectoryWatch.timeZone(queue: queue) { [unowned self] in self.zoneChanged() }
        }
        watchDatabaseFile()
        desktop.reminders.reload(from: store, now: clocks.wall)
        driver.rearm()
        Log.info("diligenced \(ProtocolInfo.release) listening on \(paths.socket), database \(paths.database)")
        Systemd.notify("READY=1\nSTATUS=\(statusLine(at: clocks.now))\nMAINPID=\(Sys.processID)")
    }

    /// The signals the daemon handles. `main` blocks them before any thread exists, so they
    /// queue up from the first instant and are read from a signalfd on `queue`: none is lost
    /// between start-up and the moment a handler would have been installed.
    static let handledSignals: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    static func blockHandledSignals() {
        Sys.blockSignals(handledSignals)
    }

    /// SIGTERM/SIGINT stop the daemon, SIGHUP reloads the config. Only the executable installs
    /// these (tests run daemons inside the test process).
    func installSignalHandlers() {
        let fd: Int32
        do { fd = try Sys.signalDescriptor(Self.handledSignals) } catch {
            Log.error("signalfd failed (\(error.reason)); SIGTERM will end the daemon without saving.")
            return
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [unowned self] in
            dispatchPrecondition(condition: .onQueue(self.queue))
            while let signal = Sys.nextSignal(fd) {
                switch signal {
                case SIGHUP: _ = self.reload()
                default: self.shutdown()
                }
            }
        }
        source.activate()
        watches.signals = source
    }

    /// SIGTERM/SIGINT: tell systemd, stop, exit 0.
    func shutdown() -> Never {
        Systemd.notify("STOPPING=1\nSTATUS=" + tr("Stopping"))
        stop()
        exit(0)
    }

    /// Saves the timer, writes what is still unwritten, stops serving and removes the socket.
    /// Call on `queue`.
    public func stop() {
        let now = driver.observeClocks()
        let saved = driver.saveTimer(at: now)
        records.recorder.stop()
        server.stop()
        driver.stop()
        watches.watchdog?.cancel()
        desktop.reminders.cancel()
        watches.zone?.close()
        watches.database?.close()
        sync.merge.close()
        sync.journal.close()
        // An export or history under way finishes first (its answer is then not sent); its
        // connection closes.
        records.exportStop.set()
        records.exports.queue.sync { records.exports.value.close() }
        watches.clockJump?.close()
        desktop.sound.stopAll()
        desktop.focusGuard.leaveAtExit(settings: config.focus)
        desktop.notifier.close()
        desktop.logind.close()
        desktop.screenSaver.close()
        absence.idleTimer?.cancel()
        checkpointAtExit()
        // Only what happened: a timer that could not be saved is not said to be.
        if saved {
            Log.info("Stopped; timer state saved (\(machine.state.rawValue)).")
        } else {
            Log.error(
                "Stopped; the timer state (\(machine.state.rawValue)) could not be saved: the next start restores the one saved before.")
        }
        records.lock.release()
        // Last, just before the exit: a copy still under way cannot name its file after this.
        records.timewarrior.stop()
        for temporary in records.backupsUnderWay { DatabaseBackup.remove(temporary) }
    }

    /// After the last write: the database file alone holds everything (issue 26: after a clean
    /// exit every row sat in the -wal, and a backup that copied the file restored nothing).
    private func checkpointAtExit() {
        // A reader (sqlite3, a backup tool) may hold the log a moment: wait for it, once.
        store.lockWait = 2000
        do { try store.checkpointIntoFile() } catch {
            Log.error(
                "Could not copy the write-ahead log into \(paths.database) at exit (\(error.message)); keep \(paths.database)-wal with it: the next start takes it in.",
                fields: [("EVENT", "checkpoint_failed"), ("CODE", error.code.rawValue)])
        }
    }

    /// A write found the database's -wal removed or replaced (issue 26: the rows were lost at
    /// exit, nothing said). Logged once, and again when a rescue's outcome changes.
    func writeAheadLogLost(rescued: Bool) {
        let log = paths.database + "-wal"
        let problem =
            "The database's write-ahead log \(log) was removed while the daemon runs (or another file put in its place). "
            + (rescued
                ? "Every write since the last checkpoint was copied into \(paths.database), and each later write is too, until a restart writes a new log: restart the daemon (systemctl --user restart diligenced)."
                : "Copying its writes into \(paths.database) failed: do not stop the daemon; the next write tries again (a full disk? free some space).")
        guard problem != problems.database else { return }
        problems.database = problem
        Log.error(problem, fields: [("EVENT", "database_log_lost"), ("CODE", DiligenceError.Code.storageError.rawValue)])
    }

    /// Re-reads the config file (SIGHUP, `reload`): a bad file is reported and the settings in
    /// force kept; the running phase is untouched.
    /// Success holds whether a config file was read (none: the defaults apply).
    func reload() -> Result<Bool, DiligenceError> {
        let usec = UInt64(clocks.monotonic * 1e6)
        Systemd.notify("RELOADING=1\nMONOTONIC_USEC=\(usec)")
        defer { Systemd.notify("READY=1\nSTATUS=\(statusLine(at: clocks.now))") }
        do {
            let (new, text) = try Self.readConfig(paths)
            config = new
            problems.config = new.problems.map { "\(paths.config): \($0)" }
            Self.keepLastGood(text, paths)
            server.allowRoot = config.allowRoot
            desktop.sound.reset()
            desktop.reminders.reload(from: store, now: clocks.wall)
            sync.journal.write(now: clocks.wall)
            sync.merge.follow(sync.journal.directory())
            updateAmbientSound()
            // `[focus] do_not_disturb` changed during the work takes effect now, not at the next work.
            reconcileFocus(then: {})
            Log.info("Configuration reloaded from \(paths.config): \(config.summary).", fields: [("EVENT", "config_reloaded")])
            broadcast("config_reloaded", now: driver.observeClocks())
            return .success(text != nil)
        } catch {
            problems.config = [
                "Refused the config file, keeping the settings in force (\(config.summary)) until it is fixed and reloaded: \(error.message)"
            ]
            Log.error(
                "Configuration not reloaded, keeping the previous one (\(config.summary)): \(error.message)",
                fields: [("EVENT", "config_refused"), ("CODE", error.code.rawValue)])
            return .failure(error)
        }
    }

    private func startWatchdog() {
        guard let interval = Systemd.watchdogInterval() else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        // Pinged from the queue that runs everything else: a wedged queue stops the pings and
        // systemd restarts the daemon. The ping refreshes STATUS= at no extra wake-up.
        timer.setEventHandler { [unowned self] in
            dispatchPrecondition(condition: .onQueue(self.queue))
            Systemd.notify("WATCHDOG=1\nSTATUS=\(self.statusLine(at: self.clocks.now))")
        }
        timer.schedule(deadline: .now() + interval / 2, repeating: interval / 2, leeway: .milliseconds(Int(interval * 50)))
        timer.activate()
        watches.watchdog = timer
    }

    // MARK: Status

    /// Completed work sessions today (`StatsService.todayCompleted`).
    func todayCompleted(at now: Now) -> Int { records.stats.todayCompleted(at: now) }

    /// Today's statistics day: the one "today" of every command (`StatsService.today(at:)`).
    func today(at now: Now) -> StatisticsDay { records.stats.today(at: now) }

    /// Watches the database's name in its directory (inotify): the file removed, renamed away
    /// or replaced — a cleanup script's `rm -rf ~/.local/share/diligence` — is said at once,
    /// once, not at the next write. The writes themselves are refused by the store
    /// (`SQLite.fileGone`) whether or not this watch could be made.
    func watchDatabaseFile() {
        let name = Array(paths.database.split(separator: "/").last.map(String.init)?.utf8 ?? "".utf8)
        let mask = UInt32(IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE_SELF | IN_MOVE_SELF)
        watches.database = try? DirectoryWatch(
            directory: Files.directory(of: paths.database), mask: mask, queue: queue,
            matching: { $0.isEmpty || $0.elementsEqual(name) }, changed: { [unowned self] in self.checkDatabaseFile() })
    }

    /// Logs once that the database file is gone (`EVENT=database_gone`); again only after it
    /// came back.
    func checkDatabaseFile() {
        guard let gone = store.fileGone else {
            problems.databaseGone = false
            return
        }
        guard !problems.databaseGone else { return }
        problems.databaseGone = true
        Log.error(gone, fields: [("EVENT", "database_gone"), ("CODE", DiligenceError.Code.storageError.rawValue)])
        Systemd.notify("STATUS=\(statusLine(at: clocks.now))")
    }

    /// The time zone changed (`DirectoryWatch.timeZone`): local time, today and the reminders follow it.
    func zoneChanged() {
        LocalDay.reloadZone()
        records.stats.zoneChanged()
        // The kept status writes its times in the old zone's offset: its inputs do not say so.
        driver.statusAnswer = StatusAnswer()
        let now = clocks.now
        desktop.reminders.reload(from: store, now: clocks.wall)
        Log.info(
            "The time zone changed; it is now \(RFC3339.format(now.wall)) (\(LocalDay.zoneAbbreviation(at: now.wall))) and today is \(today(at: now).date).",
            fields: [("EVENT", "timezone_changed")])
        Systemd.notify("STATUS=\(statusLine(at: now))")
    }

    func statusJSON(at now: Now) -> JSON { statusInputs(at: now).json }

    /// What the status object shows at `now`.
    func statusInputs(at now: Now) -> StatusInputs {
        StatusInputs(
            timer: machine.status(at: now), todayCompleted: todayCompleted(at: now), configProblems: problems.config,
            databaseProblem: problems.database, focusActive: desktop.focusGuard.record != nil,
            focusBackend: desktop.focusGuard.activeBackend, countsUp: machine.run?.countsUp)
    }

    /// The answer line to `status`: the status object is encoded again only once it changed.
    func statusAnswer(id: JSON?, at now: Now) -> String {
        Response.ok(serialized: driver.statusAnswer.text(for: statusInputs(at: now)), id: id)
    }

    /// The one-line STATUS= text: `Focus · Writing · 12:34 left`, `Idle`; a config problem
    /// follows it (`… · ⚠ Refused the config file, …`) until a good file is loaded.
    func statusLine(at now: Now) -> String {
        let line = timerLine(at: now) + awayLine(at: now)
        guard let problem = problems.config.first else { return line }
        return "\(line) · ⚠ \(problem)"
    }

    private func timerLine(at now: Now) -> String {
        let s = machine.status(at: now)
        guard let task = s.task, let phase = s.phase else {
            let done = todayCompleted(at: now)
            return done > 0 ? trPlural("Idle · {count} completed today", "Idle · {count} completed today", count: done) : tr("Idle")
        }
        let clock = s.countsUp ? DurationText.clock(s.elapsedSeconds) : DurationText.clock(s.remainingSeconds)
        let left = s.countsUp ? tr("{clock} elapsed", ["clock": clock]) : tr("{clock} left", ["clock": clock])
        let values = ["task": task.name, "left": left]
        switch s.state {
        case .running: return tr("{phase} · {task} · {left}", values.merging(["phase": statusName(phase)]) { $1 })
        case .paused: return tr("Paused · {phase} · {task} · {left}", values.merging(["phase": statusName(phase)]) { $1 })
        case .pending:
            return phase == .work
                ? tr("Ready: work · {task} · waiting for start", values)
                : phase == .shortBreak
                    ? tr("Ready: short break · {task} · waiting for start", values)
                    : tr("Ready: long break · {task} · waiting for start", values)
        case .idle: return tr("Idle")
        }
    }

    /// The phase as STATUS= names it: `Focus`, `Overtime`, `Short break`, `Long break`.
    private func statusName(_ phase: Phase) -> String {
        switch phase {
        case .work: machine.run?.countsUp == .overtime ? tr("Overtime") : tr("Focus")
        case .shortBreak: tr("Short break")
        case .longBreak: tr("Long break")
        }
    }

    var hasWatchers: Bool { server.connections.values.contains(where: \.isWatcher) }

    /// Sends an event line to every watcher.
    func broadcast(_ name: String, now: Now, extra: [(String, JSON)] = []) {
        let watchers = server.connections.values.filter(\.isWatcher)
        guard !watchers.isEmpty else { return }
        let line = Response.event(name, status: statusJSON(at: now), extra: extra)
        for watcher in watchers { watcher.send(line) }
    }
}

extension DaemonConfig {
    /// The settings in effect, for log lines: `suspend=pause day_starts_at=00:00 allow_root=false`.
    var summary: String {
        "suspend=\(suspend.rawValue) day_starts_at=\(TimeOfDay.format(dayStartsAt)) allow_root=\(allowRoot)"
    }
}

extension String {
    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}

/// What is wrong under the running daemon, reported until it is put right.
struct Problems {
    /// Why the config file was refused, or the lines `on_bad_config = defaults` skipped; until a
    /// good file is loaded.
    var config: [String]
    /// The database's -wal removed: said until a restart.
    var database: String?
    /// The database file is gone (logged once; every write is refused meanwhile).
    var databaseGone = false
}

/// The sessions' one door, the reports and the exports, and the hold on the database.
struct Records {
    /// Writes, retries, spills and replays every session.
    let recorder: SessionRecorder
    /// Today, today's count, reports, the plan, history, export and import.
    let stats: StatsService
    /// Exports run off `queue` on a queue and a database connection of their own.
    let exports: QueueBound<ExportReader>
    /// Set at stop: an export or history waiting for its client gives up.
    let exportStop = ExportStop()
    /// Held from start to exit: a second daemon on the same database refuses to start.
    let lock: HeldDatabaseLock
    /// Where a damaged database found at start-up was moved (nil when none was).
    let keptAside: String?
    /// The temporary files of backups still being copied: removed at stop, so a backup cut
    /// short leaves nothing behind.
    var backupsUnderWay: Set<String> = []
    /// `[timewarrior]`: the history mirrored into Timewarrior, with its outbox.
    let timewarrior: TimewarriorMirror
}

struct SyncParts {
    let journal: SyncJournal
    let merge: SyncMerge
}

/// What the daemon does outward and the desktop session's signals it follows.
struct Desktop {
    let notifier: Notifier
    let hooks: Hooks
    let sound: Sound
    let focusGuard: FocusGuard
    let reminders: Reminders
    /// logind's sleep and wake signals, and the session's lock and idle hints.
    let logind: Logind
    let screenSaver: ScreenSaverWatch
    let taskwarrior: TaskwarriorBridge
}

/// The daemon's sources of events besides the socket and the timer: made at start, closed at stop.
struct Watches {
    var watchdog: DispatchSourceTimer?
    var signals: DispatchSourceRead?
    /// /etc/localtime, for a new time zone; nil when TZ names the zone.
    var zone: DirectoryWatch?
    /// The database's name in its directory.
    var database: DirectoryWatch?
    /// The kernel's word that the machine woke or the wall clock was set.
    var clockJump: ClockJumpWatch?
}

/// Why the person counts as away, one reason per source, and the timer that turns idleness
/// into away after `idle_after`.
struct AwayState {
    var reasons: Set<AwayReason> = []
    var idleTimer: DispatchSourceTimer?
}
