import DiligenceTestSupport
import Testing

@testable import DiligenceCore

/// The user's commands: start, pause, resume, toggle, stop, skip, extend (docs/protocol.md, "Commands").
@Suite("TimerMachine commands")
struct TimerMachineCommandTests {
    // MARK: start

    @Test func startFromIdleRunsWorkOfTheTask() throws {
        let clock = FakeClock()
        var machine = TimerMachine()
        let events = try machine.start(task(), at: clock.now)
        #expect(events == [.phaseStarted(.work)])
        #expect(machine.state == .running)
        #expect(machine.phase == .work)
        #expect(machine.task?.name == "Writing")
        #expect(machine.round == 1)
        #expect(machine.duration == 1500)
        #expect(machine.nextDeadline == clock.now.steady + 1500)
    }

    @Test func startFromIdleWithoutATaskIsNoTask() {
        var machine = TimerMachine()
        #expect(errorCode { try machine.start(nil, at: FakeClock().now) } == "no_task")
        #expect(machine.state == .idle)
    }

    @Test(arguments: [nil, task()] as [TaskConfig?])
    func startFromPendingStartsThePendingPhase(_ named: TaskConfig?) throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        _ = machine.tick(at: clock.advance(1500))
        #expect(machine.state == .pending)
        #expect(machine.phase == .shortBreak)

        let events = try machine.start(named, at: clock.advance(60))
        #expect(events == [.phaseStarted(.shortBreak)])
        #expect(machine.state == .running)
        #expect(machine.round == 1)
        #expect(machine.nextDeadline == clock.now.steady + 300)
    }

    @Test func startFromPendingWithAnotherTaskStartsItsWorkAtRoundOne() throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        _ = machine.tick(at: clock.advance(1500))
        _ = try machine.start(nil, at: clock.now)
        _ = machine.tick(at: clock.advance(300))
        #expect(machine.state == .pending)
        #expect(machine.round == 2)

        let other = task(id: 2, name: "Reading", work: 600)
        let events = try machine.start(other, at: clock.advance(10))
        #expect(events == [.phaseStarted(.work)])
        #expect(machine.task == other)
        #expect(machine.phase == .work)
        #expect(machine.round == 1)
        #expect(machine.duration == 600)
    }

    @Test(arguments: [nil, task()] as [TaskConfig?])
    func startFromPausedWithTheSameTaskResumes(_ named: TaskConfig?) throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        _ = try machine.pause(at: clock.advance(100))
        let events = try machine.start(named, at: clock.advance(50))
        #expect(events == [.resumed(.work)])
        #expect(machine.state == .running)
        #expect(machine.nextDeadline == clock.now.steady + 1400)
    }

    @Test func startFromPausedWithAnotherTaskIsAlreadyRunning() throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        _ = try machine.pause(at: clock.advance(100))
        let before = machine
        #expect(errorCode { try machine.start(task(id: 2, name: "Other"), at: clock.now) } == "already_running")
        #expect(machine == before)
    }

    @Test(arguments: [nil, task(), task(id: 2, name: "Other")] as [TaskConfig?])
    func startWhileRunningIsAlreadyRunning(_ named: TaskConfig?) throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        let before = machine
        #expect(errorCode { try machine.start(named, at: clock.advance(5)) } == "already_running")
        #expect(machine == before)
    }

    // MARK: pause, resume, toggle

    @Test func pauseAndResumeShiftTheDeadlineByThePause() throws {
        let clock = FakeClock()
        let start = clock.now.steady
        var machine = try running(task(), clock)
        #expect(try machine.pause(at: clock.advance(600)) == [.paused(.work)])
        #expect(machine.state == .paused)
        #expect(machine.pauses == 1)
        #expect(machine.nextDeadline == nil)
        #expect(try machine.resume(at: clock.advance(420)) == [.resumed(.work)])
        #expect(machine.state == .running)
        #expect(machine.nextDeadline == start + 1500 + 420)
        #expect(machine.elapsed(at: clock.now) == 600)
    }

    @Test func pausesAreCountedOnlyInWork() throws {
        let clock = FakeClock()
        var machine = try running(task(autostart: .breaks), clock)
        _ = machine.tick(at: clock.advance(1500))
        #expect(machine.phase == .shortBreak)
        #expect(try machine.pause(at: clock.advance(10)) == [.paused(.shortBreak)])
        #expect(machine.pauses == 0)
    }

    @Test func pauseWhenNotRunningIsNotRunning() throws {
        let clock = FakeClock()
        var machine = TimerMachine()
        #expect(errorCode { try machine.pause(at: clock.now) } == "not_running")

        machine = try running(task(), clock)
        _ = try machine.pause(at: clock.advance(5))
        #expect(errorCode { try machine.pause(at: clock.advance(5)) } == "not_running")
        #expect(machine.pauses == 1)

        machine = try running(task(), clock)
        _ = machine.tick(at: clock.advance(1500))
        #expect(machine.state == .pending)
        #expect(errorCode { try machine.pause(at: clock.now) } == "not_running")
    }

    @Test func resumeWhenNotPausedIsNotPaused() throws {
        let clock = FakeClock()
        var machine = TimerMachine()
        #expect(errorCode { try machine.resume(at: clock.now) } == "not_paused")

        machine = try running(task(), clock)
        #expect(errorCode { try machine.resume(at: clock.advance(5)) } == "not_paused")

        _ = machine.tick(at: clock.advance(1500))
        #expect(machine.state == .pending)
        #expect(errorCode { try machine.resume(at: clock.now) } == "not_paused")
    }

    @Test func toggleInEveryState() throws {
        let clock = FakeClock()
        var machine = TimerMachine()
        #expect(errorCode { try machine.toggle(nil, at: clock.now) } == "no_task")
        #expect(try machine.toggle(task(), at: clock.now) == [.phaseStarted(.work)])
        #expect(try machine.toggle(nil, at: clock.advance(10)) == [.paused(.work)])
        #expect(try machine.toggle(nil, at: clock.advance(10)) == [.resumed(.work)])
        _ = machine.tick(at: clock.advance(1490))
        #expect(machine.state == .pending)
        #expect(try machine.toggle(task(id: 9, name: "Ignored"), at: clock.now) == [.phaseStarted(.shortBreak)])
        #expect(machine.task?.name == "Writing")
    }

    @Test func focusModeRefusesPauseInWork() throws {
        let clock = FakeClock()
        var machine = try running(task(focus: true), clock)
        #expect(errorCode { try machine.pause(at: clock.advance(10)) } == "focus_mode")
        #expect(errorCode { try machine.toggle(nil, at: clock.now) } == "focus_mode")
        #expect(machine.state == .running)
        #expect(machine.pauses == 0)
    }

    /// Issue 13: strict focus refused pause but let `skip` end the work early, and recorded it.
    @Test func focusModeRefusesSkipInWorkAsItRefusesPause() throws {
        let clock = FakeClock()
        var machine = try running(task(autostart: .none, focus: true), clock)
        #expect(errorCode { try machine.skip(at: clock.advance(10)) } == "focus_mode")
        #expect(machine.state == .running && machine.phase == .work)
        // A pending work phase neither: skipping it is leaving the work as much.
        _ = machine.tick(at: clock.advance(1490))
        _ = try machine.start(nil, at: clock.now)
        _ = machine.tick(at: clock.advance(300))
        #expect(machine.state == .pending && machine.phase == .work)
        #expect(errorCode { try machine.skip(at: clock.now) } == "focus_mode")
        // Breaks may be skipped: they are not the work.
        _ = try machine.start(nil, at: clock.now)
        _ = machine.tick(at: clock.advance(1500))
        #expect(machine.phase == .shortBreak)
        #expect(try machine.skip(at: clock.advance(5)).contains(.skipped(.shortBreak)))
    }

    @Test func focusModeAllowsPauseInBreaks() throws {
        let clock = FakeClock()
        var machine = try running(task(autostart: .all, focus: true), clock)
        _ = machine.tick(at: clock.advance(1500))
        #expect(machine.phase == .shortBreak)
        #expect(try machine.pause(at: clock.advance(10)) == [.paused(.shortBreak)])
        #expect(try machine.resume(at: clock.advance(10)) == [.resumed(.shortBreak)])
    }

    // MARK: stop

    @Test func stopRecordsWorkAsAbandonedWithoutPauses() throws {
        let clock = FakeClock()
        let startWall = clock.now.wall
        var machine = try running(task(), clock)
        _ = try machine.pause(at: clock.advance(600))
        _ = try machine.resume(at: clock.advance(300))
        let events = try machine.stop(at: clock.advance(180))
        #expect(
            events == [
                .sessionEnded(
                    WorkSession(
                        taskID: 1, taskName: "Writing", start: startWall, end: clock.now.wall,
                        plannedSeconds: 1500, focusedSeconds: 780, pauses: 1, outcome: .abandoned,
                        segments: [FocusSegment(start: startWall, seconds: 600), FocusSegment(start: startWall + 900, seconds: 180)])),
                .stopped(.work),
            ])
        #expect(machine.state == .idle)
        #expect(machine.phase == nil)
        #expect(machine.task == nil)
        #expect(machine.nextDeadline == nil)
    }

    @Test func stopWhilePausedCountsOnlyTheRunningTime() throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        _ = try machine.pause(at: clock.advance(200))
        let session = try #require(sessions(try machine.stop(at: clock.advance(5000))).first)
        #expect(session.focusedSeconds == 200)
        #expect(session.pauses == 1)
        #expect(session.outcome == .abandoned)
    }

    @Test func stopInABreakRecordsNothing() throws {
        let clock = FakeClock()
        var machine = try running(task(autostart: .breaks), clock)
        _ = machine.tick(at: clock.advance(1500))
        #expect(try machine.stop(at: clock.advance(100)) == [.stopped(.shortBreak)])
        #expect(machine.state == .idle)
    }

    @Test func stopWhenPendingGoesIdleRecordingNothing() throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        _ = machine.tick(at: clock.advance(1500))
        #expect(machine.state == .pending)
        let events = try machine.stop(at: clock.advance(100))
        #expect(sessions(events).isEmpty)
        // Recorded nothing, but changed the timer: watchers hear of it.
        #expect(events == [.stopped(.shortBreak)])
        #expect(machine.state == .idle)
        #expect(machine.phase == nil)
        #expect(machine.round == 1)
    }

    @Test func stopWhenIdleIsNotRunning() {
        var machine = TimerMachine()
        #expect(errorCode { try machine.stop(at: FakeClock().now) } == "not_running")
    }

    // MARK: skip

    @Test func skipRecordsWorkAsSkippedAndMovesOn() throws {
        let clock = FakeClock()
        let startWall = clock.now.wall
        var machine = try running(task(), clock)
        let events = try machine.skip(at: clock.advance(600))
        #expect(
            events == [
                .sessionEnded(
                    WorkSession(
                        taskID: 1, taskName: "Writing", start: startWall, end: clock.now.wall,
                        plannedSeconds: 1500, focusedSeconds: 600, pauses: 0, outcome: .skipped)),
                .skipped(.work),
                .phasePending(.shortBreak),
            ])
        #expect(machine.state == .pending)
        #expect(machine.round == 1)
    }

    @Test func skipABreakMovesToTheNextRound() throws {
        let clock = FakeClock()
        var machine = try running(task(autostart: .breaks), clock)
        _ = machine.tick(at: clock.advance(1500))
        let events = try machine.skip(at: clock.advance(30))
        #expect(events == [.skipped(.shortBreak), .phasePending(.work)])
        #expect(machine.round == 2)
    }

    @Test func skipAPendingPhaseMovesOnWithoutRecording() throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        _ = machine.tick(at: clock.advance(1500))
        #expect(machine.phase == .shortBreak)
        #expect(try machine.skip(at: clock.now) == [.skipped(.shortBreak), .phasePending(.work)])
        #expect(machine.round == 2)
        // A pending work phase is skipped without a session: it never ran.
        #expect(try machine.skip(at: clock.now) == [.skipped(.work), .phasePending(.shortBreak)])
        #expect(machine.round == 2)
    }

    @Test func skipAppliesAutostart() throws {
        let clock = FakeClock()
        var machine = try running(task(autostart: .breaks), clock)
        let events = try machine.skip(at: clock.advance(100))
        #expect(events.last == .phaseStarted(.shortBreak))
        #expect(machine.state == .running)
        #expect(machine.nextDeadline == clock.now.steady + 300)
    }

    @Test func skipWhenIdleIsNotRunning() {
        var machine = TimerMachine()
        #expect(errorCode { try machine.skip(at: FakeClock().now) } == "not_running")
    }

    // MARK: extend

    @Test func extendARunningPhaseMovesItsDeadline() throws {
        let clock = FakeClock()
        let start = clock.now.steady
        var machine = try running(task(), clock)
        #expect(try machine.extend(by: 300, at: clock.advance(1000)) == [.extended(.work, seconds: 300)])
        #expect(machine.duration == 1800)
        #expect(machine.nextDeadline == start + 1800)
        #expect(machine.tick(at: clock.set(steady: start + 1799)).isEmpty)

        let session = try #require(sessions(machine.tick(at: clock.set(steady: start + 1800))).first)
        #expect(session.outcome == .completed)
        #expect(session.plannedSeconds == 1800)
        #expect(session.focusedSeconds == 1800)
    }

    @Test func extendAPausedPhase() throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        _ = try machine.pause(at: clock.advance(500))
        #expect(try machine.extend(by: 60, at: clock.advance(100)) == [.extended(.work, seconds: 60)])
        #expect(machine.state == .paused)
        #expect(machine.status(at: clock.now).remainingSeconds == 1060)
        _ = try machine.resume(at: clock.now)
        #expect(machine.nextDeadline == clock.now.steady + 1060)

        let session = try #require(sessions(try machine.stop(at: clock.advance(60))).first)
        #expect(session.plannedSeconds == 1560)
        #expect(session.focusedSeconds == 560)
    }

    @Test func extendWhenIdleOrPendingIsNotRunning() throws {
        let clock = FakeClock()
        var machine = TimerMachine()
        #expect(errorCode { try machine.extend(by: 300, at: clock.now) } == "not_running")
        machine = try running(task(), clock)
        _ = machine.tick(at: clock.advance(1500))
        #expect(machine.state == .pending)
        #expect(errorCode { try machine.extend(by: 300, at: clock.now) } == "not_running")
        #expect(machine.duration == 300)
    }

    @Test(arguments: [0, -1, -300, DurationText.maxSeconds])
    func extendByANonPositiveOrHugeDurationIsRefused(_ seconds: Int) throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        #expect(errorCode { try machine.extend(by: seconds, at: clock.advance(1)) } == "invalid_duration")
        #expect(machine.duration == 1500)
    }
}

/// Issue 13: `start Study; stop` recorded a 0-second session; 10 of 13 non-completed sessions in
/// a normal hour lasted under a second. Work stopped or skipped after less focus than
/// `min_session` is no session; completed work always is.
@Suite struct MinSessionTests {
    func ended(_ outcome: Outcome, focused: Int) -> WorkSession {
        WorkSession(
            taskID: 1, taskName: "Study", start: 1000, end: 1000 + Double(focused) + 5, plannedSeconds: 1500,
            focusedSeconds: focused, pauses: 0, outcome: outcome)
    }

    @Test func stoppedOrSkippedWorkShorterThanMinSessionIsNotWorthRecording() {
        #expect(SessionRules.whyNotRecorded(ended(.abandoned, focused: 0), minimum: 60)?.contains("min_session (1m)") == true)
        #expect(SessionRules.whyNotRecorded(ended(.skipped, focused: 59), minimum: 60) != nil)
        #expect(SessionRules.whyNotRecorded(ended(.skipped, focused: 60), minimum: 60) == nil)
        #expect(SessionRules.whyNotRecorded(ended(.abandoned, focused: 5), minimum: 0) == nil, "0 records everything")
        #expect(SessionRules.whyNotRecorded(ended(.completed, focused: 20), minimum: 60) == nil, "a completed phase always counts")
    }

    /// Issue 32, item 19: strict focus is about failing, and a failure is what the person wants
    /// to see; one in the first minute went unrecorded. Start-then-stop stays noise.
    @Test func aStrictFailureIsRecordedWhateverItsLength() throws {
        let clock = FakeClock()
        var machine = try running(task(focus: true), clock)
        let left = machine.away(PresenceSettings(strictGrace: 10), at: clock.advance(5))
        let failed = try #require(sessions(left + machine.tick(at: clock.advance(10))).first)
        #expect(failed.reason == .left && failed.focusedSeconds == 5)
        #expect(SessionRules.whyNotRecorded(failed, minimum: 60) == nil)
        var slept = try running(task(focus: true), clock)
        let suspended = try #require(sessions(slept.suspended(for: 100, policy: .pause, at: clock.advance(120))).first)
        #expect(suspended.reason == .left, "a suspend in strict focus mode fails the work as leaving does")
        #expect(SessionRules.whyNotRecorded(suspended, minimum: 60) == nil)
        var voided = ended(.abandoned, focused: 3)
        voided.reason = .interrupted
        #expect(SessionRules.whyNotRecorded(voided, minimum: 60) == nil, "void_on_interrupt's failure")
        #expect(SessionRules.whyNotRecorded(ended(.abandoned, focused: 3), minimum: 60) != nil, "start-then-stop")
    }
}
