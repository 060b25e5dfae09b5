import DiligenceTestSupport
import Testing

@testable import DiligenceCore

/// Status, suspends, and saving/restoring the machine.
@Suite("TimerMachine status, suspend, restore")
struct TimerMachineStateTests {
    // MARK: status

    @Test func statusWhenIdle() {
        let status = TimerMachine().status(at: FakeClock().now)
        #expect(
            status
                == TimerStatus(
                    state: .idle, phase: nil, task: nil, round: 1, longBreakEvery: 0, durationSeconds: 0,
                    remainingSeconds: 0, elapsedSeconds: 0, endsAt: nil, pauses: 0))
    }

    @Test func statusAtTheStartOfAPhase() throws {
        let clock = FakeClock()
        let machine = try running(task(), clock)
        #expect(
            machine.status(at: clock.now)
                == TimerStatus(
                    state: .running, phase: .work, task: task(), round: 1, longBreakEvery: 4, durationSeconds: 1500,
                    remainingSeconds: 1500, elapsedSeconds: 0, endsAt: clock.now.wall + 1500, pauses: 0))
    }

    @Test(arguments: [
        (0.5, 1500, 0),
        (1.0, 1499, 1),
        (59.75, 1441, 59),
        (1499.5, 1, 1499),
        (1500.0, 0, 1500),
        (1600.0, 0, 1500), // past the deadline, not yet ticked
    ])
    func remainingRoundsUpElapsedRoundsDown(_ after: Double, remaining: Int, elapsed: Int) throws {
        let clock = FakeClock()
        let start = clock.now
        let machine = try running(task(), clock)
        let status = machine.status(at: clock.advance(after))
        #expect(status.remainingSeconds == remaining)
        #expect(status.elapsedSeconds == elapsed)
        #expect(status.endsAt == start.wall + max(1500, after))
    }

    @Test func statusWhenPaused() throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        _ = try machine.pause(at: clock.advance(300.25))
        let status = machine.status(at: clock.advance(1000))
        #expect(status.state == .paused)
        #expect(status.endsAt == nil)
        #expect(status.remainingSeconds == 1200)
        #expect(status.elapsedSeconds == 300)
        #expect(status.pauses == 1)
    }

    @Test func statusWhenPendingShowsThePendingPhase() throws {
        let clock = FakeClock()
        var machine = try running(task(every: 1), clock)
        _ = machine.tick(at: clock.advance(1500))
        let status = machine.status(at: clock.advance(77))
        #expect(status.state == .pending)
        #expect(status.phase == .longBreak)
        #expect(status.durationSeconds == 900)
        #expect(status.remainingSeconds == 900)
        #expect(status.elapsedSeconds == 0)
        #expect(status.endsAt == nil)
        #expect(status.longBreakEvery == 1)
    }

    // MARK: suspended(for:policy:)

    /// A work phase that has run 600 s, then the machine slept 1800 s; `now` is after the wake-up.
    func sleptInWork(_ config: TaskConfig = task()) throws -> (TimerMachine, FakeClock, Now) {
        let clock = FakeClock()
        let origin = clock.now
        let machine = try running(config, clock)
        _ = clock.advance(600 + 1800)
        return (machine, clock, origin)
    }

    @Test func suspendUnderPauseKeepsTheRemainingTime() throws {
        var (machine, clock, origin) = try sleptInWork()
        #expect(machine.suspended(for: 1800, policy: .pause, at: clock.now).isEmpty)
        #expect(machine.state == .running)
        #expect(machine.status(at: clock.now).remainingSeconds == 900)
        #expect(machine.nextDeadline == origin.steady + 1500 + 1800)
    }

    @Test func suspendUnderContinueCountsTheSleep() throws {
        var (machine, clock, _) = try sleptInWork(task(work: 3000))
        #expect(machine.suspended(for: 1800, policy: .continue, at: clock.now).isEmpty)
        #expect(machine.status(at: clock.now).remainingSeconds == 600)
    }

    @Test func suspendUnderContinueCompletesAPhaseThatEndedDuringTheSleep() throws {
        var (machine, clock, origin) = try sleptInWork()
        let events = machine.suspended(for: 1800, policy: .continue, at: clock.now)
        let session = try #require(sessions(events).first)
        #expect(session.outcome == .completed)
        #expect(session.end == origin.wall + 1500)
        #expect(events.last == .phasePending(.shortBreak))
    }

    @Test func suspendUnderAbandonGivesUpWorkAtTheMomentOfSleep() throws {
        var (machine, clock, origin) = try sleptInWork()
        let events = machine.suspended(for: 1800, policy: .abandon, at: clock.now)
        #expect(
            events == [
                .sessionEnded(
                    WorkSession(
                        taskID: 1, taskName: "Writing", start: origin.wall, end: origin.wall + 600,
                        plannedSeconds: 1500, focusedSeconds: 600, pauses: 0, outcome: .abandoned)),
                .stopped(.work),
            ])
        #expect(machine.state == .idle)
    }

    @Test func suspendUnderAbandonInABreakRecordsNothing() throws {
        let clock = FakeClock()
        var machine = try running(task(autostart: .breaks), clock)
        _ = machine.tick(at: clock.advance(1500))
        let events = machine.suspended(for: 100, policy: .abandon, at: clock.advance(160))
        #expect(events == [.stopped(.shortBreak)])
        #expect(machine.state == .idle)
    }

    @Test(arguments: SuspendPolicy.allCases)
    func suspendWhilePausedChangesNothing(_ policy: SuspendPolicy) throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        _ = try machine.pause(at: clock.advance(600))
        let before = machine.status(at: clock.now)
        #expect(machine.suspended(for: 3600, policy: policy, at: clock.advance(3700)).isEmpty)
        #expect(machine.status(at: clock.now) == before)
    }

    @Test func suspendInFocusModeAbandonsWorkWhateverThePolicy() throws {
        for policy in [SuspendPolicy.pause, .continue] {
            var (machine, clock, _) = try sleptInWork(task(work: 3000, focus: true))
            let events = machine.suspended(for: 1800, policy: policy, at: clock.now)
            #expect(sessions(events).map(\.outcome) == [.abandoned])
            #expect(sessions(events).first?.focusedSeconds == 600)
            #expect(events.last == .stopped(.work))
            #expect(machine.state == .idle)
        }
    }

    @Test func suspendInFocusModeFollowsThePolicyInBreaks() throws {
        let clock = FakeClock()
        var machine = try running(task(autostart: .breaks, focus: true), clock)
        _ = machine.tick(at: clock.advance(1500))
        #expect(machine.suspended(for: 1000, policy: .pause, at: clock.advance(1100)).isEmpty)
        #expect(machine.phase == .shortBreak)
        #expect(machine.status(at: clock.now).remainingSeconds == 200)
    }

    @Test func suspendAfterTheDeadlinePassedCompletesFirst() throws {
        // The work deadline passed 10 s before the machine went to sleep, before any tick.
        let clock = FakeClock()
        let origin = clock.now
        let machine = try running(task(), clock)
        _ = clock.advance(1510 + 600)
        for policy in SuspendPolicy.allCases {
            var copy = machine
            let events = copy.suspended(for: 600, policy: policy, at: clock.now)
            #expect(sessions(events).map(\.outcome) == [.completed], "policy \(policy)")
            #expect(sessions(events).first?.end == origin.wall + 1500)
        }
    }

    @Test func suspendOfNothingOrNoTimeDoesNothing() throws {
        let clock = FakeClock()
        var idle = TimerMachine()
        #expect(idle.suspended(for: 100, policy: .abandon, at: clock.now).isEmpty)
        var machine = try running(task(), clock)
        let before = machine
        #expect(machine.suspended(for: 0, policy: .abandon, at: clock.advance(10)).isEmpty)
        #expect(machine == before)
    }

    // MARK: saved / restoring

    @Test func saveAndRestoreRunningWithoutDowntime() throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        _ = try machine.pause(at: clock.advance(100))
        _ = try machine.resume(at: clock.advance(50))
        let saved = machine.saved(at: clock.advance(200))
        // After a reboot the steady clock starts again near zero.
        let later = Now(steady: 5, wall: clock.now.wall)
        let restored = TimerMachine(restoring: saved, downtime: 0, at: later)
        #expect(restored.status(at: later) == machine.status(at: clock.now))
        #expect(restored.nextDeadline == 1205.0)
        #expect(restored.saved(at: later) == saved)
    }

    @Test func restoreRunningSubtractsTheDowntime() throws {
        let clock = FakeClock()
        let origin = clock.now
        let machine = try running(task(), clock)
        let saved = machine.saved(at: clock.advance(300))
        let later = Now(steady: 20, wall: clock.now.wall + 120)
        var restored = TimerMachine(restoring: saved, downtime: 120, at: later)
        #expect(restored.state == .running)
        #expect(restored.status(at: later).remainingSeconds == 1500 - 300 - 120)
        #expect(restored.nextDeadline == 1100.0)
        let session = try #require(sessions(try restored.stop(at: later)).first)
        #expect(session.start == origin.wall)
        #expect(session.focusedSeconds == 420)
    }

    @Test func restorePausedIgnoresTheDowntime() throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        _ = try machine.pause(at: clock.advance(300))
        let saved = machine.saved(at: clock.advance(50))
        let later = Now(steady: 20, wall: clock.now.wall + 7200)
        let restored = TimerMachine(restoring: saved, downtime: 7200, at: later)
        #expect(restored.state == .paused)
        #expect(restored.status(at: later) == machine.status(at: clock.now))
        #expect(restored.nextDeadline == nil)
    }

    @Test func restorePendingAndIdle() throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        _ = machine.tick(at: clock.advance(1500))
        let restored = TimerMachine(restoring: machine.saved(at: clock.now), downtime: 99, at: Now(steady: 3, wall: 0))
        #expect(restored.state == .pending)
        #expect(restored.phase == .shortBreak)
        #expect(restored.status(at: Now(steady: 3, wall: 0)).durationSeconds == 300)

        let idle = TimerMachine(restoring: TimerMachine().saved(at: clock.now), downtime: 5, at: clock.now)
        #expect(idle.state == .idle)
    }

    @Test func restoreAfterTheDeadlinePassedCompletesOnTick() throws {
        let clock = FakeClock()
        let origin = clock.now
        let machine = try running(task(), clock)
        let saved = machine.saved(at: clock.advance(1000))
        let later = Now(steady: 10, wall: clock.now.wall + 900)
        var restored = TimerMachine(restoring: saved, downtime: 900, at: later)
        let session = try #require(sessions(restored.tick(at: later)).first)
        #expect(session.outcome == .completed)
        #expect(session.end == origin.wall + 1500)
    }
}

/// Issue 13: a work phase's note goes with its session and survives a save and restore.
@Test func aNoteGoesWithTheSessionAndSurvivesARestore() throws {
    var m = TimerMachine()
    let t0 = Now(steady: 100, wall: 1_750_000_000)
    _ = try m.start(TaskConfig(id: 1, name: "Study"), at: t0)
    try m.setNote("chapter 3")
    let restored = TimerMachine(restoring: m.saved(at: t0.adding(5)), downtime: 0, at: t0.adding(5))
    #expect(restored.note == "chapter 3")
    var copy = restored
    let events = try copy.stop(at: t0.adding(120))
    let sessions = events.compactMap { if case .sessionEnded(let s) = $0 { s } else { nil } }
    #expect(sessions.map(\.note) == ["chapter 3"])
    #expect(copy.note == nil)
    let refused = try #require(throws: DiligenceError.self) { try copy.setNote("no work") }
    #expect(refused.code.rawValue == "not_running", "\(refused)")
    #expect(refused.message.hasPrefix("A note goes with a work session, and no work phase runs now"), "\(refused.message)")
}

/// A pending break (work ended, break not started) carries no note: the note went with the
/// ended work session, and `status.note` is the running or paused work phase's only.
@Test func aPendingBreakCarriesNoNote() throws {
    let clock = FakeClock()
    var m = try running(task(), clock)
    try m.setNote("chapter 4")
    let events = m.tick(at: clock.advance(1500))
    let sessions = events.compactMap { if case .sessionEnded(let s) = $0 { s } else { nil } }
    #expect(sessions.map(\.note) == ["chapter 4"])
    #expect(m.state == .pending && m.phase == .shortBreak)
    #expect(m.note == nil, "\(m.note ?? "")")
    let restored = TimerMachine(restoring: m.saved(at: clock.now), downtime: 0, at: clock.now)
    #expect(restored.note == nil)
}
