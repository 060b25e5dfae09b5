import CLinux
import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceStore
import DiligenceTime
import Dispatch

/// Who hears of the timer's changes and what they set off: the daemon's watchers, its
/// STATUS= line and its outward reactions (notifications, hooks, sounds).
protocol TimerOutlet: AnyObject {
    var hasWatchers: Bool { get }
    func broadcast(_ name: String, now: Now, extra: [(String, JSON)])
    func statusLine(at now: Now) -> String
    func react(to events: [TimerEvent], at now: Now)
    /// The session changes committed so far reach the watchers and hooks (`session_recorded` …).
    func publishSessionChanges(at now: Now)
}

/// Drives the pure `TimerMachine` in real time: owns the machine, the Dispatch timers of its
/// deadlines, the clocks' last reading (suspends, wall-clock steps) and the saved timer. Every
/// change goes through `changeTimer`, which records, publishes and reacts in that order.
final class TimerDriver: RecorderListener {
    private(set) var machine = TimerMachine()
    /// `[timer] suspend`: what a sleep of the machine means for a running phase.
    var suspendPolicy: SuspendPolicy
    /// The timer changed but could not be saved: the recorder's retry saves it.
    private(set) var timerSaveOwed = false

    private let queue: DispatchQueue
    let clocks: Clocks
    private let store: Store
    private let recorder: SessionRecorder
    private weak var outlet: TimerOutlet?

    /// Fires at the phase deadline (CLOCK_MONOTONIC, like DispatchTime).
    private let phaseTimer: DispatchSourceTimer
    /// The same deadline on the wall clock, a little later: a monotonic timer stalls across a
    /// suspend, a wall-clock one fires right after the resume, so the state is re-derived then.
    private let wakeTimer: DispatchSourceTimer
    /// One tick a second while a phase runs and someone watches.
    private let tickTimer: DispatchSourceTimer
    private var ticking = false
    /// The clocks at the last look: BOOTTIME − MONOTONIC growing since says the machine slept,
    /// the wall clock moving against BOOTTIME that it was set.
    private var lastReading: Clocks.Reading
    /// The clocks at logind's PrepareForSleep(true), until the sleep it announced is applied.
    var sleepAnnounced: Now?
    /// The last `status` answer's object, encoded.
    var statusAnswer = StatusAnswer()

    init(queue: DispatchQueue, clocks: Clocks, store: Store, recorder: SessionRecorder, suspendPolicy: SuspendPolicy) {
        self.queue = queue
        self.clocks = clocks
        self.store = store
        self.recorder = recorder
        self.suspendPolicy = suspendPolicy
        self.lastReading = clocks.reading
        phaseTimer = DispatchSource.makeTimerSource(queue: queue)
        wakeTimer = DispatchSource.makeTimerSource(queue: queue)
        tickTimer = DispatchSource.makeTimerSource(queue: queue)
        recorder.connect(self)
    }

    /// The one outlet of the timer's changes; before it, no change may happen.
    func connect(_ outlet: TimerOutlet) {
        self.outlet = outlet
    }

    private var connected: TimerOutlet {
        guard let outlet else { preconditionFailure("TimerDriver.connect(_:) was not called before the timer changed") }
        return outlet
    }

    /// Arms the timers' handlers and restores the saved timer.
    func start() {
        for timer in [phaseTimer, wakeTimer] {
            timer.setEventHandler { [unowned self] in self.deadlineReached() }
            timer.schedule(deadline: .distantFuture)
            timer.activate()
        }
        tickTimer.setEventHandler { [unowned self] in self.tick() }
        tickTimer.schedule(deadline: .distantFuture)
        tickTimer.activate()
        restoreTimer()
    }

    func stop() {
        for timer in [phaseTimer, wakeTimer, tickTimer] { timer.cancel() }
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
        let began = slept > 0.5 ? sleepBegan(now: now, slept: slept) : nil
        changeTimer(at: now) { machine in
            var events: [TimerEvent] = []
            if let began {
                events += machine.suspended(for: slept, began: began, policy: suspendPolicy, at: now)
            }
            return events + machine.tick(at: now)
        }
        return now
    }

    /// When the sleep just noticed began: logind's announcement unless it is stale (a sleep
    /// that failed without a PrepareForSleep(false)); logged.
    private func sleepBegan(now: Now, slept: Double) -> Now {
        var start = Now(steady: now.steady - slept, wall: now.wall - slept)
        // logind waits seconds, not minutes, after its announcement.
        if let announced = sleepAnnounced, start.steady - announced.steady < Self.announcedSleepWindow { start = announced }
        sleepAnnounced = nil
        Log.info(
            "The machine slept for \(DurationText.format(Int(slept.rounded()))) from \(RFC3339.format(start.wall)); applying the \(suspendPolicy.rawValue) policy.",
            fields: [("EVENT", "resumed_from_suspend"), ("SLEPT_SECONDS", String(Int(slept.rounded())))])
        return start
    }

    /// How long after logind's PrepareForSleep(true) the machine may go to sleep for the
    /// announcement to date that sleep (logind's longest delay is InhibitDelayMaxSec, 5 s).
    static let announcedSleepWindow = 60.0

    /// The once-a-second tick: after the last watcher has gone it disarms itself, so a daemon
    /// nobody watches stops waking up.
    private func tick() {
        dispatchPrecondition(condition: .onQueue(queue))
        let now = observeClocks()
        guard connected.hasWatchers else { return rearm() }
        connected.broadcast("tick", now: now, extra: [])
    }

    /// A phase deadline passed, or the clocks jumped (a wake, the wall clock set).
    func deadlineReached() {
        dispatchPrecondition(condition: .onQueue(queue))
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
        if let deadline = machine.nextDeadline, connected.hasWatchers {
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
    /// `change` on the machine, then records, publishes and reacts, and re-arms the timers. A
    /// change with no event of its own (a pending phase taking its task's new length) is pushed
    /// as `status`.
    @discardableResult
    func changeTimer<Failure: Error>(
        at now: Now, _ change: (inout TimerMachine) throws(Failure) -> [TimerEvent]
    ) throws(Failure) -> [TimerEvent] {
        // Flow work ended sooner than `[timer] min_session` is given up, as the recorder drops it.
        machine.minSession = recorder.minSession
        let before = machine
        let events = try change(&machine)
        // Nothing changed (most `status` requests): no write, no timer re-armed.
        guard !events.isEmpty || machine != before else { return events }
        let recording = record(events, at: now)
        publish(events, recording, at: now)
        connected.react(to: events, at: now)
        rearm()
        return events
    }

    /// What `record` wrote: the sessions and revisions as stored (nil: not written), and
    /// whether the commit's disk flush is still owed.
    private struct Recording {
        var sessions: [WorkSession?]
        var revisions: [WorkSession?]
        var unflushed: Bool
    }

    /// Writes a change's sessions, the sessions it trims (time away discarded) and the saved
    /// timer in one transaction, through the recorder; when that fails, each on its own, and
    /// what cannot be written waits for the retry.
    private func record(_ events: [TimerEvent], at now: Now) -> Recording {
        // Work stopped or skipped too soon is no session (`[timer] min_session`).
        let ended = events.compactMap { event -> WorkSession? in
            if case .sessionEnded(let session) = event, recorder.whyNotRecorded(session) == nil { return session }
            return nil
        }
        let revised = events.compactMap { event -> WorkSession? in
            if case .sessionRevised(let session) = event { return session }
            return nil
        }
        do {
            let (sessions, revisions) = try store.transaction(flush: .byCaller) {
                () throws(DiligenceError) -> ([WorkSession?], [WorkSession?]) in
                let stored = try ended.map { session throws(DiligenceError) in try recorder.recordOnce(session) }
                let trimmed = revised.map(recorder.revise)
                try writeTimer(at: now)
                return (stored, trimmed)
            }
            return Recording(sessions: sessions, revisions: revisions, unflushed: true)
        } catch  where error.code == .databaseLocked {
            // Another process holds the database: each write on its own would wait for it
            // again. The retry timer writes the sessions once it lets go.
            Log.error("Could not record \(ended.count) session(s) nor save the timer; will retry: \(error.message)")
            timerSaveOwed = true
            recorder.keep(ended)
            return Recording(sessions: ended.map { _ in nil }, revisions: revised.map(recorder.revise), unflushed: false)
        } catch {
            // Nothing of it was written: each on its own, so what can be stored is, and a
            // session that cannot waits in `unsaved`.
            let sessions = ended.map(recorder.record)
            let revisions = revised.map(recorder.revise)
            saveTimer(at: now)
            return Recording(sessions: sessions, revisions: revisions, unflushed: false)
        }
    }

    /// Tells the watchers, then the log and STATUS=, what the change did; only what was
    /// committed is reported. The disk flush of the commit follows the watchers' events (a
    /// millisecond later, before anything else runs on the queue), so a phase end reaches them
    /// as soon as it is recorded, not after the disk's slowest fsync.
    private func publish(_ events: [TimerEvent], _ recording: Recording, at now: Now) {
        // Sessions a failed write left waiting go in once the database takes writes again.
        if recording.unflushed { retryUnsaved() }
        var sessions = recording.sessions.makeIterator()
        var revisions = recording.revisions.makeIterator()
        var reported: [TimerEvent] = []
        for event in events {
            var extra: [(String, JSON)]
            switch event {
            case .sessionEnded(let ended):
                if let reason = recorder.whyNotRecorded(ended) {
                    reportNotRecorded(ended, reason: reason, at: now)
                    continue
                }
                // An unsaved session is reported once written; a written one is a session change.
                guard let written = sessions.next(), written != nil else { continue }
                connected.publishSessionChanges(at: now)
                reported.append(event)
                continue
            case .sessionRevised:
                // A session to trim that is no longer recorded is not reported.
                guard let session = revisions.next() ?? nil else { continue }
                extra = [("session", session.json)]
            case .back(let seconds, let offer): extra = [("away_seconds", .int(seconds)), ("offer", .bool(offer))]
            case .awayDiscarded(let seconds): extra = [("discarded_seconds", .int(seconds))]
            case .interrupted(let marked): extra = [("interruption", marked.json(wire: true))]
            default: extra = []
            }
            connected.broadcast(event.name, now: now, extra: extra)
            reported.append(event)
        }
        if events.isEmpty { connected.broadcast("status", now: now, extra: []) }
        // A revision's change (`discard_away`) follows its `session_revised`.
        connected.publishSessionChanges(at: now)
        if recording.unflushed {
            do { try store.flushJournal() } catch {
                Log.error("Recorded sessions may not be on disk yet: \(error.message)", fields: [("EVENT", "flush_failed")])
            }
        }
        reported.forEach(log)
        Systemd.notify("STATUS=\(connected.statusLine(at: now))")
        recorder.scheduleRetry(timerSaveOwed: timerSaveOwed)
    }

    private func reportNotRecorded(_ session: WorkSession, reason: String, at now: Now) {
        connected.broadcast("session_not_recorded", now: now, extra: [("session", session.json), ("reason", .string(reason))])
        Log.info(
            "Not recording the \(session.outcome.rawValue) session of \(session.taskName): \(reason).",
            fields: [("EVENT", "session_not_recorded"), ("TASK", session.taskName)])
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
            let why = s.reason == .left ? " (you left)" : s.reason == .interrupted ? " (voided by an external interruption)" : ""
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
        case .overtimeStarted:
            text = "Work of \(task) reached its bell and goes on in overtime."
        case .flowNudge(let seconds):
            text = "Flow work of \(task) reached \(DurationText.format(seconds)); nudged."
        case .interrupted(let i):
            text = "Marked an \(i.kind.rawValue) interruption of the work of \(task)."
            fields.append(("INTERRUPTION_KIND", i.kind.rawValue))
        }
        // A phase's events name it; a session's record names its task only.
        if case .sessionEnded = event {} else if let phase = Daemon.phase(of: event) { fields.append(("PHASE", phase.rawValue)) }
        Log.info(text, fields: fields)
    }

    // MARK: The saved timer

    /// Saves the timer so a restarted daemon resumes it (a few hundred bytes, only on changes).
    /// Whether it was saved; a failure is logged, and the retry timer saves it later.
    @discardableResult
    func saveTimer(at now: Now) -> Bool {
        do {
            try writeTimer(at: now)
            timerSaveOwed = false
            return true
        } catch {
            Log.error("Could not save the timer state; will retry: \(error.message)")
            timerSaveOwed = true
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
        saved.run?.task = current
        let sameBoot = loaded.bootID == Clocks.bootID && !loaded.bootID.isEmpty
        let downtime = max(0, sameBoot ? now.steady - loaded.boottime : now.wall - loaded.wall)
        machine = TimerMachine(restoring: saved, downtime: downtime, at: now)
        Log.info("Restored the \(machine.state.rawValue) \(machine.phase?.label ?? "") of \(current.name) after \(Int(downtime)) s away.")
        changeTimer(at: now) { $0.tick(at: now) }
    }

    /// The span of the work phase that is running or paused: no session entered by hand or
    /// imported may overlap it (the timer records it when it ends).
    func runningWork(at now: Now) -> (start: Double, end: Double, task: String)? {
        let saved = machine.saved(at: now)
        guard machine.phase == .work, machine.state == .running || machine.state == .paused, let task = saved.task else { return nil }
        return (saved.phaseStartWall, max(now.wall, saved.phaseStartWall), task.name)
    }

    // MARK: Sessions written late

    /// Writes what waits in the recorder now (the database took a write again, a sleep is
    /// coming), reporting each written session.
    func retryUnsaved() {
        recorder.retry()
    }

    func recordedLate(_ session: WorkSession) {
        connected.publishSessionChanges(at: clocks.now)
    }

    /// The recorder's retry ran: a phase end that could not write its session could not save
    /// the timer either, so it is saved now. Returns whether a save is still owed.
    func retryEnded(wroteSessions: Bool) -> Bool {
        if wroteSessions || timerSaveOwed {
            let now = clocks.now
            saveTimer(at: now)
            Systemd.notify("STATUS=\(connected.statusLine(at: now))")
        }
        return timerSaveOwed
    }
}
