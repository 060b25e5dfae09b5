import DiligenceTime

/// The timer's states (docs/protocol.md, `start` to `skip`, says what each command does in each).
public enum TimerState: String, Sendable {
    case idle, running, paused
    /// A phase is ready and waits for `start`.
    case pending
}

/// How a recorded work session ended.
public enum Outcome: String, CaseIterable, Sendable {
    case completed, skipped, abandoned
}

/// A reading of the clocks, as the core sees them. The core never reads a clock itself.
public struct Now: Sendable, Equatable {
    /// Seconds on a clock that no wall-clock step moves (CLOCK_BOOTTIME in the daemon).
    /// Every duration comes from it.
    public var steady: Double
    /// Seconds since 1970 on the wall clock: used only to date records.
    public var wall: Double

    public init(steady: Double, wall: Double) {
        self.steady = steady
        self.wall = wall
    }

    /// The same moment `seconds` later on both clocks.
    public func adding(_ seconds: Double) -> Now {
        Now(steady: steady + seconds, wall: wall + seconds)
    }
}

/// A work session as it is recorded (docs/protocol.md, "Sessions", lists the fields).
public struct WorkSession: Hashable, Sendable {
    /// Store id; 0 until stored.
    public var id: Int64
    public var taskID: Int64
    public var taskName: String
    /// Wall-clock seconds since 1970.
    public var start: Double
    public var end: Double
    public var plannedSeconds: Int
    /// Running time of the phase, pauses excluded.
    public var focusedSeconds: Int
    public var pauses: Int
    public var outcome: Outcome
    /// Seconds of the session the person was away (locked, idle, suspended), counted or not.
    public var awaySeconds: Int
    /// Why it ended, when not by its deadline or a command (nil).
    public var reason: EndReason?
    /// Its stable identifier (`UUIDText`); "" until it is recorded, when the store gives it one
    /// (a session read from an export keeps the one it has).
    public var uuid: String
    /// What the person noted on it (`SessionNote`); nil: no note.
    public var note: String?
    /// The id of the device that recorded it when another device did (merged from the sync
    /// folder, docs/sync.md); nil: this device.
    public var device: String?
    /// The interruptions marked on it (`interrupt`), in the order marked.
    public var interruptions: [Interruption]
    /// The stretches it was focused, in start order, summing to `focusedSeconds`.
    public var segments: [FocusSegment]

    /// `segments` nil: one segment of its focused time from its start (`FocusSegment.whole`).
    public init(
        id: Int64 = 0, taskID: Int64, taskName: String, start: Double, end: Double,
        plannedSeconds: Int, focusedSeconds: Int, pauses: Int, outcome: Outcome, uuid: String = "", note: String? = nil,
        awaySeconds: Int = 0, reason: EndReason? = nil, device: String? = nil, interruptions: [Interruption] = [],
        segments: [FocusSegment]? = nil
    ) {
        self.id = id
        self.interruptions = interruptions
        self.segments = segments ?? FocusSegment.whole(start: start, focused: focusedSeconds)
        self.device = device
        self.awaySeconds = awaySeconds
        self.reason = reason
        self.uuid = uuid
        self.note = note
        self.taskID = taskID
        self.taskName = taskName
        self.start = start
        self.end = end
        self.plannedSeconds = plannedSeconds
        self.focusedSeconds = focusedSeconds
        self.pauses = pauses
        self.outcome = outcome
    }
}

/// What happened during one call into the machine, in order. The driver turns these into
/// database writes, pushed events, notifications and log lines.
public enum TimerEvent: Equatable, Sendable {
    /// A phase began to run.
    case phaseStarted(Phase)
    /// A phase is ready and waits for `start`.
    case phasePending(Phase)
    /// A phase ran to its deadline.
    case phaseCompleted(Phase)
    case paused(Phase)
    case resumed(Phase)
    /// The phase was given up (by `stop`, or by a suspend under the `abandon` policy or focus mode).
    case stopped(Phase)
    case skipped(Phase)
    case extended(Phase, seconds: Int)
    /// A work session ended and must be recorded.
    case sessionEnded(WorkSession)
    /// The person left (presence away).
    case away
    /// The person came back after `seconds`; `offer`: the work counted the time away, and
    /// the person may discard it (`discardAway`).
    case back(seconds: Int, offer: Bool)
    /// Counted away time was taken out of the open work phase.
    case awayDiscarded(seconds: Int)
    /// A recorded session was trimmed to the moment the person left (same task and start).
    case sessionRevised(WorkSession)
    /// Work of a task with overtime reached its bell and goes on, counting up.
    case overtimeStarted
    /// Flow work reached the task's nudge (`seconds` of work); it goes on.
    case flowNudge(seconds: Int)
    /// The running work was marked with an interruption (its deadline stays).
    case interrupted(Interruption)

    /// The protocol's event name (docs/protocol.md).
    public var name: String {
        switch self {
        case .phaseStarted: "phase_started"
        case .phasePending: "phase_pending"
        case .phaseCompleted: "phase_completed"
        case .paused: "paused"
        case .resumed: "resumed"
        case .stopped: "stopped"
        case .skipped: "skipped"
        case .extended: "extended"
        case .sessionEnded: "session_recorded"
        case .away: "away"
        case .back: "back"
        case .awayDiscarded: "away_discarded"
        case .sessionRevised: "session_revised"
        case .overtimeStarted: "overtime_started"
        case .flowNudge: "flow_nudge"
        case .interrupted: "interrupted"
        }
    }
}

/// A phase of a task that has begun — ready, running or paused: the one definition of what the
/// timer holds, which the machine runs, `TimerStatus` shows and `SavedTimer` keeps.
public struct TimerRun: Equatable, Sendable {
    /// Where the phase is; an idle timer has no run at all.
    public enum Stage: String, Sendable {
        case pending, running, paused
    }

    public var stage: Stage
    public var phase: Phase
    /// The task whose phases run; its durations apply from the next phase on.
    public var task: TaskConfig
    /// Work round within the cycle, 1-based; a break belongs to the round that preceded it.
    public var round: Int
    /// The work of this round was skipped: it does not count toward the long break (the break
    /// after it is a short one, and the round number stays).
    public var roundSkipped: Bool
    /// Length of the phase in seconds, extensions included.
    public var duration: Double
    public var pauses: Int
    /// The note of the work phase, recorded with its session; nil: none.
    public var note: String?
    /// Seconds away during the work phase before the current absence.
    public var awayBefore: Double
    /// A work phase that would have started by itself while away: it starts on return.
    public var workWaitsForBack: Bool
    /// Work that counts up, with no deadline: flow work, or work past its bell; nil: a countdown.
    public var countsUp: CountUp?
    /// Flow work whose nudge was shown.
    public var nudged: Bool

    /// Why work counts up.
    public enum CountUp: String, Sendable {
        /// A flow task's work: its duration is 0, nothing was planned.
        case flow
        /// A pomodoro past its bell: its duration is what was planned.
        case overtime
    }
    /// The interruptions marked on the work phase, recorded with its session.
    public var interruptions: [Interruption]

    public init(
        stage: Stage, phase: Phase, task: TaskConfig, round: Int, roundSkipped: Bool = false, duration: Double,
        pauses: Int = 0, note: String? = nil, awayBefore: Double = 0, workWaitsForBack: Bool = false,
        countsUp: CountUp? = nil, nudged: Bool = false, interruptions: [Interruption] = []
    ) {
        self.countsUp = countsUp
        self.nudged = nudged
        self.interruptions = interruptions
        self.stage = stage
        self.phase = phase
        self.task = task
        self.round = round
        self.roundSkipped = roundSkipped
        self.duration = duration
        self.pauses = pauses
        self.note = note
        self.awayBefore = awayBefore
        self.workWaitsForBack = workWaitsForBack
    }

    /// The run a flat description stands for: none when idle or without a phase and a task.
    init?(
        state: TimerState, phase: Phase?, task: TaskConfig?, round: Int, roundSkipped: Bool = false, duration: Double,
        pauses: Int, note: String?, awayBefore: Double = 0, workWaitsForBack: Bool = false, countsUp: CountUp? = nil,
        nudged: Bool = false
    ) {
        guard let stage = Stage(rawValue: state.rawValue), let phase, let task else { return nil }
        self.init(
            stage: stage, phase: phase, task: task, round: round, roundSkipped: roundSkipped, duration: duration,
            pauses: pauses, note: note, awayBefore: awayBefore, workWaitsForBack: workWaitsForBack, countsUp: countsUp,
            nudged: nudged)
    }

    public var state: TimerState {
        switch stage {
        case .pending: .pending
        case .running: .running
        case .paused: .paused
        }
    }
}

/// The flat fields every view of the timer shows, read off its run: an idle timer is round 1 of
/// no phase, no task, nothing done.
public protocol TimerRunView {
    var run: TimerRun? { get }
}

extension TimerRunView {
    public var state: TimerState { run?.state ?? .idle }
    public var phase: Phase? { run?.phase }
    public var task: TaskConfig? { run?.task }
    public var round: Int { run?.round ?? 1 }
    public var pauses: Int { run?.pauses ?? 0 }
    public var note: String? { run?.note }
    public var interruptions: [Interruption] { run?.interruptions ?? [] }
}

/// The timer's status at one moment, as plain values (the protocol's `status` object).
public struct TimerStatus: TimerRunView, Equatable, Sendable {
    public var run: TimerRun?
    public var durationSeconds: Int
    public var remainingSeconds: Int
    public var elapsedSeconds: Int
    /// Wall-clock end of the running phase; nil unless running.
    public var endsAt: Double?
    public var presence: Presence = .unknown
    /// Wall time the person left; nil unless away.
    public var awaySince: Double? = nil
    /// Whether counted away time may still be discarded (`discard_away`).
    public var awayOffered = false

    public var longBreakEvery: Int { task?.longBreakEvery ?? 0 }
    /// Work that counts up (flow, overtime): it shows `elapsedSeconds`, and nothing remains.
    public var countsUp: Bool { run?.countsUp != nil }

    public init(
        run: TimerRun?, durationSeconds: Int, remainingSeconds: Int, elapsedSeconds: Int, endsAt: Double?,
        presence: Presence = .unknown, awaySince: Double? = nil, awayOffered: Bool = false
    ) {
        self.run = run
        self.durationSeconds = durationSeconds
        self.remainingSeconds = remainingSeconds
        self.elapsedSeconds = elapsedSeconds
        self.endsAt = endsAt
        self.presence = presence
        self.awaySince = awaySince
        self.awayOffered = awayOffered
    }

    /// The status a fresh run in `state` shows: `round`, `longBreakEvery` and `pauses` must be
    /// what the run and its task say (an idle timer: 1, 0, 0).
    init(
        state: TimerState, phase: Phase?, task: TaskConfig?, round: Int, longBreakEvery: Int, durationSeconds: Int,
        remainingSeconds: Int, elapsedSeconds: Int, endsAt: Double?, pauses: Int, presence: Presence = .unknown,
        awaySince: Double? = nil, awayOffered: Bool = false, note: String? = nil
    ) {
        let run = TimerRun(
            state: state, phase: phase, task: task, round: round, duration: Double(durationSeconds), pauses: pauses, note: note)
        self.init(
            run: run, durationSeconds: durationSeconds, remainingSeconds: remainingSeconds, elapsedSeconds: elapsedSeconds,
            endsAt: endsAt, presence: presence, awaySince: awaySince, awayOffered: awayOffered)
        assert(self.round == round && self.longBreakEvery == longBreakEvery && self.pauses == pauses)
    }
}

/// The clocks of the active phase, in the machine's steady time.
struct PhaseClock: Equatable, Sendable {
    /// Running time of the phase before the current running stretch.
    var elapsedBefore: Double = 0
    /// Steady time when the current running stretch began; nil unless running.
    var stretchStart: Double?
    /// Wall time when the phase first started (the recorded session's start), read once.
    var startWall: Double
    /// Steady time at that moment: the session's end is its start plus the steady time since,
    /// so a wall-clock step during the phase moves neither its length nor its end before its start.
    var startSteady: Double
    /// The running stretches that ended, and where the one running now began (nil unless
    /// running), in seconds after the start: the session's focus segments.
    var focus: [FocusSpan] = []
    var focusSince: Double?
}

/// The timer state machine: pure, driven with `now`.
///
/// Every command takes the current clock reading and answers with the events it caused; after
/// any call, `nextDeadline` says when `tick` must run next (nil: nothing to wait for). Deadlines
/// are absolute: a chained phase starts at the previous phase's deadline, not when the driver got
/// round to it, so lateness never accumulates.
public struct TimerMachine: TimerRunView, Sendable, Equatable {
    /// Idle, or a phase of a task with its clocks.
    enum Activity: Equatable, Sendable {
        case idle
        case active(TimerRun, PhaseClock)
    }

    private(set) var activity = Activity.idle
    /// Here, away or not known yet (no source has spoken).
    public private(set) var presence: Presence = .unknown
    /// The current absence; nil unless away.
    private var absence: Absence?
    /// Counted away time the person may still discard.
    public private(set) var awayOffer: AwayOffer?
    /// `[timer] min_session` in seconds: flow work ended sooner is no session.
    public var minSession = SessionRules.defaultMinSession

    public init() {}

    public var run: TimerRun? {
        guard case .active(let run, _) = activity else { return nil }
        return run
    }

    /// Length of the current phase in seconds, extensions included; 0 when idle.
    public var duration: Double { run?.duration ?? 0 }

    /// The active phase, changed in place; nil when idle (setting nil makes the timer idle).
    private var active: (run: TimerRun, clock: PhaseClock)? {
        get {
            guard case .active(let run, let clock) = activity else { return nil }
            return (run, clock)
        }
        set { activity = newValue.map { .active($0.run, $0.clock) } ?? .idle }
    }

    // MARK: Queries

    /// Running time of the current phase at `now`, pauses excluded.
    public func elapsed(at now: Now) -> Double {
        guard let clock = active?.clock else { return 0 }
        return clock.elapsedBefore + (clock.stretchStart.map { max(0, now.steady - $0) } ?? 0)
    }

    /// Steady time at which `tick` must run: the running phase's end, or sooner the end of a
    /// strict focus grace; nil when nothing is due.
    public var nextDeadline: Double? {
        guard let end = phaseDeadline else { return nil }
        return min(end, absence?.strictDeadline ?? end)
    }

    /// Steady time at which the running phase ends; nil unless running.
    var phaseDeadline: Double? {
        guard case (let run, let clock)? = active, run.stage == .running, let start = clock.stretchStart else { return nil }
        return start + (countUpTarget(run)?.seconds ?? run.duration) - clock.elapsedBefore
    }

    /// Where work that counts up next needs `tick`, in its running time: the flow nudge not yet
    /// shown, else the day a session lasts at most, when it completes; nil for a countdown.
    func countUpTarget(_ run: TimerRun) -> (seconds: Double, nudge: Bool)? {
        guard run.countsUp != nil else { return nil }
        let limit = Double(DurationText.maxSeconds)
        if run.countsUp == .flow, !run.nudged, let nudge = run.task.flowNudgeSeconds.map(Double.init), nudge < limit {
            return (nudge, true)
        }
        return (limit, false)
    }

    /// Seconds away during the current work phase up to `now`.
    func awayInWork(at now: Now) -> Double {
        guard case (let run, let clock)? = active, run.phase == .work, run.stage != .pending else { return 0 }
        let current = absence.map { max(0, now.steady - max($0.since.steady, clock.startSteady)) } ?? 0
        return run.awayBefore + current
    }

    public func status(at now: Now) -> TimerStatus {
        let countsUp = run?.countsUp != nil
        let elapsed = countsUp ? elapsed(at: now) : min(duration, elapsed(at: now))
        let remaining = countsUp ? 0 : max(0, duration - elapsed)
        return TimerStatus(
            run: run, durationSeconds: Int(duration.rounded()),
            // Round up, so a countdown shows 25:00 at the start and 0:00 only at the end.
            remainingSeconds: Int(remaining.rounded(.up)),
            elapsedSeconds: Int(elapsed.rounded(.down)),
            endsAt: state == .running && !countsUp ? now.wall + remaining : nil,
            presence: presence, awaySince: absence?.since.wall, awayOffered: awayOffer != nil
        )
    }

    // MARK: Commands

    /// `start [TASK]`: from idle, starts `task`'s work phase (task required); from pending, starts
    /// the pending phase, or `task`'s work phase when a different task is named; from paused,
    /// resumes when no other task is named.
    public mutating func start(_ newTask: TaskConfig?, at now: Now) throws(DiligenceError) -> [TimerEvent] {
        guard let run else {
            guard let newTask else { throw DiligenceError(.noTask, "Name a task to start, e.g. `diligencectl start Work`.") }
            return begin(.work, of: newTask, at: now)
        }
        let differentTask = newTask != nil && newTask?.id != run.task.id
        switch run.stage {
        case .pending:
            if differentTask, let newTask {
                return begin(.work, of: newTask, at: now)
            }
            // A pending break keeps its length: a flow session's was earned, not configured.
            return begin(
                run.phase, of: newTask ?? run.task, round: run.round, roundSkipped: run.roundSkipped,
                duration: run.phase.isBreak ? run.duration : nil, at: now)
        case .paused where !differentTask:
            return try resume(at: now)
        case .running, .paused:
            let what = "\(run.phase.label) of \(run.task.name)"
            if differentTask {
                throw DiligenceError(.alreadyRunning, "The \(what) is \(run.state.rawValue); stop it first (`diligencectl stop`).")
            }
            throw DiligenceError(.alreadyRunning, "The \(what) is already running.")
        }
    }

    /// `note TEXT`: the note of the work phase that runs or is paused (nil removes it); it is
    /// recorded with the phase's session. Refused (`not_running`) with no work phase to note.
    public mutating func setNote(_ text: String?) throws(DiligenceError) {
        guard let run, run.stage != .pending, run.phase == .work else {
            throw DiligenceError(
                .notRunning,
                "A note goes with a work session, and no work phase runs now; note a recorded one with `diligencectl history edit ID --note TEXT`."
            )
        }
        active?.run.note = text
    }

    /// `interrupt`: marks the work phase that runs or is paused with an interruption of `kind`
    /// at `now`, its note under `SessionNote`'s rules; no deadline moves. An external one ends
    /// a `voidOnInterrupt` task's work as abandoned (`interrupted`), as the technique voids it.
    public mutating func interrupt(_ kind: InterruptionKind, note: String? = nil, at now: Now) throws(DiligenceError) -> [TimerEvent] {
        guard case (let run, let clock)? = active, run.stage != .pending, run.phase == .work else {
            throw DiligenceError(
                .notRunning,
                "An interruption marks running work, and no work phase runs now (\(run.map { "\($0.phase.label), \($0.state.rawValue)" } ?? "idle"))."
            )
        }
        guard run.interruptions.count < Interruption.maxPerSession else {
            throw DiligenceError(.outOfRange, "A work session holds at most \(Interruption.maxPerSession) interruptions.")
        }
        let marked = Interruption(
            kind: kind, at: clock.wall(at: now), note: try note.flatMap { text throws(DiligenceError) in try SessionNote.normalize(text) })
        active?.run.interruptions.append(marked)
        guard kind == .external, run.task.voidOnInterrupt else { return [.interrupted(marked)] }
        return [.interrupted(marked)] + giveUpWork(reason: .interrupted, at: now)
    }

    public mutating func pause(at now: Now) throws(DiligenceError) -> [TimerEvent] {
        guard let run, run.stage == .running else {
            throw DiligenceError(.notRunning, state == .paused ? "The timer is already paused." : "Nothing is running to pause.")
        }
        if run.task.focusMode && run.phase == .work {
            throw DiligenceError(.focusMode, "\(run.task.name) is in strict focus mode: work cannot be paused. Stop it to give up.")
        }
        endStretch(at: now)
        if run.phase == .work { active?.run.pauses += 1 }
        return [.paused(run.phase)]
    }

    public mutating func resume(at now: Now) throws(DiligenceError) -> [TimerEvent] {
        guard let run, run.stage == .paused else {
            throw DiligenceError(.notPaused, state == .running ? "The timer is already running." : "Nothing is paused to resume.")
        }
        beginStretch(at: now)
        // Resumed by hand: coming back no longer needs to resume it.
        absence?.pausedWork = false
        return [.resumed(run.phase)]
    }

    /// Pause when running, resume when paused, start the pending phase, or start `task` from idle.
    public mutating func toggle(_ taskIfIdle: TaskConfig?, at now: Now) throws(DiligenceError) -> [TimerEvent] {
        switch state {
        case .running: try pause(at: now)
        case .paused: try resume(at: now)
        case .pending: try start(nil, at: now)
        case .idle: try start(taskIfIdle, at: now)
        }
    }

    /// Gives up the current phase: a work phase that ran is recorded as abandoned; the timer goes
    /// idle. A pending phase is dropped without a record, but still `stopped`: every change has
    /// an event.
    public mutating func stop(at now: Now) throws(DiligenceError) -> [TimerEvent] {
        guard let run else { throw DiligenceError(.notRunning, "The timer is idle: nothing to stop.") }
        if run.countsUp != nil, run.stage != .pending { return endCountUp(at: now) }
        var events: [TimerEvent] = []
        if run.stage != .pending { events += endPhase(.abandoned, at: now) }
        events.append(.stopped(run.phase))
        reset()
        return events
    }

    /// Ends the phase now and moves on as if it had ended (a work phase is recorded as skipped).
    /// A pending phase is skipped without starting it.
    public mutating func skip(at now: Now) throws(DiligenceError) -> [TimerEvent] {
        guard let run else { throw DiligenceError(.notRunning, "The timer is idle: nothing to skip.") }
        let phase = run.phase
        if run.countsUp != nil, run.stage != .pending { return endCountUp(at: now) }
        if run.task.focusMode && phase == .work {
            throw DiligenceError(.focusMode, "\(run.task.name) is in strict focus mode: work cannot be skipped. Stop it to give up.")
        }
        var events: [TimerEvent] = []
        if run.stage != .pending { events += endPhase(.skipped, at: now) }
        events.append(.skipped(phase))
        if phase == .work { active?.run.roundSkipped = true }
        events += advance(after: phase, at: now)
        return events
    }

    /// Adds `seconds` to the running or paused phase.
    public mutating func extend(by seconds: Int, at now: Now) throws(DiligenceError) -> [TimerEvent] {
        guard let run, run.stage != .pending else {
            throw DiligenceError(.notRunning, "Only a running or paused phase can be extended.")
        }
        if run.countsUp != nil {
            throw DiligenceError(.notRunning, "This work counts up and has no end to extend; end it with `diligencectl stop`.")
        }
        guard seconds > 0, run.duration + Double(seconds) <= Double(DurationText.maxSeconds) else {
            throw DiligenceError(
                .invalidDuration, "Extend by a positive duration; a phase lasts at most \(DurationText.format(DurationText.maxSeconds)).")
        }
        active?.run.duration += Double(seconds)
        return [.extended(run.phase, seconds: seconds)]
    }

    /// Completes every phase whose deadline has passed. A chained phase starts at the previous
    /// deadline; one that would itself already be over (the timer was not driven for longer than
    /// a whole phase) starts at `now` instead, so no session is recorded that nobody worked.
    public mutating func tick(at now: Now) -> [TimerEvent] {
        var events: [TimerEvent] = []
        var chained = false
        while let deadline = nextDeadline, now.steady >= deadline, let phase {
            if let end = phaseDeadline, deadline < end, let left = absence?.since {
                // Strict focus, and the person is still away at the end of the grace.
                events += giveUpWork(reason: .left, at: left)
                break
            }
            if chained {
                // This phase started at a past deadline and is over too: restart it from now.
                active?.clock.stretchStart = now.steady
                active?.clock.startWall = now.wall
                active?.clock.startSteady = now.steady
                active?.clock.focus = []
                active?.clock.focusSince = 0
                break
            }
            if let event = countUpReached() {
                events.append(event)
                continue
            }
            let end = Now(steady: deadline, wall: now.wall - (now.steady - deadline))
            // Flow work that ran the longest a session lasts ends, and earns its break.
            let earned = run?.countsUp == .flow ? run?.task.flowBreak(forWork: DurationText.maxSeconds) : nil
            events += endPhase(.completed, at: end)
            events.append(.phaseCompleted(phase))
            events += advance(after: phase, earned: earned, at: end)
            chained = true
        }
        return events
    }

    /// A new configuration for a task: it applies from the next phase when it is the running task
    /// (task `replacing`, when the task moved to another row: `config.id`'s).
    /// A pending phase has not started yet: it takes the new duration at once, so that status
    /// shows what `start` will run.
    public mutating func taskChanged(_ config: TaskConfig, replacing id: Int64? = nil) {
        guard let run, run.task.id == (id ?? config.id) else { return }
        active?.run.task = config
        // A flow session's pending break was earned by its work, whatever the task says now.
        let earned = run.phase.isBreak && run.task.mode == .flow
        if run.stage == .pending && !earned { active?.run.duration = config.plannedLength(of: run.phase) }
    }

    /// Forgets the current phase without recording it (its task was removed).
    public mutating func reset() {
        activity = .idle
        workEnded()
    }

    /// The machine slept `seconds` (CLOCK_BOOTTIME ran on while CLOCK_MONOTONIC stood still),
    /// a sleep that began at `began` (the driver knows when: logind's announcement, or the
    /// first reading after the wake less the slept time; nil: `now` less the slept time);
    /// `now` is the reading after the wake-up. Applies `policy`; focus mode abandons work, as of
    /// `began`. A paused phase is left as it was: its time does not run, whatever the policy.
    public mutating func suspended(for seconds: Double, began: Now? = nil, policy: SuspendPolicy, at now: Now) -> [TimerEvent] {
        guard seconds > 0, state == .running else { return [] }
        let sleptAt = began ?? Now(steady: now.steady - seconds, wall: now.wall - seconds)
        // A phase whose deadline passed before the machine went to sleep ended then, whatever
        // the policy says about the slept time.
        let events = tick(at: sleptAt)
        guard let run, run.stage == .running else { return events }
        // In strict focus mode a suspend fails the work as leaving does (a suspend is time away).
        if run.phase == .work && run.task.focusMode { return events + giveUpWork(reason: .left, at: sleptAt) }
        if policy == .abandon { return events + giveUpWork(reason: nil, at: sleptAt) }
        // The slept time is time away from work (unless an absence already counts it).
        if run.phase == .work, absence == nil, let deadline = phaseDeadline {
            // Work that counts up runs on through the sleep; a countdown only to its end.
            let end = run.countsUp == nil ? deadline : .infinity
            active?.run.awayBefore += policy == .pause ? seconds : max(0, min(seconds, end - sleptAt.steady))
        }
        if policy == .pause, let start = active?.clock.stretchStart {
            closeFocus(at: sleptAt, reopeningAt: sleptAt.steady + seconds)
            active?.clock.stretchStart = start + seconds
            return events
        }
        return events + tick(at: now)
    }

    // MARK: Presence

    /// The person left (locked the screen, went idle, said `away`). During work the policy
    /// applies — the task's own (`awayPolicy`) or `settings.onAway` — except in strict focus
    /// mode, where the work fails if they are still away after `settings.strictGrace`. A break
    /// runs on. Leaving again while away changes nothing.
    public mutating func away(_ settings: PresenceSettings, at now: Now) -> [TimerEvent] {
        guard presence != .away else { return [] }
        presence = .away
        awayOffer = nil
        var left = Absence(since: now)
        guard let run, run.stage == .running, run.phase == .work else {
            absence = left
            return [.away]
        }
        left.elapsedAtLeaving = elapsed(at: now)
        left.awayAtLeaving = run.awayBefore
        if run.task.focusMode {
            left.strictDeadline = now.steady + Double(settings.strictGrace)
            absence = left
            // A grace of 0 fails the work at once.
            return [.away] + tick(at: now)
        }
        switch run.task.awayPolicy ?? settings.onAway {
        case .pause:
            left.pausedWork = true
            absence = left
            endStretch(at: now)
            return [.away, .paused(.work)]
        case .continue:
            left.countsWork = true
            absence = left
            return [.away]
        case .abandon:
            absence = left
            return [.away] + giveUpWork(reason: .left, at: now)
        }
    }

    /// The person is back: work paused by leaving resumes with the time it had left, work
    /// that waited for them starts, and time away that work counted may be discarded.
    public mutating func back(at now: Now) -> [TimerEvent] {
        guard let absence else {
            presence = .here
            return []
        }
        let awayBefore = awayInWork(at: now)
        active?.run.awayBefore = awayBefore
        self.absence = nil
        presence = .here
        if absence.countsWork, phase == .work, state == .running || state == .paused {
            awayOffer = AwayOffer(
                countedSeconds: max(0, elapsed(at: now) - absence.elapsedAtLeaving), left: absence.since,
                elapsedAtLeaving: absence.elapsedAtLeaving, awayAtLeaving: absence.awayAtLeaving, back: now.steady)
        }
        let seconds = Int(saturating: max(0, now.steady - absence.since.steady).rounded())
        var events: [TimerEvent] = [.back(seconds: seconds, offer: awayOffer != nil)]
        if absence.pausedWork, state == .paused, let phase {
            beginStretch(at: now)
            events.append(.resumed(phase))
        }
        if let run, run.workWaitsForBack, run.stage == .pending, run.phase == .work {
            events += begin(.work, of: run.task, round: run.round, roundSkipped: run.roundSkipped, at: now)
        }
        return events
    }

    /// Drops the away time work counted (`continue`): out of the open work phase (it ends that
    /// much later), or, for a session that ended meanwhile, the session is trimmed to the
    /// moment the person left and recorded as abandoned for that reason.
    public mutating func discardAway(at now: Now) throws(DiligenceError) -> [TimerEvent] {
        guard let offer = awayOffer else {
            throw DiligenceError(.nothingToDiscard, "No time away was counted as work since the last work phase began.")
        }
        awayOffer = nil
        guard var session = offer.endedSession else {
            active?.clock.elapsedBefore -= offer.countedSeconds
            discardFocus(from: offer.left.steady, to: offer.back ?? offer.left.steady + offer.countedSeconds)
            return [.awayDiscarded(seconds: Int(saturating: offer.countedSeconds.rounded()))]
        }
        session.end = max(session.start, min(session.end, offer.left.wall))
        session.interruptions.removeAll { $0.at > session.end }
        session.focusedSeconds = min(session.focusedSeconds, Int(saturating: offer.elapsedAtLeaving.rounded()))
        session.awaySeconds = min(session.awaySeconds, Int(saturating: offer.awayAtLeaving.rounded()))
        session.outcome = .abandoned
        session.reason = .left
        session.segments = FocusSegment.fit(session.segments, start: session.start, end: session.end, focused: session.focusedSeconds)
        return [.sessionRevised(session)]
    }

    /// The time from `a` to `b` (steady) is no focus: out of the stretches that ended and the
    /// one that runs.
    private mutating func discardFocus(from a: Double, to b: Double) {
        guard let clock = active?.clock else { return }
        let from = a - clock.startSteady
        let to = b - clock.startSteady
        active?.clock.focus = clock.focus.removing(from: from, to: to)
        if let since = clock.focusSince, since < to {
            if since < from { active?.clock.focus.append(FocusSpan(from: since, to: from)) }
            active?.clock.focusSince = to
        }
    }

    /// The work phase that just ended: an offer for its counted away time now stands for its
    /// session (it trims it).
    private mutating func keepOffer(for session: WorkSession, at now: Now) {
        if let absence, absence.countsWork {
            // It ended while away: the whole absence so far was counted.
            awayOffer = AwayOffer(
                countedSeconds: max(0, elapsed(at: now) - absence.elapsedAtLeaving), left: absence.since,
                elapsedAtLeaving: absence.elapsedAtLeaving, awayAtLeaving: absence.awayAtLeaving, endedSession: session)
        } else if awayOffer != nil, awayOffer?.endedSession == nil {
            awayOffer?.endedSession = session
        }
    }

    /// Gives up the running phase as of `end`: work is recorded as abandoned (for `reason`).
    private mutating func giveUpWork(reason: EndReason?, at end: Now) -> [TimerEvent] {
        guard let phase else { return [] }
        var events = endPhase(.abandoned, reason: reason, at: end)
        events.append(.stopped(phase))
        reset()
        return events
    }

    /// The work phase is over: what an absence did to it ends with it.
    private mutating func workEnded() {
        absence?.pausedWork = false
        absence?.countsWork = false
        absence?.strictDeadline = nil
        active?.run.awayBefore = 0
        active?.run.workWaitsForBack = false
    }

    // MARK: Counting up

    /// Ends work that counts up, as the person says (`stop`, `skip`): completed as worked, and
    /// the break follows — a flow session's earned by it. Flow work ended before `minSession`
    /// is an accidental start, given up as a stop is (and so not recorded).
    private mutating func endCountUp(at now: Now) -> [TimerEvent] {
        guard let run else { return [] }
        let focused = elapsed(at: now).rounded()
        if run.countsUp == .flow, focused < Double(minSession) { return giveUpWork(reason: nil, at: now) }
        var events = endPhase(.completed, at: now)
        events.append(.phaseCompleted(.work))
        let earned = run.countsUp == .flow ? run.task.flowBreak(forWork: Int(saturating: focused)) : nil
        return events + advance(after: .work, earned: earned, at: now)
    }

    /// At a deadline of work: the bell of a task with overtime (work goes on, counting up), or
    /// the flow nudge; nil when the deadline ends the phase.
    private mutating func countUpReached() -> TimerEvent? {
        guard let run, run.phase == .work else { return nil }
        if run.countsUp == nil, run.task.overtime {
            active?.run.countsUp = .overtime
            return .overtimeStarted
        }
        guard let target = countUpTarget(run), target.nudge else { return nil }
        active?.run.nudged = true
        return .flowNudge(seconds: Int(saturating: target.seconds))
    }

    // MARK: Transitions

    /// The phase runs from `now` on.
    private mutating func beginStretch(at now: Now) {
        active?.clock.stretchStart = now.steady
        active?.run.stage = .running
        let since = active.map { now.steady - $0.clock.startSteady }
        active?.clock.focusSince = since
    }

    /// The running stretch, for the focus segments, ends at `now` (and another begins at `next`).
    private mutating func closeFocus(at now: Now, reopeningAt next: Double? = nil) {
        guard let clock = active?.clock else { return }
        if let since = clock.focusSince { active?.clock.focus.append(FocusSpan(from: since, to: now.steady - clock.startSteady)) }
        active?.clock.focusSince = next.map { $0 - clock.startSteady }
    }

    /// The phase stops running at `now`, keeping the time it ran.
    private mutating func endStretch(at now: Now) {
        let elapsed = elapsed(at: now)
        closeFocus(at: now)
        active?.clock.elapsedBefore = elapsed
        active?.clock.stretchStart = nil
        active?.run.stage = .paused
    }

    /// Starts `task`'s `next` phase running at `now`, in `round`.
    private mutating func begin(
        _ next: Phase, of task: TaskConfig, round: Int = 1, roundSkipped: Bool = false, duration: Double? = nil, at now: Now
    ) -> [TimerEvent] {
        workEnded()
        // The offer to discard away time lasts until the next work phase.
        if next == .work { awayOffer = nil }
        let flow = next == .work && task.mode == .flow
        // A task stored when phases could be longer runs a day at most (the session rules).
        let planned = flow ? 0 : duration ?? Double(min(task.seconds(for: next), DurationText.maxSeconds))
        let run = TimerRun(
            stage: .running, phase: next, task: task, round: round, roundSkipped: roundSkipped, duration: planned,
            countsUp: flow ? .flow : nil)
        activity = .active(
            run, PhaseClock(stretchStart: now.steady, startWall: now.wall, startSteady: now.steady, focusSince: 0))
        return [.phaseStarted(next)]
    }

    /// Records the end of the current phase when it is work.
    private mutating func endPhase(_ outcome: Outcome, reason: EndReason? = nil, at now: Now) -> [TimerEvent] {
        guard case (let run, let clock)? = active, run.phase == .work else { return [] }
        let ran = elapsed(at: now)
        let focused = (run.countsUp != nil ? ran : outcome == .completed ? run.duration : min(run.duration, ran)).rounded()
        // Flow planned nothing: its plan is what was worked.
        let planned = run.countsUp == .flow ? max(1, focused) : run.duration.rounded()
        // Dated from the wall-clock time it started, its span the steady time since (pauses and
        // slept time included), so it always holds its focused time. A span past a day — a
        // pause over the weekend — is one no session may have and says nothing true about when
        // the work was done: the session is then its focused time ending now. Work given up the
        // instant it began (no focus, no time) is not a session at all.
        let end = clock.wall(at: now)
        let start = end - clock.startWall <= SessionRules.maxLength ? clock.startWall : end - focused
        guard end > start else { return [] }
        let focusedSeconds = Int(saturating: focused)
        let segments =
            start == clock.startWall
            ? FocusSegment.segments(of: clock.focusSpans(until: now), startWall: start, focused: focusedSeconds)
            : FocusSegment.whole(start: start, focused: focusedSeconds)
        let session = WorkSession(
            taskID: run.task.id, taskName: run.task.name, start: start, end: end,
            plannedSeconds: Int(saturating: planned), focusedSeconds: focusedSeconds,
            pauses: run.pauses, outcome: outcome, note: run.note, awaySeconds: Int(saturating: awayInWork(at: now).rounded()),
            reason: reason,
            interruptions: run.interruptions.map { Interruption(kind: $0.kind, at: min(max($0.at, start), end), note: $0.note) },
            segments: segments)
        keepOffer(for: session, at: now)
        return [.sessionEnded(session)]
    }

    /// Moves to the phase that follows `finished`, starting it when autostart says so.
    private mutating func advance(after finished: Phase, earned: Int? = nil, at now: Now) -> [TimerEvent] {
        guard var run else { return [] }
        let task = run.task
        let next: Phase
        // A skipped round is done again: no long break for it, and the same round number.
        let counts = !run.roundSkipped
        run.countsUp = nil
        run.nudged = false
        if finished == .work {
            if !task.breaks {
                next = .work
                if counts { run.round = task.longBreakEvery > 0 && run.round >= task.longBreakEvery ? 1 : run.round + 1 }
                run.roundSkipped = false
            } else if counts && earned == nil && task.longBreakEvery > 0 && run.round >= task.longBreakEvery {
                next = .longBreak
            } else {
                next = .shortBreak
            }
        } else {
            next = .work
            if counts { run.round = finished == .longBreak ? 1 : run.round + 1 }
            run.roundSkipped = false
        }
        workEnded()
        // No pomodoro runs at an empty desk: work that would start by itself waits for the return.
        let waits = next == .work && presence == .away && task.autostart.starts(next)
        let length = next.isBreak ? earned.map(Double.init) : nil
        if task.autostart.starts(next) && !waits {
            return begin(next, of: task, round: run.round, roundSkipped: run.roundSkipped, duration: length, at: now)
        }
        // The wall start stays the finished phase's until this one begins.
        run.stage = .pending
        run.phase = next
        run.duration = length ?? task.plannedLength(of: next)
        run.pauses = 0
        run.interruptions = []
        // The note went with the ended work session; a pending phase has none of its own.
        run.note = nil
        run.awayBefore = 0
        run.workWaitsForBack = waits
        active?.run = run
        active?.clock.focus = []
        active?.clock.focusSince = nil
        active?.clock.elapsedBefore = 0
        active?.clock.stretchStart = nil
        return [.phasePending(next)]
    }
}

extension TaskConfig {
    /// What a phase of this task plans, as a pending phase shows it: flow work plans nothing.
    func plannedLength(of phase: Phase) -> Double {
        phase == .work && mode == .flow ? 0 : Double(seconds(for: phase))
    }
}

extension PhaseClock {
    /// The running stretches up to `now`, the open one included.
    func focusSpans(until now: Now) -> [FocusSpan] {
        let end = now.steady - startSteady
        let spans = focus + (focusSince.map { [FocusSpan(from: $0, to: end)] } ?? [])
        return spans.compactMap { $0.from < end ? FocusSpan(from: $0.from, to: min($0.to, end)) : nil }
    }

    /// The wall time of `now` on the phase's own clock: its start plus the steady time since
    /// (pauses and slept time included), never before the start.
    func wall(at now: Now) -> Double {
        startWall + max(0, now.steady - startSteady)
    }
}

extension Phase {
    /// How a person names the phase: "work", "short break", "long break".
    public var label: String {
        switch self {
        case .work: "work"
        case .shortBreak: "short break"
        case .longBreak: "long break"
        }
    }
}

// MARK: Saving and restoring

/// The timer as saved in the store, independent of any clock: a restarted daemon (even after a
/// reboot) rebuilds the machine from it and the time that passed meanwhile.
public struct SavedTimer: TimerRunView, Equatable, Sendable {
    public var run: TimerRun?
    /// Running time of the phase at the moment of saving.
    public var elapsed: Double
    public var phaseStartWall: Double
    /// Steady seconds since the phase started (pauses and slept time included) at the moment of
    /// saving: the session's end after a restart is still its start plus its steady length.
    public var phaseAge: Double
    /// Presence as it was: an absence goes on across a restart (its sources say when it ends).
    public var presence: Presence = .unknown
    public var absence: SavedAbsence?
    /// The phase's running stretches that ended and where the running one began, in seconds
    /// after its start (nil unless running; a timer saved before they were kept has neither).
    public var focus: [FocusSpan] = []
    public var focusSince: Double?

    public var duration: Double { run?.duration ?? 0 }
    public var roundSkipped: Bool { run?.roundSkipped ?? false }
    public var awayBefore: Double { run?.awayBefore ?? 0 }
    public var workWaitsForBack: Bool { run?.workWaitsForBack ?? false }

    public init(
        run: TimerRun?, elapsed: Double, phaseStartWall: Double, phaseAge: Double, presence: Presence = .unknown,
        absence: SavedAbsence? = nil
    ) {
        self.run = run
        self.elapsed = elapsed
        self.phaseStartWall = phaseStartWall
        self.phaseAge = phaseAge
        self.presence = presence
        self.absence = absence
    }

    /// The saved timer its stored members describe: idle unless it names a phase and a task.
    public init(
        state: TimerState, phase: Phase?, task: TaskConfig?, round: Int, duration: Double,
        elapsed: Double, pauses: Int, phaseStartWall: Double, phaseAge: Double, roundSkipped: Bool = false, note: String? = nil,
        presence: Presence = .unknown, absence: SavedAbsence? = nil, awayBefore: Double = 0, workWaitsForBack: Bool = false
    ) {
        let run = TimerRun(
            state: state, phase: phase, task: task, round: round, roundSkipped: roundSkipped, duration: duration,
            pauses: pauses, note: note, awayBefore: awayBefore, workWaitsForBack: workWaitsForBack)
        self.init(
            run: run, elapsed: elapsed, phaseStartWall: phaseStartWall, phaseAge: phaseAge, presence: presence,
            absence: absence)
    }
}

extension TimerMachine {
    public func saved(at now: Now) -> SavedTimer {
        let clock = active?.clock
        var saved = SavedTimer(
            run: run, elapsed: elapsed(at: now), phaseStartWall: clock?.startWall ?? 0,
            phaseAge: clock.map { max(0, now.steady - $0.startSteady) } ?? 0, presence: presence,
            absence: absence.map { SavedAbsence($0, at: now) })
        saved.focus = clock?.focus ?? []
        saved.focusSince = clock?.focusSince
        return saved
    }

    /// Rebuilds the machine saved `downtime` seconds before `now`. A running phase ran on while
    /// the daemon was away; call `tick(at: now)` afterwards to complete it if its deadline passed.
    public init(restoring saved: SavedTimer, downtime: Double, at now: Now) {
        self.init()
        guard let run = saved.run else { return }
        let lag = max(0, downtime)
        var clock = PhaseClock(
            startWall: saved.phaseStartWall, startSteady: now.steady - saved.phaseAge - lag, focus: saved.focus,
            focusSince: saved.focusSince)
        if run.stage == .running {
            clock.stretchStart = now.steady - saved.elapsed - lag
        } else {
            clock.elapsedBefore = saved.elapsed
        }
        self.activity = .active(run, clock)
        self.presence = saved.presence
        self.absence = saved.absence.map { $0.absence(downtime: downtime, at: now) }
    }
}

/// An absence as saved, independent of any clock.
public struct SavedAbsence: Equatable, Sendable {
    /// Steady seconds since the person left, at the moment of saving.
    public var age: Double
    /// Wall time the person left.
    public var sinceWall: Double
    public var pausedWork: Bool
    public var countsWork: Bool
    public var elapsedAtLeaving: Double
    public var awayAtLeaving: Double
    /// Strict focus: seconds from the saving to the end of the grace.
    public var strictIn: Double?

    public init(
        age: Double, sinceWall: Double, pausedWork: Bool, countsWork: Bool, elapsedAtLeaving: Double,
        awayAtLeaving: Double, strictIn: Double?
    ) {
        self.age = age
        self.sinceWall = sinceWall
        self.pausedWork = pausedWork
        self.countsWork = countsWork
        self.elapsedAtLeaving = elapsedAtLeaving
        self.awayAtLeaving = awayAtLeaving
        self.strictIn = strictIn
    }

    init(_ absence: Absence, at now: Now) {
        self.init(
            age: max(0, now.steady - absence.since.steady), sinceWall: absence.since.wall, pausedWork: absence.pausedWork,
            countsWork: absence.countsWork, elapsedAtLeaving: absence.elapsedAtLeaving, awayAtLeaving: absence.awayAtLeaving,
            strictIn: absence.strictDeadline.map { $0 - now.steady })
    }

    /// The absence again, `downtime` seconds after it was saved.
    func absence(downtime: Double, at now: Now) -> Absence {
        let lag = max(0, downtime)
        return Absence(
            since: Now(steady: now.steady - age - lag, wall: sinceWall), pausedWork: pausedWork, countsWork: countsWork,
            elapsedAtLeaving: elapsedAtLeaving, awayAtLeaving: awayAtLeaving,
            strictDeadline: strictIn.map { now.steady - lag + $0 })
    }
}
