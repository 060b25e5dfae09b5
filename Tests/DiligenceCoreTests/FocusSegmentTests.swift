import DiligenceTestSupport
import Testing

@testable import DiligenceCore

/// A work session keeps the stretches it was focused (issue 31): every pause, absence and
/// suspend ends one, and the segments always sum to its focused time.
@Suite("Focus segments")
struct FocusSegmentTests {
    func spans(_ session: WorkSession, from origin: Now) -> [[Double]] {
        session.segments.map { [$0.start - origin.wall, Double($0.seconds)] }
    }

    func sum(_ session: WorkSession) -> Int { session.segments.reduce(0) { $0 + $1.seconds } }

    @Test func pausesEndSegments() throws {
        let clock = FakeClock()
        let origin = clock.now
        var machine = try running(task(), clock)
        _ = try machine.pause(at: clock.advance(100))
        _ = try machine.resume(at: clock.advance(60))
        _ = try machine.pause(at: clock.advance(200))
        _ = try machine.resume(at: clock.advance(40))
        let session = try #require(sessions(try machine.stop(at: clock.advance(50))).first)
        #expect(session.focusedSeconds == 350)
        #expect(spans(session, from: origin) == [[0, 100], [160, 200], [400, 50]])
        #expect(sum(session) == session.focusedSeconds)
    }

    @Test func aCompletedSessionEndsItsLastSegmentAtItsEnd() throws {
        let clock = FakeClock()
        let origin = clock.now
        var machine = try running(task(), clock)
        _ = try machine.pause(at: clock.advance(600))
        _ = try machine.resume(at: clock.advance(300))
        let session = try #require(sessions(machine.tick(at: clock.advance(900))).first)
        #expect(spans(session, from: origin) == [[0, 600], [900, 900]])
        #expect(session.segments.last?.end == session.end)
        #expect(sum(session) == 1500)
    }

    @Test func awayUnderPauseEndsASegmentAndBackStartsOne() throws {
        let clock = FakeClock()
        let origin = clock.now
        var machine = try running(task(), clock)
        _ = machine.away(PresenceSettings(onAway: .pause), at: clock.advance(600))
        _ = machine.back(at: clock.advance(120))
        let session = try #require(sessions(machine.tick(at: clock.advance(900))).first)
        #expect(spans(session, from: origin) == [[0, 600], [720, 900]])
    }

    @Test func discardedAwayTimeIsNoSegment() throws {
        let clock = FakeClock()
        let origin = clock.now
        var machine = try running(task(), clock)
        _ = machine.away(PresenceSettings(onAway: .continue), at: clock.advance(600))
        _ = machine.back(at: clock.advance(120))
        _ = try machine.discardAway(at: clock.advance(30))
        let session = try #require(sessions(machine.tick(at: clock.advance(870))).first)
        #expect(spans(session, from: origin) == [[0, 600], [720, 900]])
        #expect(sum(session) == session.focusedSeconds)
    }

    @Test func aTrimmedSessionKeepsTheSegmentsBeforeTheLeaving() throws {
        let clock = FakeClock()
        let origin = clock.now
        var machine = try running(task(), clock)
        _ = try machine.pause(at: clock.advance(300))
        _ = try machine.resume(at: clock.advance(100))
        _ = machine.away(PresenceSettings(onAway: .continue), at: clock.advance(1000))
        _ = machine.tick(at: clock.advance(400))
        _ = machine.back(at: clock.advance(100))
        let events = try machine.discardAway(at: clock.now)
        guard case .sessionRevised(let session)? = events.first else {
            Issue.record("no revision: \(events)")
            return
        }
        #expect(session.focusedSeconds == 1300)
        #expect(spans(session, from: origin) == [[0, 300], [400, 1000]])
    }

    @Test func aSuspendUnderPauseEndsASegment() throws {
        let clock = FakeClock()
        let origin = clock.now
        var machine = try running(task(), clock)
        let began = clock.advance(500)
        _ = machine.suspended(for: 1000, began: began, policy: .pause, at: clock.advance(1000))
        let session = try #require(sessions(machine.tick(at: clock.advance(1000))).first)
        #expect(spans(session, from: origin) == [[0, 500], [1500, 1000]])
        #expect(session.end == origin.wall + 2500)
    }

    @Test func aSuspendUnderContinueStaysInTheSegment() throws {
        let clock = FakeClock()
        let origin = clock.now
        var machine = try running(task(), clock)
        let began = clock.advance(500)
        let events = machine.suspended(for: 2000, began: began, policy: .continue, at: clock.advance(2000))
        let session = try #require(sessions(events).first)
        #expect(spans(session, from: origin) == [[0, 1500]])
    }

    @Test func segmentsSurviveASaveAndARestore() throws {
        let clock = FakeClock()
        let origin = clock.now
        var machine = try running(task(), clock)
        _ = try machine.pause(at: clock.advance(100))
        _ = try machine.resume(at: clock.advance(50))
        let saved = machine.saved(at: clock.advance(50))
        // Another daemon, another steady clock, 30 s later.
        let later = Now(steady: 5, wall: clock.now.wall + 30)
        var restored = TimerMachine(restoring: saved, downtime: 30, at: later)
        let session = try #require(sessions(try restored.stop(at: later.adding(20))).first)
        #expect(spans(session, from: origin) == [[0, 100], [150, 100]])
        #expect(sum(session) == session.focusedSeconds)
    }

    @Test func fractionalStretchesStillSumToTheFocusedTime() throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        for _ in 0..<7 {
            _ = try machine.pause(at: clock.advance(10.4))
            _ = try machine.resume(at: clock.advance(3.3))
        }
        let session = try #require(sessions(try machine.stop(at: clock.advance(0.4))).first)
        #expect(session.focusedSeconds == 73)
        #expect(sum(session) == 73)
    }

    @Test func aSessionMadeWithoutSegmentsIsOneFromItsStart() {
        let s = WorkSession(
            taskID: 1, taskName: "W", start: 1000, end: 2000, plannedSeconds: 1000, focusedSeconds: 800, pauses: 1, outcome: .completed)
        #expect(s.segments == [FocusSegment(start: 1000, seconds: 800)])
    }

    @Test func fittingAnEditedSpanClipsTrimsOrFallsBackToOneSegment() {
        let two = [FocusSegment(start: 1000, seconds: 100), FocusSegment(start: 1200, seconds: 300)]
        // Shortened at the end: the last segment is cut.
        #expect(
            FocusSegment.fit(two, start: 1000, end: 1400, focused: 300) == [
                FocusSegment(start: 1000, seconds: 100), FocusSegment(start: 1200, seconds: 200),
            ])
        // A later start cuts the first; the focus it lost is given back up to the end.
        #expect(
            FocusSegment.fit(two, start: 1050, end: 1600, focused: 400) == [
                FocusSegment(start: 1050, seconds: 50), FocusSegment(start: 1200, seconds: 350),
            ])
        // Focus they lack fills the pause before the last.
        #expect(
            FocusSegment.fit(two, start: 1000, end: 1500, focused: 450) == [
                FocusSegment(start: 1000, seconds: 150), FocusSegment(start: 1200, seconds: 300),
            ])
        // Then the time before the first.
        #expect(
            FocusSegment.fit([FocusSegment(start: 1100, seconds: 100)], start: 1000, end: 1250, focused: 250) == [
                FocusSegment(start: 1000, seconds: 250)
            ])
        // More focus than the span: one segment from the start.
        #expect(FocusSegment.fit(two, start: 1000, end: 1500, focused: 600) == [FocusSegment(start: 1000, seconds: 600)])
        #expect(FocusSegment.fit(two, start: 1000, end: 1500, focused: 0) == [])
    }
}
