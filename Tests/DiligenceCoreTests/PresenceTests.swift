import DiligenceTestSupport
import Testing

@testable import DiligenceCore

/// Presence: what leaving the computer and coming back do to the timer (docs/presence.md).
@Suite("TimerMachine presence")
struct PresenceTests {
    static let pause = PresenceSettings(onAway: .pause)
    static let keep = PresenceSettings(onAway: .continue)
    static let abandon = PresenceSettings(onAway: .abandon)

    /// Work of `config` that has run 600 s when the person leaves under `settings`.
    func leftAt600(_ settings: PresenceSettings, _ config: TaskConfig = task()) throws -> (TimerMachine, FakeClock, Now, [TimerEvent]) {
        let clock = FakeClock()
        let origin = clock.now
        var machine = try running(config, clock)
        let events = machine.away(settings, at: clock.advance(600))
        return (machine, clock, origin, events)
    }

    // MARK: pause

    @Test func pauseStopsTheClockAndBackResumesWithTheExactRemainingTime() throws {
        var (machine, clock, origin, left) = try leftAt600(Self.pause)
        #expect(left == [.away, .paused(.work)])
        let away = machine.status(at: clock.advance(900))
        #expect(away.state == .paused)
        #expect(away.presence == .away)
        #expect(away.awaySince == origin.wall + 600)
        #expect(away.remainingSeconds == 900)
        #expect(away.pauses == 0)
        #expect(machine.back(at: clock.now) == [.back(seconds: 900, offer: false), .resumed(.work)])
        #expect(machine.presence == .here)
        #expect(machine.status(at: clock.now).awaySince == nil)
        #expect(machine.nextDeadline == origin.steady + 1500 + 900)
        let session = try #require(sessions(machine.tick(at: clock.advance(900))).first)
        #expect(session.outcome == .completed)
        #expect(session.focusedSeconds == 1500)
        #expect(session.awaySeconds == 900)
        #expect(session.end == origin.wall + 2400)
    }

    @Test func workPausedByHandIsNotResumedByComingBack() throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        _ = try machine.pause(at: clock.advance(100))
        #expect(machine.away(Self.pause, at: clock.advance(10)) == [.away])
        #expect(machine.back(at: clock.advance(50)) == [.back(seconds: 50, offer: false)])
        #expect(machine.state == .paused)
    }

    @Test func resumedByHandWhileAwayBackDoesNotResumeTwice() throws {
        var (machine, clock, _, _) = try leftAt600(Self.pause)
        _ = try machine.resume(at: clock.advance(30))
        _ = try machine.pause(at: clock.advance(30))
        #expect(machine.back(at: clock.advance(30)) == [.back(seconds: 90, offer: false)])
        #expect(machine.state == .paused)
    }

    // MARK: continue

    @Test func continueCountsTheTimeAwayAndOffersToDiscardIt() throws {
        var (machine, clock, origin, left) = try leftAt600(Self.keep)
        #expect(left == [.away])
        #expect(machine.state == .running)
        #expect(machine.back(at: clock.advance(300)) == [.back(seconds: 300, offer: true)])
        #expect(machine.status(at: clock.now).remainingSeconds == 600)
        #expect(machine.status(at: clock.now).awayOffered)
        // Keep: nothing to do; the session counts the time away and says how much it was.
        let session = try #require(sessions(machine.tick(at: clock.advance(600))).first)
        #expect(session.focusedSeconds == 1500)
        #expect(session.awaySeconds == 300)
        #expect(session.end == origin.wall + 1500)
    }

    @Test func discardTakesTheTimeAwayOutOfTheOpenPhase() throws {
        var (machine, clock, origin, _) = try leftAt600(Self.keep)
        _ = machine.back(at: clock.advance(300))
        #expect(try machine.discardAway(at: clock.advance(20)) == [.awayDiscarded(seconds: 300)])
        // 600 s before leaving and 20 s since the return count; 880 s remain.
        #expect(machine.status(at: clock.now).remainingSeconds == 880)
        #expect(machine.nextDeadline == origin.steady + 1500 + 300)
        #expect(!machine.status(at: clock.now).awayOffered)
        try expectNothingToDiscard { try machine.discardAway(at: clock.now) }
    }

    @Test func discardTrimsASessionThatEndedWhileAwayToTheMomentOfLeaving() throws {
        var (machine, clock, origin, _) = try leftAt600(Self.keep)
        let ended = machine.tick(at: clock.advance(1200))
        let completed = try #require(sessions(ended).first)
        #expect(completed.outcome == .completed)
        #expect(completed.awaySeconds == 900)
        _ = machine.back(at: clock.now)
        let revised = try machine.discardAway(at: clock.advance(5))
        var trimmed = completed
        trimmed.end = origin.wall + 600
        trimmed.focusedSeconds = 600
        trimmed.awaySeconds = 0
        trimmed.outcome = .abandoned
        trimmed.reason = .left
        trimmed.segments = [FocusSegment(start: origin.wall, seconds: 600)]
        #expect(revised == [.sessionRevised(trimmed)])
    }

    @Test func noOfferWithoutCountedWork() throws {
        var (machine, clock, _, _) = try leftAt600(Self.pause)
        _ = machine.back(at: clock.advance(300))
        try expectNothingToDiscard { try machine.discardAway(at: clock.now) }
    }

    // MARK: abandon

    @Test func abandonGivesUpWorkAtTheMomentOfLeaving() throws {
        let (machine, _, origin, left) = try leftAt600(Self.abandon)
        let session = try #require(sessions(left).first)
        #expect(left.first == .away)
        #expect(left.last == .stopped(.work))
        #expect(session.outcome == .abandoned)
        #expect(session.reason == .left)
        #expect(session.focusedSeconds == 600)
        #expect(session.end == origin.wall + 600)
        #expect(machine.state == .idle)
        #expect(machine.presence == .away)
    }

    @Test func theTasksOwnPolicyWinsOverTheConfiguredOne() throws {
        var config = task()
        config.awayPolicy = .abandon
        let (machine, _, _, left) = try leftAt600(Self.pause, config)
        #expect(sessions(left).map(\.reason) == [.left])
        #expect(machine.state == .idle)
    }

    // MARK: strict focus

    @Test func strictFocusFailsTheWorkAfterTheGraceNotBefore() throws {
        let settings = PresenceSettings(onAway: .pause, strictGrace: 10)
        var (machine, clock, origin, left) = try leftAt600(settings, task(focus: true))
        #expect(left == [.away])
        #expect(machine.state == .running)
        #expect(machine.nextDeadline == origin.steady + 610)
        #expect(machine.tick(at: clock.advance(9.5)).isEmpty)
        #expect(machine.state == .running)
        let failed = machine.tick(at: clock.advance(0.5))
        let session = try #require(sessions(failed).first)
        #expect(session.outcome == .abandoned)
        #expect(session.reason == .left)
        #expect(session.focusedSeconds == 600)
        #expect(session.end == origin.wall + 600)
        #expect(failed.last == .stopped(.work))
        #expect(machine.state == .idle)
    }

    @Test func strictFocusForgivesAGlanceWithinTheGrace() throws {
        var (machine, clock, origin, _) = try leftAt600(PresenceSettings(strictGrace: 10), task(focus: true))
        #expect(machine.back(at: clock.advance(6)) == [.back(seconds: 6, offer: false)])
        #expect(machine.nextDeadline == origin.steady + 1500)
        #expect(machine.tick(at: clock.advance(20)).isEmpty)
        let session = try #require(sessions(machine.tick(at: clock.set(steady: origin.steady + 1500))).first)
        #expect(session.outcome == .completed)
        #expect(session.awaySeconds == 6)
    }

    @Test func strictFocusWithoutGraceFailsAtOnce() throws {
        let (machine, _, _, left) = try leftAt600(PresenceSettings(strictGrace: 0), task(focus: true))
        #expect(sessions(left).map(\.reason) == [.left])
        #expect(machine.state == .idle)
    }

    @Test func strictWorkThatEndsWithinTheGraceIsCompleted() throws {
        let clock = FakeClock()
        var machine = try running(task(focus: true), clock)
        _ = machine.away(PresenceSettings(strictGrace: 10), at: clock.advance(1495))
        let events = machine.tick(at: clock.advance(10))
        #expect(sessions(events).map(\.outcome) == [.completed])
        #expect(machine.phase == .shortBreak)
    }

    // MARK: breaks and pending work

    @Test func aBreakRunsOnWhileAway() throws {
        let clock = FakeClock()
        var machine = try running(task(autostart: .breaks), clock)
        _ = machine.tick(at: clock.advance(1500))
        #expect(machine.away(Self.pause, at: clock.advance(60)) == [.away])
        #expect(machine.state == .running)
        #expect(machine.status(at: clock.advance(100)).remainingSeconds == 140)
    }

    @Test(arguments: [Autostart.work, .all])
    func workThatWouldStartByItselfWaitsForTheReturn(_ autostart: Autostart) throws {
        let clock = FakeClock()
        var machine = try running(task(autostart: .all), clock)
        _ = machine.tick(at: clock.advance(1500))
        machine.taskChanged(task(autostart: autostart))
        _ = machine.away(Self.pause, at: clock.advance(60))
        #expect(machine.tick(at: clock.advance(240)) == [.phaseCompleted(.shortBreak), .phasePending(.work)])
        #expect(machine.state == .pending)
        let back = machine.back(at: clock.advance(700))
        #expect(back == [.back(seconds: 940, offer: false), .phaseStarted(.work)])
        #expect(machine.nextDeadline == clock.now.steady + 1500)
    }

    @Test func workThatWaitsForStartStillWaitsAfterTheReturn() throws {
        let clock = FakeClock()
        var machine = try running(task(autostart: .breaks), clock)
        _ = machine.tick(at: clock.advance(1500))
        _ = machine.away(Self.pause, at: clock.advance(60))
        _ = machine.tick(at: clock.advance(240))
        #expect(machine.back(at: clock.advance(10)) == [.back(seconds: 250, offer: false)])
        #expect(machine.state == .pending)
    }

    // MARK: presence itself

    @Test func presenceStartsUnknownAndRepeatsChangeNothing() throws {
        let clock = FakeClock()
        var machine = TimerMachine()
        #expect(machine.status(at: clock.now).presence == .unknown)
        #expect(machine.back(at: clock.now).isEmpty)
        #expect(machine.presence == .here)
        #expect(machine.away(Self.pause, at: clock.advance(5)) == [.away])
        #expect(machine.away(Self.pause, at: clock.advance(5)).isEmpty)
        #expect(machine.status(at: clock.now).awaySince == FakeClock.wallStart + 5)
        #expect(machine.back(at: clock.advance(5)) == [.back(seconds: 10, offer: false)])
    }

    @Test func aSuspendDuringWorkIsTimeAway() throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        _ = clock.advance(600 + 1800)
        #expect(machine.suspended(for: 1800, policy: .pause, at: clock.now).isEmpty)
        let session = try #require(sessions(machine.tick(at: clock.advance(900))).first)
        #expect(session.awaySeconds == 1800)
        #expect(session.focusedSeconds == 1500)
    }

    @Test func anAbsenceSurvivesARestart() throws {
        let (machine, clock, origin, _) = try leftAt600(Self.pause)
        let saved = machine.saved(at: clock.advance(100))
        var restored = TimerMachine(restoring: saved, downtime: 50, at: clock.advance(50))
        #expect(restored.presence == .away)
        #expect(restored.status(at: clock.now).awaySince == origin.wall + 600)
        #expect(restored.back(at: clock.now) == [.back(seconds: 150, offer: false), .resumed(.work)])
        #expect(restored.status(at: clock.now).remainingSeconds == 900)
        _ = machine
    }

    @Test func aStrictGraceSurvivesARestart() throws {
        let (machine, clock, _, _) = try leftAt600(PresenceSettings(strictGrace: 10), task(focus: true))
        let saved = machine.saved(at: clock.advance(4))
        var restored = TimerMachine(restoring: saved, downtime: 2, at: clock.advance(2))
        #expect(restored.nextDeadline == clock.now.steady + 4)
        #expect(sessions(restored.tick(at: clock.advance(4))).map(\.reason) == [.left])
        _ = machine
    }
}

/// `discard_away` with nothing counted: refused with its code and the words a user reads.
func expectNothingToDiscard(_ body: () throws -> [TimerEvent], sourceLocation: SourceLocation = #_sourceLocation) throws {
    let error = try #require(throws: DiligenceError.self, sourceLocation: sourceLocation) { _ = try body() }
    #expect(error.code.rawValue == "nothing_to_discard", sourceLocation: sourceLocation)
    #expect(error.message == "No time away was counted as work since the last work phase began.", sourceLocation: sourceLocation)
}
