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
public final class Daemon {
    let paths: DaemonPaths
    let queue = DispatchQueue(label: "diligenced")
    /// Runs exports off `queue` (`serveExport`, Commands.swift) on a database connection of their own.
    let exports = DispatchQueue(label: "diligenced.export")
    /// That connection, opened at the first export; only ever used on `exports`.
    var exportStore: Store?
    let clocks: Clocks
    var config: DaemonConfig {
        didSet {
            stats.dayStartsAt = config.dayStartsAt
            recorder.minSession = config.minSession
            journal.configured = config.syncDirectory
            journal.configuredName = config.deviceName
        }
    }
    /// What is wrong with the config file (ConfigFile.swift): why it was refused, or the lines
    /// `on_bad_config = defaults` skipped. Reported in every status until a good file is loaded.
    var configProblems: [String]
    /// What is wrong with the database under the running daemon (its -wal removed), said in
    /// every status and in doctor until a restart.
    var databaseProblem: String?
    let store: Store
    /// The timer. Only `changeTimer` changes it (private(set): other files cannot), so every
    /// change is recorded, saved and pushed the same way.
    private(set) var machine = TimerMachine()
    private var listener: ListeningSocket!
    private(set) var server: ControlServer!

    /// Fires at the phase deadline (CLOCK_MONOTONIC, like DispatchTime).
    private let phaseTimer: DispatchSourceTimer
    /// The same deadline on the wall clock, a little later: a monotonic timer stalls across a
    /// suspend, a wall-clock one fires right after the resume, so the state is re-derived then.
    private let wakeTimer: DispatchSourceTimer
    /// One tick a second while a phase runs and someone watches.
    private let tickTimer: DispatchSourceTimer
    private var ticking = false
    private var watchdogTimer: DispatchSourceTimer?
    private var signalSource: DispatchSourceRead?
    /// Watches /etc/localtime for a new time zone; nil when TZ names the zone (ZoneWatch.swift).
    var zoneWatch: ZoneWatch?
    /// The database's name in its directory (`watchDatabaseFile`).
    var databaseWatch: ZoneWatch?
    /// The database file is gone (logged once; every write is refused meanwhile).
    var databaseGone = false
    /// The clocks at the last look (observeClocks): BOOTTIME − MONOTONIC growing since says
    /// the machine slept, the wall clock moving against BOOTTIME that it was set.
    private var lastReading: Clocks.Reading
    /// The clocks at logind's PrepareForSleep(true), until the sleep it announced is applied:
    /// that sleep began then (Sleep.swift).
    var sleepAnnounced: Now?
    /// The kernel's word that the machine woke or the wall clock was set (Clocks.swift).
    private var clockJumpWatch: ClockJumpWatch?
    /// The one door of every session: writes, retries, spills and replays (SessionRecorder.swift).
    let recorder: SessionRecorder
    /// Today, today's count, reports, the plan, history, export and import (StatsService.swift).
    let stats: StatsService
    /// This device's journal in the sync folder (SyncJournal.swift).
    let journal: SyncJournal
    /// The other devices' journals merged in (SyncMerge.swift).
    let merge: SyncMerge
    /// Where a damaged database found at start-up was moved (nil when none was).
    let databaseKeptAside: String?
    /// Held from start to exit: a second daemon on the same database refuses to start.
    let databaseLock: HeldDatabaseLock
    /// Outward effects (Reactions.swift): desktop notifications, hooks, sounds, daily reminders.
    lazy var notifier = Notifier(queue: queue) { [unowned self] message in self.ringBell(for: message) }
    lazy var hooks = Hooks(queue: queue)
    lazy var sound = Sound(queue: queue)
    lazy var reminders = Reminders(queue: queue) { [unowned self] task in self.remind(task) }
    /// logind's sleep and wake signals on the system bus (Sleep.swift), and the user's session's
    /// lock and idle hints (LogindSession.swift, Presence.swift).
    lazy var logind = Logind(
        queue: queue, prepareForSleep: { [unowned self] sleeping in self.sleepSignal(sleeping) },
        presence: { [unowned self] signal in self.logindSignal(signal) })
    /// The screen saver on the session bus (ScreenSaverWatch.swift, Presence.swift).
    lazy var screenSaver = ScreenSaverWatch(queue: queue) { [unowned self] active in self.presenceSignal(.screenSaver, away: active) }
    /// Why the person is away, one reason per source (Presence.swift); empty: here.
    var awayReasons: Set<AwayReason> = []
    /// Fires `idle_after` after the session went idle (a one-shot timer, armed only while idle).
    var idleTimer: DispatchSourceTimer?

    /// `clocks` is the system's unless a test supplies its own readings.
    public init(paths: DaemonPaths, clocks: Clocks = Clocks()) throws(DiligenceError) {
        self.paths = paths
        self.clocks = clocks
        let loaded = Self.startupConfig(paths)
        self.config = loaded.config
        self.configProblems = loaded.problems
        try Files.makeDirectories(Files.directory(of: paths.database))
        // Before anything is written beside the database or into it: one daemon per database.
        self.databaseLock = try HeldDatabaseLock(database: paths.database, socket: paths.socket)
        if case .some(let text) = loaded.accepted { Self.keepLastGood(text, paths) }
        (self.store, self.databaseKeptAside) = try Self.openStore(paths.database, wall: clocks.wall)
        // From now on a write that finds another process's lock fails at once instead of
        // holding the queue (and every status request behind it): a command waits for the
        // lock off the queue (`serve`), a phase end's sessions in `unsaved`.
        store.lockWait = 0
        // A checkpoint runs after the work item whose commit filled the log (a phase end's
        // events, a command's answer), not inside that commit.
        store.deferCheckpoints { [queue] checkpoint in
            // The store is only ever used on `queue`, where this runs too.
            nonisolated(unsafe) let checkpoint = checkpoint
            queue.async { checkpoint() }
        }
        self.phaseTimer = DispatchSource.makeTimerSource(queue: queue)
        self.wakeTimer = DispatchSource.makeTimerSource(queue: queue)
        self.tickTimer = DispatchSource.makeTimerSource(queue: queue)
        self.recorder = SessionRecorder(store: store, clocks: clocks, paths: paths, queue: queue)
        recorder.minSession = loaded.config.minSession
        self.stats = StatsService(store: store, clocks: clocks, recorder: recorder, dayStartsAt: loaded.config.dayStartsAt)
        self.journal = try SyncJournal(store: store, clocks: clocks, queue: queue)
        journal.configured = loaded.config.syncDirectory
        journal.configuredName = loaded.config.deviceName
        self.merge = SyncMerge(
            store: store, recorder: recorder, journal: journal, clocks: clocks, queue: queue, today: { [stats] in stats.todayDate })
        self.lastReading = clocks.reading
        journal.removals = { [unowned self] in self.merge.history.removals }
        store.onLogLost = { [unowned self] rescued in self.writeAheadLogLost(rescued: rescued) }
    }

    // MARK: Start and stop

    /// Binds the socket, restores the saved timer, and tells systemd it is ready. Call on `queue`.
    public func start() throws(DiligenceError) {
        listener = try ListeningSocket.open(path: paths.socket)
        server = ControlServer(listenFD: listener.fd, queue: queue) { [unowned self] connection, line in
            self.handleLine(line, from: connection)
        }
        server.allowRoot = config.allowRoot
        for timer in [phaseTimer, wakeTimer] {
            timer.setEventHandler { [unowned self] in self.deadlineReached() }
            timer.schedule(deadline: .distantFuture)
            timer.activate()
        }
        tickTimer.setEventHandler { [unowned self] in self.tick() }
        tickTimer.schedule(deadline: .distantFuture)
        tickTimer.activate()
        recorder.recordedLate = { [unowned self] session in
            self.broadcast("session_recorded", now: self.clocks.now, extra: [("session", session.json)])
        }
        recorder.saveOwedTimer = { [unowned self] in
            let now = self.clocks.now
            self.saveTimer(at: now)
            Systemd.notify("STATUS=\(self.statusLine(at: now))")
        }
        stats.runningWork = { [unowned self] now in self.runningWork(at: now) }
        stats.tasksImported = { [unowned self] in self.tasksImported() }
        store.onCommit = { [unowned self] in self.journal.committed() }
        journal.write(now: clocks.wall)
        merge.merged = { [unowned self] folded in self.syncMerged(folded: folded) }
        stats.devices = { [unowned self] recorded in self.merge.knownDevices(recorded: recorded) }
        recorder.replaySpilled()
        restoreTimer()
        // After the timer: what the first merge does to its task (renamed, removed, joined to
        // another's row) reaches it as any merge's does (`syncMerged`).
        merge.follow(journal.directory())
        try server.start()
        startWatchdog()
        logind.start()
        screenSaver.start()
        clockJumpWatch = ClockJumpWatch(queue: queue) { [unowned self] in self.deadlineReached() }
        if getenv("TZ") == nil {
            zoneWatch = ZoneWatch(queue: queue) { [unowned self] in self.zoneChanged() }
        }
        watchDatabaseFile()
        reminders.reload(from: store, now: clocks.wall)
        rearm()
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
        signalSource = source
    }

    /// SIGTERM/SIGINT: tell systemd, stop, exit 0.
    func shutdown() -> Never {
        Systemd.notify("STOPPING=1\nSTATUS=Stopping")
        stop()
        exit(0)
    }

    /// Saves the timer, writes what is still unwritten, stops serving and removes the socket.
    /// Call on `queue`.
    public func stop() {
        let now = observeClocks()
        let saved = saveTimer(at: now)
        recorder.stop()
        server.stop()
        listener.close()
        for timer in [phaseTimer, wakeTimer, tickTimer] { timer.cancel() }
        watchdogTimer?.cancel()
        reminders.cancel()
        zoneWatch?.close()
        databaseWatch?.close()
        merge.close()
        journal.close()
        // An export under way finishes first (its answer is then not sent); its connection closes.
        exports.sync { exportStore = nil }
        clockJumpWatch?.close()
        sound.stopAll()
        notifier.close()
        logind.close()
        screenSaver.close()
        idleTimer?.cancel()
        checkpointAtExit()
        // Only what happened: a timer that could not be saved is not said to be.
        if saved {
            Log.info("Stopped; timer state saved (\(machine.state.rawValue)).")
        } else {
            Log.error(
                "Stopped; the timer state (\(machine.state.rawValue)) could not be saved: the next start restores the one saved before.")
        }
        databaseLock.release()
    }

    /// After the last write: the database file alone holds everything (issue 26: after a clean
    /// exit every row sat in the -wal, and a backup that copied the file restored nothing).
    private func checkpointAtExit() {
        // A reader (sqlite3, a backup tool) may hold the log a moment: wait for it, once.
        store.lockWait = 2000
        do { try store.checkpointIntoFile() } catch {
            Log.error(
                "Could not copy the write-ahead log into \(paths.database) at exit (\(error.message)); keep \(paths.database)-wal with it: the next start takes it in.",
                fields: [("EVENT", "checkpoint_failed"), ("CODE", error.code)])
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
        guard problem != databaseProblem else { return }
        databaseProblem = problem
        Log.error(problem, fields: [("EVENT", "database_log_lost"), ("CODE", "storage_error")])
    }

    /// Re-reads the config file (SIGHUP, `reload`): a bad file is reported and the settings in
    /// force kept; the running phase is untouched.
    func reload() -> Result<Void, DiligenceError> {
        let usec = UInt64(clocks.monotonic * 1e6)
        Systemd.notify("RELOADING=1\nMONOTONIC_USEC=\(usec)")
        defer { Systemd.notify("READY=1\nSTATUS=\(statusLine(at: clocks.now))") }
        do {
            let (new, text) = try Self.readConfig(paths)
            config = new
            configProblems = new.problems.map { "\(paths.config): \($0)" }
            Self.keepLastGood(text, paths)
            server.allowRoot = config.allowRoot
            sound.reset()
            reminders.reload(from: store, now: clocks.wall)
            journal.write(now: clocks.wall)
            merge.follow(journal.directory())
            updateAmbientSound()
            Log.info("Configuration reloaded from \(paths.config): \(config.summary).", fields: [("EVENT", "config_reloaded")])
            broadcast("config_reloaded", now: observeClocks())
            return .success(())
        } catch {
            configProblems = [
                "Refused the config file, keeping the settings in force (\(config.summary)) until it is fixed and reloaded: \(error.message)"
            ]
            Log.error(
                "Configuration not reloaded, keeping the previous one (\(config.summary)): \(error.message)",
                fields: [("EVENT", "config_refused"), ("CODE", error.code)])
            return .failure(error)
        }
    }

    private func startWatchdog() {
        guard let interval = Systemd.watchdogInterval() else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        // Pinged from the queue that runs everything else: a wedged queue stops the pings and
        // systemd restarts the daemon. The ping refreshes STATUS= at no extra wake-up.
        timer.setEventHandler { [unowned self] in
            Systemd.notify("WATCHDOG=1\nSTATUS=\(self.statusLine(at: self.clocks.now))")
        }
        timer.schedule(deadline: .now() + interval / 2, repeating: interval / 2, leeway: .milliseconds(Int(interval * 50)))
        timer.activate()
        watchdogTimer = timer
    }

    // MARK: Time

    /// The clock reading for this moment, with the machine brought up to it: a suspend since
    /// the last look is applied (the suspend policy decides what the slept time means), and a
    /// deadline that passed before its timer fired is completed. Every command starts here, so
    /// a `stop` a moment after the deadline finds the phase completed, not abandoned.
    ///
    /// A suspend is dated at the moment it began: logind's PrepareForSleep(true) when it
    /// announced it, else this reading less the slept time — which is that moment because the
    /// first look after a wake is taken as the machine wakes (ClockJumpWatch), whichever path
    /// then handles it. A wall-clock step is logged here, once.
    @discardableResult
    func observeClocks() -> Now {
        let reading = clocks.reading
        let now = Now(steady: reading.boottime, wall: reading.wall)
        let slept = (reading.boottime - reading.monotonic) - (lastReading.boottime - lastReading.monotonic)
        let step = (reading.wall - reading.boottime) - (lastReading.wall - lastReading.boottime)
        // Slewing (NTP, at most 0.05 %) moves the wall clock a little between looks; a step more.
        if abs(step) > 1 + 0.0005 * (reading.monotonic - lastReading.monotonic) {
            Log.info(
                "The wall clock was set \(step > 0 ? "forward" : "back") by \(DurationText.format(Int(abs(step).rounded()))) (\(RFC3339.format(reading.wall)) now); "
                    + "phases keep their length, and sessions their start and length.",
                fields: [("EVENT", "wall_clock_set"), ("SECONDS", String(Int(step.rounded())))])
        }
        lastReading = reading
        var began: Now?
        if slept > 0.5 {
            var start = Now(steady: now.steady - slept, wall: now.wall - slept)
            // logind's announcement dates this sleep unless it is stale (a sleep that failed
            // without a PrepareForSleep(false)): logind waits seconds, not minutes, after it.
            if let announced = sleepAnnounced, start.steady - announced.steady < Self.announcedSleepWindow { start = announced }
            sleepAnnounced = nil
            began = start
            Log.info(
                "The machine slept for \(DurationText.format(Int(slept.rounded()))) from \(RFC3339.format(start.wall)); applying the \(config.suspend.rawValue) policy.",
                fields: [("EVENT", "resumed_from_suspend"), ("SLEPT_SECONDS", String(Int(slept.rounded())))])
        }
        changeTimer(at: now) { machine in
            var events: [TimerEvent] = []
            if let began {
                events += machine.suspended(for: slept, began: began, policy: config.suspend, at: now)
            }
            return events + machine.tick(at: now)
        }
        return now
    }

    /// How long after logind's PrepareForSleep(true) the machine may go to sleep for the
    /// announcement to date that sleep (logind's longest delay is InhibitDelayMaxSec, 5 s).
    static let announcedSleepWindow = 60.0

    /// The once-a-second tick: after the last watcher has gone it disarms itself, so a daemon
    /// nobody watches stops waking up.
    private func tick() {
        let now = observeClocks()
        guard server.connections.values.contains(where: \.isWatcher) else { return rearm() }
        broadcast("tick", now: now)
    }

    private func deadlineReached() {
        observeClocks()
        rearm()
    }

    /// Arms the phase timers at the machine's next deadline, and the tick timer while someone
    /// watches a running phase; disarms everything otherwise (an idle daemon never wakes up).
    func rearm() {
        let now = clocks.boottime
        if let deadline = machine.nextDeadline {
            let delay = max(0, deadline - now)
            phaseTimer.schedule(deadline: .now() + delay, leeway: .nanoseconds(0))
            wakeTimer.schedule(wallDeadline: .now() + delay + 0.25, leeway: .milliseconds(100))
        } else {
            phaseTimer.schedule(deadline: .distantFuture)
            wakeTimer.schedule(wallDeadline: .distantFuture)
        }
        let wantTicks = machine.nextDeadline != nil && server.connections.values.contains(where: \.isWatcher)
        if let deadline = machine.nextDeadline, wantTicks {
            // Tick when the remaining time crosses a whole second, so countdowns change on time.
            let remaining = deadline - now
            let first = remaining - remaining.rounded(.down) + 0.001
            tickTimer.schedule(deadline: .now() + first, repeating: 1.0, leeway: .milliseconds(5))
            ticking = true
        } else if ticking {
            tickTimer.schedule(deadline: .distantFuture)
            ticking = false
        }
    }

    // MARK: Changing the timer

    /// The one path for every change of the timer, whatever its cause (a command, a deadline, a
    /// suspend, a notification button, a task edited or removed, the restore at start-up): runs
    /// `change` on the machine, then records its sessions, saves the timer, pushes its events to
    /// the watchers, updates STATUS= and reacts (`apply`), and re-arms the timers. A change with
    /// no event of its own (a pending phase taking its task's new length) is pushed as `status`.
    @discardableResult
    func changeTimer<Failure: Error>(
        at now: Now, _ change: (inout TimerMachine) throws(Failure) -> [TimerEvent]
    ) throws(Failure) -> [TimerEvent] {
        let before = machine
        let events = try change(&machine)
        // Nothing changed (most `status` requests): no write, no timer re-armed.
        guard !events.isEmpty || machine != before else { return events }
        apply(events, at: now)
        rearm()
        return events
    }

    /// Records, saves, broadcasts and notifies what the machine did. Every session is committed
    /// before any answer or event reports it. The disk flush of that commit follows the events
    /// (a millisecond later, before anything else runs on the queue), so a phase end reaches
    /// the watchers as soon as it is recorded, not after the disk's slowest fsync
    /// (docs/performance.md, phase-end lateness; docs/reliability.md).
    private func apply(_ events: [TimerEvent], at now: Now) {
        // Work stopped or skipped too soon is no session (`[timer] min_session`): not recorded,
        // and said so to the watchers and the log instead of `session_recorded`.
        let ended = events.compactMap { event -> WorkSession? in
            if case .sessionEnded(let session) = event, recorder.tooShort(session) == nil { return session }
            return nil
        }
        var recorded: [WorkSession?]
        var unflushed = false
        do {
            // One transaction: a phase end's session and the saved timer are committed together.
            recorded = try store.transaction(flush: .byCaller) { () throws(DiligenceError) -> [WorkSession?] in
                var stored: [WorkSession?] = []
                for session in ended { stored.append(try recorder.recordOnce(session)) }
                try writeTimer(at: now)
                return stored
            }
            unflushed = true
        } catch  where error.code == "database_locked" {
            // Another process holds the database: each write on its own would wait for it
            // again. The retry timer writes the sessions once it lets go.
            Log.error("Could not record \(ended.count) session(s) nor save the timer; will retry: \(error.message)")
            recorder.timerSaveOwed = true
            recorder.keep(ended)
            recorded = ended.map { _ in nil }
        } catch {
            // Nothing of it was written: write each on its own, so what can be stored is, and a
            // session that cannot waits in `unsaved`.
            recorded = ended.map(recorder.record)
            saveTimer(at: now)
        }
        // Sessions a failed write left waiting go in once the database takes writes again.
        if unflushed { recorder.retry() }
        var sessions = recorded.makeIterator()
        var reported: [TimerEvent] = []
        for event in events {
            var extra: [(String, JSON)] = []
            if case .sessionEnded(let ended) = event {
                if let reason = recorder.tooShort(ended) {
                    broadcast("session_not_recorded", now: now, extra: [("session", ended.json), ("reason", .string(reason))])
                    Log.info(
                        "Not recording the \(ended.outcome.rawValue) session of \(ended.taskName): \(reason).",
                        fields: [("EVENT", "session_not_recorded"), ("TASK", ended.taskName)])
                    continue
                }
                // Only a committed session is reported; an unsaved one is reported once written.
                guard let session = sessions.next() ?? nil else { continue }
                extra = [("session", session.json)]
            }
            guard let more = presenceExtra(for: event) else { continue }
            broadcast(event.name, now: now, extra: extra + more)
            reported.append(event)
        }
        if events.isEmpty { broadcast("status", now: now) }
        if unflushed {
            do { try store.flushJournal() } catch {
                Log.error("Recorded sessions may not be on disk yet: \(error.message)", fields: [("EVENT", "flush_failed")])
            }
        }
        reported.forEach(log)
        Systemd.notify("STATUS=\(statusLine(at: now))")
        recorder.scheduleRetry()
        react(to: events, at: now)
    }

    private func log(_ event: TimerEvent) {
        let task = machine.task?.name ?? ""
        var fields: [(String, String)] = [("EVENT", event.name), ("TASK", task)]
        let text: String
        switch event {
        case .phaseStarted(let p): text = "Started \(p.label) of \(task)."
        case .phasePending(let p): text = "\(p.label.capitalizedFirst) of \(task) is ready; waiting for start."
        case .phaseCompleted(let p): text = "Completed \(p.label) of \(task)."
        case .paused(let p): text = "Paused \(p.label) of \(task)."
        case .resumed(let p): text = "Resumed \(p.label) of \(task)."
        case .stopped(let p): text = "Stopped \(p.label)."
        case .skipped(let p): text = "Skipped \(p.label) of \(task)."
        case .extended(let p, let seconds): text = "Extended \(p.label) of \(task) by \(DurationText.format(seconds))."
        case .sessionEnded(let s):
            let why = s.reason == .left ? " (you left)" : ""
            // "an abandoned", "a completed", "a skipped": the article follows the outcome's first sound.
            let article = s.outcome.rawValue.first.map { "aeiou".contains($0) } == true ? "an" : "a"
            text =
                "Recorded \(article) \(s.outcome.rawValue) session of \(s.taskName)\(why): \(DurationText.format(s.focusedSeconds)) focused."
            fields[1] = ("TASK", s.taskName)
        case .away:
            text = "Away: the person left the computer."
        case .back(let seconds, let offer):
            text = "Back after \(DurationText.format(seconds))\(offer ? "; the time away counted as work and may be discarded" : "")."
        case .awayDiscarded(let seconds):
            text = "Discarded \(DurationText.format(seconds)) away from the work of \(task)."
        case .sessionRevised(let s):
            text = "Trimmed the session of \(s.taskName) to the moment you left: \(DurationText.format(s.focusedSeconds)) focused."
            fields[1] = ("TASK", s.taskName)
        }
        // A phase's events name it; a session's record names its task only.
        if case .sessionEnded = event {} else if let phase = Self.phase(of: event) { fields.append(("PHASE", phase.rawValue)) }
        Log.info(text, fields: fields)
    }

    /// Saves the timer so a restarted daemon resumes it (a few hundred bytes, only on changes).
    /// Whether it was saved; a failure is logged, and the retry timer saves it later.
    @discardableResult
    func saveTimer(at now: Now) -> Bool {
        do {
            try writeTimer(at: now)
            recorder.timerSaveOwed = false
            return true
        } catch {
            Log.error("Could not save the timer state; will retry: \(error.message)")
            recorder.timerSaveOwed = true
            return false
        }
    }

    private func writeTimer(at now: Now) throws(DiligenceError) {
        if machine.state == .idle {
            try store.clearTimer()
        } else {
            try store.saveTimer(machine.saved(at: now), wall: now.wall, boottime: now.steady, bootID: Clocks.bootID)
        }
    }

    /// Rebuilds the machine from the saved timer: the phase ran on while the daemon was away.
    private func restoreTimer() {
        let now = clocks.now
        let loaded: (saved: SavedTimer, wall: Double, boottime: Double, bootID: String)?
        do { loaded = try store.loadTimer() } catch {
            Log.error("Could not read the saved timer, starting idle: \(error.message)")
            return
        }
        guard let loaded, var saved = Optional(loaded.saved), let taskID = saved.task?.id else { return }
        // The task may have changed or gone while the daemon was away.
        guard let current = try? store.task(id: taskID) else {
            Log.warning("The saved timer's task no longer exists; starting idle.")
            return
        }
        saved.task = current
        let sameBoot = loaded.bootID == Clocks.bootID && !loaded.bootID.isEmpty
        let downtime = max(0, sameBoot ? now.steady - loaded.boottime : now.wall - loaded.wall)
        machine = TimerMachine(restoring: saved, downtime: downtime, at: now)
        Log.info("Restored the \(machine.state.rawValue) \(machine.phase?.label ?? "") of \(current.name) after \(Int(downtime)) s away.")
        changeTimer(at: now) { $0.tick(at: now) }
    }

    // MARK: Status

    /// Completed work sessions today (`StatsService.todayCompleted`).
    func todayCompleted(at now: Now) -> Int { stats.todayCompleted(at: now) }

    /// Today's statistics day: the one "today" of every command (`StatsService.today(at:)`).
    func today(at now: Now) -> StatisticsDay { stats.today(at: now) }

    /// The span of the work phase that is running or paused: no session entered by hand or
    /// imported may overlap it (the timer records it when it ends).
    func runningWork(at now: Now) -> (start: Double, end: Double, task: String)? {
        let saved = machine.saved(at: now)
        guard machine.phase == .work, machine.state == .running || machine.state == .paused, let task = saved.task else { return nil }
        return (saved.phaseStartWall, max(now.wall, saved.phaseStartWall), task.name)
    }

    /// Watches the database's name in its directory (inotify): the file removed, renamed away
    /// or replaced — a cleanup script's `rm -rf ~/.local/share/diligence` — is said at once,
    /// once, not at the next write. The writes themselves are refused by the store
    /// (`SQLite.fileGone`) whether or not this watch could be made.
    func watchDatabaseFile() {
        let name = Array(paths.database.split(separator: "/").last.map(String.init)?.utf8 ?? "".utf8)
        let mask = UInt32(IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE_SELF | IN_MOVE_SELF)
        databaseWatch = try? ZoneWatch(
            directory: Files.directory(of: paths.database), mask: mask, queue: queue,
            matching: { $0.isEmpty || $0.elementsEqual(name) }, changed: { [unowned self] in self.checkDatabaseFile() })
    }

    /// Logs once that the database file is gone (`EVENT=database_gone`); again only after it
    /// came back.
    func checkDatabaseFile() {
        guard let gone = store.fileGone else {
            databaseGone = false
            return
        }
        guard !databaseGone else { return }
        databaseGone = true
        Log.error(gone, fields: [("EVENT", "database_gone"), ("CODE", "storage_error")])
        Systemd.notify("STATUS=\(statusLine(at: clocks.now))")
    }

    /// The time zone changed (ZoneWatch): local time, today and the reminders follow it.
    func zoneChanged() {
        LocalDay.reloadZone()
        stats.zoneChanged()
        let now = clocks.now
        reminders.reload(from: store, now: clocks.wall)
        Log.info(
            "The time zone changed; it is now \(RFC3339.format(now.wall)) (\(LocalDay.zoneAbbreviation(at: now.wall))) and today is \(today(at: now).date).",
            fields: [("EVENT", "timezone_changed")])
        Systemd.notify("STATUS=\(statusLine(at: now))")
    }

    func statusJSON(at now: Now) -> JSON {
        var status = machine.status(at: now).json(todayCompleted: todayCompleted(at: now))
        if case .object(var members) = status {
            members.append(("config_problems", .array(configProblems.map(JSON.string))))
            if let databaseProblem { members.append(("database_problem", .string(databaseProblem))) }
            status = .object(members)
        }
        return status
    }

    /// The one-line STATUS= text: `Focus · Writing · 12:34 left`, `Idle`; a config problem
    /// follows it (`… · ⚠ Refused the config file, …`) until a good file is loaded.
    func statusLine(at now: Now) -> String {
        let line = timerLine(at: now) + awayLine(at: now)
        guard let problem = configProblems.first else { return line }
        return "\(line) · ⚠ \(problem)"
    }

    private func timerLine(at now: Now) -> String {
        let s = machine.status(at: now)
        guard let task = s.task, let phase = s.phase else {
            let done = todayCompleted(at: now)
            return done > 0 ? "Idle · \(done) completed today" : "Idle"
        }
        let left = DurationText.clock(s.remainingSeconds)
        let name = phase == .work ? "Focus" : phase.label.capitalizedFirst
        switch s.state {
        case .running: return "\(name) · \(task.name) · \(left) left"
        case .paused: return "Paused · \(name) · \(task.name) · \(left) left"
        case .pending: return "Ready: \(phase.label) · \(task.name) · waiting for start"
        case .idle: return "Idle"
        }
    }

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
