import DiligenceTestSupport
import Testing

@testable import DiligenceCore

/// Rounds, breaks, autostart, absolute deadlines and the catch-up rule.
@Suite("TimerMachine cycles")
struct TimerMachineCycleTests {
    /// Runs `count` phases of `config` from idle, starting pending phases at once and ticking
    /// exactly at each deadline; returns (phase, round) of each phase as it started.
    func drive(_ config: TaskConfig, phases count: Int) throws -> [(Phase, Int)] {
        let clock = FakeClock()
        var machine = try running(config, clock)
        var seen: [(Phase, Int)] = []
        for _ in 0..<count {
            seen.append((try #require(machine.phase), machine.round))
            let deadline = try #require(machine.nextDeadline)
            _ = machine.tick(at: clock.set(steady: deadline))
            if machine.state == .pending { _ = try machine.start(nil, at: clock.now) }
        }
        return seen
    }

    func text(_ seen: [(Phase, Int)]) -> String {
        seen.map { phase, round in
            switch phase {
            case .work: "W\(round)"
            case .shortBreak: "S\(round)"
            case .longBreak: "L\(round)"
            }
        }.joined(separator: " ")
    }

    // MARK: Rounds and long breaks

    @Test func longBreakEveryFourRounds() throws {
        let seen = try drive(task(every: 4), phases: 18)
        #expect(text(seen) == "W1 S1 W2 S2 W3 S3 W4 L4 W1 S1 W2 S2 W3 S3 W4 L4 W1 S1")
    }

    /// Issue 13: a skipped round counted toward the long break (skip work four times, get a
    /// long break). Now it is done again: a short break after it, and the same round number.
    @Test func aSkippedRoundDoesNotCountTowardTheLongBreak() throws {
        let clock = FakeClock()
        var machine = try running(task(every: 2), clock)
        var seen: [(Phase, Int)] = []
        func note() { seen.append((machine.phase!, machine.round)) }
        note() // W1
        _ = machine.tick(at: clock.advance(1500)) // completed
        _ = try machine.start(nil, at: clock.now)
        note() // S1
        _ = machine.tick(at: clock.advance(300))
        _ = try machine.start(nil, at: clock.now)
        note() // W2, skipped
        _ = try machine.skip(at: clock.advance(100))
        _ = try machine.start(nil, at: clock.now)
        note() // a short break, still round 2
        _ = machine.tick(at: clock.advance(300))
        _ = try machine.start(nil, at: clock.now)
        note() // W2 again
        _ = machine.tick(at: clock.advance(1500))
        _ = try machine.start(nil, at: clock.now)
        note() // now the long break
        #expect(text(seen) == "W1 S1 W2 S2 W2 L2")
        // Without breaks: the skipped round is worked again under its number.
        var plain = try running(task(every: 2, breaks: false), clock)
        _ = try plain.skip(at: clock.advance(10))
        #expect(plain.round == 1)
        _ = try plain.start(nil, at: clock.now)
        _ = plain.tick(at: clock.advance(1500))
        #expect(plain.round == 2)
    }

    @Test func aSkippedRoundIsKeptAcrossARestart() throws {
        let clock = FakeClock()
        var machine = try running(task(every: 2), clock)
        _ = machine.tick(at: clock.advance(1500))
        _ = try machine.start(nil, at: clock.now)
        _ = machine.tick(at: clock.advance(300))
        _ = try machine.start(nil, at: clock.now)
        _ = try machine.skip(at: clock.advance(100)) // round 2 skipped: a short break pending
        var restored = TimerMachine(restoring: machine.saved(at: clock.now), downtime: 5, at: clock.advance(5))
        _ = try restored.start(nil, at: clock.now)
        _ = restored.tick(at: clock.advance(300))
        #expect(restored.phase == .work && restored.round == 2)
    }

    @Test func longBreakEveryZeroIsNeverLong() throws {
        let seen = try drive(task(every: 0), phases: 12)
        #expect(text(seen) == "W1 S1 W2 S2 W3 S3 W4 S4 W5 S5 W6 S6")
    }

    @Test func longBreakEveryOneIsAlwaysLong() throws {
        let seen = try drive(task(every: 1), phases: 6)
        #expect(text(seen) == "W1 L1 W1 L1 W1 L1")
    }

    @Test func breaksOffChainsWorkAndWrapsRounds() throws {
        let seen = try drive(task(every: 3, breaks: false), phases: 7)
        #expect(text(seen) == "W1 W2 W3 W1 W2 W3 W1")
        let never = try drive(task(every: 0, breaks: false), phases: 5)
        #expect(text(never) == "W1 W2 W3 W4 W5")
    }

    // MARK: Autostart

    @Test(arguments: [
        (Autostart.none, false, false),
        (Autostart.breaks, true, false),
        (Autostart.work, false, true),
        (Autostart.all, true, true),
    ])
    func autostartDecidesWhatStartsByItself(_ mode: Autostart, breakStarts: Bool, workStarts: Bool) throws {
        let clock = FakeClock()
        var machine = try running(task(autostart: mode), clock)

        let afterWork = machine.tick(at: clock.advance(1500))
        #expect(sessions(afterWork).map(\.outcome) == [.completed])
        #expect(afterWork.last == (breakStarts ? .phaseStarted(.shortBreak) : .phasePending(.shortBreak)))
        #expect(machine.state == (breakStarts ? .running : .pending))
        if !breakStarts { _ = try machine.start(nil, at: clock.now) }

        let afterBreak = machine.tick(at: clock.advance(300))
        #expect(afterBreak == [.phaseCompleted(.shortBreak), workStarts ? .phaseStarted(.work) : .phasePending(.work)])
        #expect(machine.state == (workStarts ? .running : .pending))
        #expect(machine.round == 2)
    }

    @Test func completedWorkEventsComeInOrder() throws {
        let clock = FakeClock()
        let startWall = clock.now.wall
        var machine = try running(task(), clock)
        let events = machine.tick(at: clock.advance(1500))
        #expect(
            events == [
                .sessionEnded(
                    WorkSession(
                        taskID: 1, taskName: "Writing", start: startWall, end: startWall + 1500,
                        plannedSeconds: 1500, focusedSeconds: 1500, pauses: 0, outcome: .completed)),
                .phaseCompleted(.work),
                .phasePending(.shortBreak),
            ])
    }

    // MARK: A changed task applies from the next phase

    @Test func taskChangedMidPhaseKeepsTheRunningPhase() throws {
        let clock = FakeClock()
        let start = clock.now.steady
        var machine = try running(task(), clock)
        _ = clock.advance(100)
        machine.taskChanged(task(work: 3000, shortBreak: 600))
        #expect(machine.duration == 1500)
        #expect(machine.nextDeadline == start + 1500)
        #expect(machine.status(at: clock.now).remainingSeconds == 1400)

        _ = machine.tick(at: clock.set(steady: start + 1500))
        #expect(machine.phase == .shortBreak)
        #expect(machine.status(at: clock.now).durationSeconds == 600)
        _ = try machine.start(nil, at: clock.now)
        #expect(machine.nextDeadline == clock.now.steady + 600)
        _ = machine.tick(at: clock.advance(600))
        _ = try machine.start(nil, at: clock.now)
        #expect(machine.duration == 3000)
    }

    @Test func taskChangedWhilePendingAppliesToThePendingPhase() throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        _ = machine.tick(at: clock.advance(1500))
        #expect(machine.state == .pending)
        machine.taskChanged(task(shortBreak: 420))
        // What status shows for the pending phase is what `start` will run.
        #expect(machine.status(at: clock.now).durationSeconds == 420)
        #expect(machine.status(at: clock.now).remainingSeconds == 420)
        _ = try machine.start(nil, at: clock.now)
        #expect(machine.duration == 420)
    }

    @Test func taskChangedForAnotherTaskIsIgnored() throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        machine.taskChanged(task(id: 2, name: "Other", work: 60))
        #expect(machine.task == task())
    }

    // MARK: Absolute deadlines

    @Test func lateTicksNeverShiftLaterDeadlines() throws {
        let config = task(work: 1500, shortBreak: 300, longBreak: 900, every: 4, autostart: .all)
        let clock = FakeClock()
        let origin = clock.now
        var machine = try running(config, clock)
        var plannedSum = 0.0
        var completedWork = 0
        for n in 1...1000 {
            let phase = try #require(machine.phase)
            plannedSum += Double(config.seconds(for: phase))
            let deadline = try #require(machine.nextDeadline)
            #expect(deadline == origin.steady + plannedSum)
            // Late by 0 to 3.75 s, varying; always less than the shortest phase.
            let lateness = Double((n * 7) % 16) * 0.25
            let events = machine.tick(at: clock.set(steady: deadline + lateness))
            #expect(events.filter { if case .phaseCompleted = $0 { true } else { false } } == [.phaseCompleted(phase)])
            for session in sessions(events) {
                completedWork += 1
                #expect(session.outcome == .completed)
                #expect(session.end == origin.wall + plannedSum)
                #expect(session.start == origin.wall + plannedSum - 1500)
            }
        }
        // 1000 phases alternate work and break: 500 work sessions, 125 cycles of 4.
        #expect(completedWork == 500)
        #expect(machine.nextDeadline == origin.steady + plannedSum + 1500)
        #expect(plannedSum == Double(125 * (4 * 1500 + 3 * 300 + 900)))
    }

    @Test func tickBeforeTheDeadlineDoesNothing() throws {
        let clock = FakeClock()
        var machine = try running(task(autostart: .all), clock)
        let before = machine
        #expect(machine.tick(at: clock.advance(1499.999)).isEmpty)
        #expect(machine == before)
    }

    @Test func aChainedPhaseAlreadyOverRestartsAtNow() throws {
        let clock = FakeClock()
        let origin = clock.now
        var machine = try running(task(autostart: .all), clock)
        // Nobody drove the timer for 2000 s after the work deadline: the short break (300 s)
        // would be over too, and so would the work after it.
        let events = machine.tick(at: clock.advance(1500 + 2000))
        #expect(sessions(events).count == 1)
        #expect(sessions(events).first?.end == origin.wall + 1500)
        #expect(events.last == .phaseStarted(.shortBreak))
        #expect(machine.phase == .shortBreak)
        #expect(machine.nextDeadline == clock.now.steady + 300)
        #expect(machine.status(at: clock.now).elapsedSeconds == 0)
    }

    @Test func aChainedWorkPhaseAlreadyOverRecordsNoPhantomSession() throws {
        let clock = FakeClock()
        var machine = try running(task(autostart: .all), clock)
        _ = machine.tick(at: clock.advance(1500))
        #expect(machine.phase == .shortBreak)
        let events = machine.tick(at: clock.advance(300 + 5000))
        #expect(sessions(events).isEmpty)
        #expect(events == [.phaseCompleted(.shortBreak), .phaseStarted(.work)])
        #expect(machine.nextDeadline == clock.now.steady + 1500)

        // The work phase that runs now starts at `now` when it is recorded.
        let restartedWall = clock.now.wall
        let session = try #require(sessions(machine.tick(at: clock.advance(1500))).first)
        #expect(session.start == restartedWall)
        #expect(session.focusedSeconds == 1500)
    }

    @Test func nextDeadlineOnlyWhileRunning() throws {
        let clock = FakeClock()
        var machine = TimerMachine()
        #expect(machine.nextDeadline == nil)
        _ = try machine.start(task(), at: clock.now)
        #expect(machine.nextDeadline == clock.now.steady + 1500)
        _ = try machine.pause(at: clock.advance(10))
        #expect(machine.nextDeadline == nil)
        _ = try machine.resume(at: clock.advance(10))
        #expect(machine.nextDeadline == clock.now.steady + 1490)
        _ = machine.tick(at: clock.advance(1490))
        #expect(machine.state == .pending)
        #expect(machine.nextDeadline == nil)
    }

    // MARK: A whole day

    @Test func aWorkdayOfFourCycles() throws {
        // 25/5/15, a long break every 4, everything chains; the driver ticks once per deadline.
        let config = task(work: 1500, shortBreak: 300, longBreak: 900, every: 4, autostart: .all)
        let clock = FakeClock()
        let origin = clock.now
        var machine = try running(config, clock)
        var completed: [WorkSession] = []
        var longBreaks = 0
        var ticks = 0
        // Four cycles: 16 work phases, 12 short breaks, 4 long breaks = 8 h 40 min.
        let day = 4.0 * (4 * 1500 + 3 * 300 + 900)
        while let deadline = machine.nextDeadline, deadline <= origin.steady + day {
            let events = machine.tick(at: clock.set(steady: deadline))
            ticks += 1
            completed += sessions(events).filter { $0.outcome == .completed }
            longBreaks += events.filter { $0 == .phaseCompleted(.longBreak) }.count
        }
        #expect(ticks == 32)
        #expect(completed.count == 16)
        #expect(longBreaks == 4)
        #expect(completed.allSatisfy { $0.focusedSeconds == 1500 && $0.plannedSeconds == 1500 && $0.pauses == 0 })
        // The 16th work session ends 15 min before the day: before the last long break.
        #expect(completed.last?.end == origin.wall + day - 900)
        #expect(clock.now.steady == origin.steady + day)
        #expect(machine.phase == .work)
        #expect(machine.round == 1)
        #expect(machine.nextDeadline == origin.steady + day + 1500)
    }
}
