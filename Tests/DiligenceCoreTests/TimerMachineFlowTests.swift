import DiligenceTestSupport
import DiligenceTime
import Testing

@testable import DiligenceCore

/// A flow task: work counts up, the break is earned (a fifth of the work unless `rule` says).
func flowTask(
    rule: FlowBreakRule = .standard, minBreak: Int = 60, maxBreak: Int = 1800, nudge: Int? = nil,
    autostart: Autostart = .none
) -> TaskConfig {
    var config = task(autostart: autostart)
    config.mode = .flow
    config.breakRule = rule
    config.minBreakSeconds = minBreak
    config.maxBreakSeconds = maxBreak
    config.flowNudgeSeconds = nudge
    return config
}

/// Flow sessions: work with no deadline, ended as completed, a break in proportion.
@Suite("TimerMachine flow")
struct TimerMachineFlowTests {
    @Test func flowWorkCountsUpWithNoDeadlineButTheDayASessionLasts() throws {
        let clock = FakeClock()
        let origin = clock.now
        let machine = try running(flowTask(), clock)
        let status = machine.status(at: clock.advance(4000))
        #expect(status.countsUp && status.state == .running && status.phase == .work)
        #expect(status.elapsedSeconds == 4000 && status.remainingSeconds == 0 && status.endsAt == nil)
        #expect(machine.nextDeadline == origin.steady + Double(DurationText.maxSeconds))
    }

    @Test func aFlowSessionOf50MinutesEarnsTenMinutesAtOneFifth() throws {
        let clock = FakeClock()
        let origin = clock.now
        var machine = try running(flowTask(), clock)
        let events = try machine.stop(at: clock.advance(3000))
        let session = try #require(sessions(events).first)
        #expect(session.outcome == .completed && session.reason == nil)
        #expect(session.focusedSeconds == 3000 && session.plannedSeconds == 3000)
        #expect(session.start == origin.wall && session.end == origin.wall + 3000)
        #expect(events.suffix(2) == [.phaseCompleted(.work), .phasePending(.shortBreak)])
        #expect(machine.duration == 600)
        // Started, the break keeps what it earned.
        _ = try machine.start(nil, at: clock.now)
        #expect(machine.status(at: clock.now).remainingSeconds == 600)
    }

    @Test func skipEndsFlowAsCompletedToo() throws {
        let clock = FakeClock()
        var machine = try running(flowTask(), clock)
        let events = try machine.skip(at: clock.advance(1500))
        #expect(sessions(events).map(\.outcome) == [.completed])
        #expect(machine.phase == .shortBreak && machine.duration == 300)
    }

    @Test func aFlowStartedAndStoppedAtOnceIsNoSession() throws {
        let clock = FakeClock()
        var machine = try running(flowTask(), clock)
        let events = try machine.stop(at: clock.advance(30))
        // Given up as a stop is, so `min_session` drops it rather than recording a break.
        let session = try #require(sessions(events).first)
        #expect(SessionRules.whyNotRecorded(session, minimum: machine.minSession) != nil)
        #expect(events.last == .stopped(.work) && machine.state == .idle)
    }

    @Test(arguments: [
        // (work, break): a fifth of it, bounded by 1m and 30m.
        (120, 60), (300, 60), (301, 60), (3000, 600), (9000, 1800), (9005, 1800), (20000, 1800),
    ])
    func flowBreaksByRatioAtTheirBounds(work: Int, rest: Int) {
        #expect(flowTask().flowBreak(forWork: work) == rest)
    }

    @Test(arguments: [
        (1499, 360), (1500, 480), (2999, 480), (3000, 600), (80000, 600), (0, 360),
    ])
    func flowBreaksByTableAtTheirBounds(work: Int, rest: Int) throws {
        let table = try #require(FlowBreakRule.parse("<25m=5m, <50m=8m, else=15m"))
        // 5m is raised to the 6m floor, 15m lowered to the 10m ceiling.
        #expect(flowTask(rule: table, minBreak: 360, maxBreak: 600).flowBreak(forWork: work) == rest)
        #expect(table.text == "<25m=5m,<50m=8m,else=15m")
    }

    @Test(arguments: [
        "", "1/0", "0/5", "6/5", "1/101", "1/5/2", "<25m=5m", "else=5m", "<50m=5m,<25m=8m,else=9m",
        "<25m=5m,else=9m,<50m=1m", "<25m=0s,else=5m", "<25m=5m,else=25h", "a/b", "<x=5m,else=5m",
    ])
    func aBreakRuleThatIsNoneIsRefused(text: String) {
        #expect(FlowBreakRule.parse(text) == nil)
    }

    @Test func breakRulesReadBackAsTheyPrint() throws {
        for text in ["1/5", "1/1", "3/100", "<25m=5m,else=15m", "<1h30m=10m,<2h=20m,else=30m"] {
            #expect(try #require(FlowBreakRule.parse(text)).text == text)
        }
    }

    @Test func boundsOfTheBreakAreChecked() {
        #expect(throws: DiligenceError.self) { try flowTask(minBreak: 600, maxBreak: 300).validate() }
        #expect(throws: DiligenceError.self) { try flowTask(minBreak: 0).validate() }
        #expect(throws: DiligenceError.self) { try flowTask(nudge: 0).validate() }
        #expect((try? flowTask(nudge: 5400).validate()) != nil)
    }

    @Test func theNudgeIsANotificationThatStopsNothing() throws {
        let clock = FakeClock()
        let origin = clock.now
        var machine = try running(flowTask(nudge: 5400), clock)
        #expect(machine.nextDeadline == origin.steady + 5400)
        #expect(machine.tick(at: clock.advance(5400)) == [.flowNudge(seconds: 5400)])
        #expect(machine.state == .running && machine.run?.nudged == true)
        #expect(machine.nextDeadline == origin.steady + Double(DurationText.maxSeconds))
        #expect(machine.tick(at: clock.advance(60)).isEmpty)
        let session = try #require(sessions(try machine.stop(at: clock.advance(540))).first)
        #expect(session.focusedSeconds == 6000)
        #expect(machine.duration == 1200)
    }

    @Test func flowThatRunsADayCompletesThere() throws {
        let clock = FakeClock()
        var machine = try running(flowTask(), clock)
        let events = machine.tick(at: clock.advance(Double(DurationText.maxSeconds) + 10))
        #expect(sessions(events).map(\.focusedSeconds) == [DurationText.maxSeconds])
        #expect(machine.phase == .shortBreak && machine.duration == 1800)
    }

    @Test func anEarnedBreakStartsByItselfWithItsLength() throws {
        let clock = FakeClock()
        var machine = try running(flowTask(autostart: .breaks), clock)
        _ = try machine.stop(at: clock.advance(1200))
        #expect(machine.state == .running && machine.phase == .shortBreak)
        #expect(machine.status(at: clock.now).remainingSeconds == 240)
    }

    @Test func flowHasNoLongBreakAndNoExtension() throws {
        let clock = FakeClock()
        var machine = try running(flowTask(), clock)
        #expect(throws: DiligenceError.self) { try machine.extend(by: 60, at: clock.now) }
        for _ in 0..<5 {
            _ = try machine.stop(at: clock.advance(600))
            #expect(machine.phase == .shortBreak)
            _ = try machine.start(nil, at: clock.now)
            _ = machine.tick(at: clock.advance(machine.duration))
            _ = try machine.start(nil, at: clock.now)
        }
    }

    @Test func pendingFlowWorkPlansNothing() throws {
        let clock = FakeClock()
        var machine = try running(flowTask(), clock)
        _ = try machine.stop(at: clock.advance(600))
        _ = try machine.start(nil, at: clock.now)
        _ = machine.tick(at: clock.advance(machine.duration))
        #expect(machine.state == .pending && machine.phase == .work && machine.duration == 0)
        machine.taskChanged(flowTask())
        #expect(machine.duration == 0)
        _ = try machine.start(nil, at: clock.now)
        #expect(machine.status(at: clock.advance(5)).countsUp)
    }

    @Test func editingTheTaskKeepsTheBreakAlreadyEarned() throws {
        let clock = FakeClock()
        var machine = try running(flowTask(), clock)
        _ = try machine.stop(at: clock.advance(3000))
        var edited = flowTask()
        edited.shortBreakSeconds = 120
        machine.taskChanged(edited)
        #expect(machine.duration == 600)
    }

    @Test(arguments: SuspendPolicy.allCases)
    func flowAcrossASuspendFollowsThePolicy(policy: SuspendPolicy) throws {
        let clock = FakeClock()
        var machine = try running(flowTask(), clock)
        clock.advance(600)
        clock.suspend(1800)
        let events = machine.suspended(for: 1800, policy: policy, at: clock.now)
        switch policy {
        case .pause:
            #expect(machine.status(at: clock.now).elapsedSeconds == 600)
        case .continue:
            #expect(machine.status(at: clock.now).elapsedSeconds == 2400)
        case .abandon:
            #expect(sessions(events).map(\.outcome) == [.abandoned] && machine.state == .idle)
            return
        }
        let session = try #require(sessions(try machine.stop(at: clock.advance(60))).first)
        #expect(session.awaySeconds == 1800 && session.outcome == .completed)
    }
}

/// Overtime: a pomodoro that goes on past its bell until the person ends it.
@Suite("TimerMachine overtime")
struct TimerMachineOvertimeTests {
    func overtimeTask(work: Int = 1500) -> TaskConfig {
        var config = task(work: work)
        config.overtime = true
        return config
    }

    @Test func theBellRingsOnceAndTheWorkCountsUp() throws {
        let clock = FakeClock()
        var machine = try running(overtimeTask(), clock)
        #expect(machine.tick(at: clock.advance(1500)) == [.overtimeStarted])
        #expect(machine.state == .running && machine.phase == .work)
        let status = machine.status(at: clock.advance(600))
        #expect(status.countsUp && status.elapsedSeconds == 2100 && status.durationSeconds == 1500)
        #expect(machine.tick(at: clock.advance(600)).isEmpty)
    }

    @Test func endingOvertimeRecordsFocusedBeyondPlannedAndStartsTheBreak() throws {
        let clock = FakeClock()
        let origin = clock.now
        var machine = try running(overtimeTask(), clock)
        _ = machine.tick(at: clock.advance(1500))
        let events = try machine.stop(at: clock.advance(900))
        let session = try #require(sessions(events).first)
        #expect(session.outcome == .completed)
        #expect(session.plannedSeconds == 1500 && session.focusedSeconds == 2400)
        #expect(session.end == origin.wall + 2400)
        #expect(machine.phase == .shortBreak && machine.state == .pending && machine.duration == 300)
    }

    @Test func withoutOvertimeTheBellEndsTheWork() throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        let events = machine.tick(at: clock.advance(1600))
        #expect(sessions(events).map(\.focusedSeconds) == [1500])
    }

    @Test func overtimeCrossingMidnightAndADSTChange() throws {
        // 23:50 CET on the night Berlin moves its clocks from 02:00 to 03:00.
        let start = 1_774_738_200.0
        try withTimeZone("Europe/Berlin") {
            let clock = FakeClock()
            clock.stepWall(start - clock.wall)
            var machine = try running(overtimeTask(), clock)
            _ = machine.tick(at: clock.advance(1500))
            // Stopped at 03:30 CEST: 3h40m on the wall's face, 2h40m of work.
            let session = try #require(sessions(try machine.stop(at: clock.advance(9600 - 1500))).first)
            #expect(RFC3339.format(session.start) == "2026-03-28T23:50:00+01:00")
            #expect(RFC3339.format(session.end) == "2026-03-29T03:30:00+02:00")
            #expect(session.focusedSeconds == 9600 && session.plannedSeconds == 1500)
        }
    }
}

/// A restarted daemon finds the count-up where it was.
@Suite("TimerMachine count-up restore")
struct TimerMachineCountUpRestoreTests {
    func restored(_ machine: TimerMachine, at now: Now, downtime: Double = 0) -> TimerMachine {
        let later = Now(steady: 7, wall: now.wall + downtime)
        let back = TimerMachine(restoring: machine.saved(at: now), downtime: downtime, at: later)
        #expect(back.saved(at: later) == machine.saved(at: now).adding(downtime))
        return back
    }

    @Test func runningFlowRestoresItsCountExactly() throws {
        let clock = FakeClock()
        var machine = try running(flowTask(nudge: 5400), clock)
        let now = clock.advance(2400)
        var back = restored(machine, at: now)
        let later = Now(steady: 7, wall: now.wall)
        #expect(back.status(at: later) == machine.status(at: now))
        #expect(back.nextDeadline == 3007.0)
        let a = sessions(try machine.stop(at: now.adding(600)))
        let b = sessions(try back.stop(at: later.adding(600)))
        #expect(a == b && a.first?.focusedSeconds == 3000)
    }

    @Test func runningFlowCountsTheDowntime() throws {
        let clock = FakeClock()
        let machine = try running(flowTask(), clock)
        let back = restored(machine, at: clock.advance(2400), downtime: 120)
        #expect(back.status(at: Now(steady: 7, wall: 0)).elapsedSeconds == 2520)
    }

    @Test func pausedFlowAndNudgedFlowAndOvertimeAndAnEarnedBreak() throws {
        let clock = FakeClock()
        var paused = try running(flowTask(), clock)
        _ = try paused.pause(at: clock.advance(700))
        let back = restored(paused, at: clock.advance(300), downtime: 60)
        #expect(back.state == .paused && back.status(at: Now(steady: 7, wall: 0)).elapsedSeconds == 700)

        var nudged = try running(flowTask(nudge: 600), clock)
        _ = nudged.tick(at: clock.advance(600))
        #expect(restored(nudged, at: clock.advance(10)).run?.nudged == true)

        var config = task()
        config.overtime = true
        var overtime = try running(config, clock)
        _ = overtime.tick(at: clock.advance(1500))
        let after = restored(overtime, at: clock.advance(100))
        #expect(after.run?.countsUp == .overtime && after.status(at: Now(steady: 7, wall: 0)).elapsedSeconds == 1600)

        var earned = try running(flowTask(), clock)
        _ = try earned.stop(at: clock.advance(3000))
        var pending = restored(earned, at: clock.now)
        _ = try pending.start(nil, at: Now(steady: 7, wall: 0))
        #expect(pending.duration == 600)
    }
}

extension SavedTimer {
    /// The snapshot a running phase would give `seconds` later.
    fileprivate func adding(_ seconds: Double) -> SavedTimer {
        var later = self
        if state == .running { later.elapsed += seconds }
        later.phaseAge += seconds
        return later
    }
}
