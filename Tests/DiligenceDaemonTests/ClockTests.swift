import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import DiligenceTime
import Synchronization
import Testing

@testable import DiligenceDaemon

#if canImport(Glibc)
    import Glibc
#endif

extension FakeClock {
    /// The daemon's clocks reading this fake: BOOTTIME is its steady clock.
    var clocks: Clocks {
        Clocks { [self] in
            let r = reading
            return Clocks.Reading(boottime: r.steady, monotonic: r.monotonic, wall: r.wall)
        }
    }
}

extension InProcessDaemon {
    func sessions() -> [WorkSession] {
        daemon.queue.sync { (try? daemon.store.sessions()) ?? [] }
    }
}

/// Suspend policies and wall-clock steps (issue item 4), with injected clocks: no test sleeps.
@Suite struct ClockTests {
    /// Starts Work (25 min), lets a minute pass, sleeps the machine 5 minutes, and returns the status after.
    private func suspendDuringWork(policy: String, focusMode: Bool = false) throws -> (status: JSON, sessions: [WorkSession]) {
        let clock = FakeClock()
        let d = try InProcessDaemon(config: "[timer]\nsuspend = \(policy)\n", clocks: clock.clocks)
        defer { d.stop() }
        var task = "Work"
        if focusMode {
            task = "Deep"
            #expect(try d.request("{\"command\":\"task_add\",\"name\":\"Deep\",\"focus_mode\":true}")["ok"] == .bool(true))
        }
        #expect(try d.request("{\"command\":\"start\",\"task\":\"\(task)\"}")["ok"] == .bool(true))
        clock.advance(60)
        #expect(try d.status()["remaining_seconds"] == .int(1440))
        clock.suspend(300)
        return (try d.status(), d.sessions())
    }

    @Test func pausePolicyKeepsTheRemainingTime() throws {
        let (status, sessions) = try suspendDuringWork(policy: "pause")
        #expect(status["state"] == .string("running"))
        #expect(status["remaining_seconds"] == .int(1440))
        #expect(sessions.isEmpty)
    }

    @Test func continuePolicyCountsTheSleptTime() throws {
        let (status, sessions) = try suspendDuringWork(policy: "continue")
        #expect(status["state"] == .string("running"))
        #expect(status["remaining_seconds"] == .int(1140))
        #expect(sessions.isEmpty)
    }

    @Test func abandonPolicyRecordsAnAbandonedSessionUpToTheSuspend() throws {
        let (status, sessions) = try suspendDuringWork(policy: "abandon")
        #expect(status["state"] == .string("idle"))
        #expect(sessions.count == 1)
        #expect(sessions.first?.outcome == .abandoned)
        #expect(sessions.first?.focusedSeconds == 60)
    }

    @Test func focusModeAbandonsWorkOnSuspendWhateverThePolicy() throws {
        let (status, sessions) = try suspendDuringWork(policy: "pause", focusMode: true)
        #expect(status["state"] == .string("idle"))
        #expect(sessions.map(\.outcome) == [.abandoned])
        #expect(sessions.first?.taskName == "Deep")
    }

    @Test func aShortHiccupIsNotASuspend() throws {
        let clock = FakeClock()
        let d = try InProcessDaemon(config: "[timer]\nsuspend = abandon\n", clocks: clock.clocks)
        defer { d.stop() }
        _ = try d.request("{\"command\":\"start\",\"task\":\"Work\"}")
        clock.suspend(0.3)
        #expect(try d.status()["state"] == .string("running"))
    }

    @Test func wallClockStepsChangeNeitherRemainingTimeNorDeadline() throws {
        let clock = FakeClock()
        let d = try InProcessDaemon(clocks: clock.clocks)
        defer { d.stop() }
        let startWall = clock.wall
        _ = try d.request("{\"command\":\"start\",\"task\":\"Work\"}")
        clock.advance(60)
        let deadline = d.daemon.queue.sync { d.daemon.machine.nextDeadline }
        #expect(deadline != nil)
        for step in [3600.0, -7200.0, 86_400.0 * 3] {
            clock.stepWall(step)
            let status = try d.status()
            #expect(status["state"] == .string("running"), "after a wall step of \(step) s")
            #expect(status["remaining_seconds"] == .int(1440), "after a wall step of \(step) s")
            #expect(d.daemon.queue.sync { d.daemon.machine.nextDeadline } == deadline)
        }
        // The phase ends after its 25 minutes of steady time, not before; its start is the wall
        // clock read when it began, its end that start plus the steady time it took.
        clock.advance(1439)
        #expect(try d.status()["state"] == .string("running"))
        #expect(d.sessions().isEmpty)
        clock.advance(1)
        #expect(try d.status()["state"] == .string("pending"))
        let sessions = d.sessions()
        #expect(sessions.map(\.outcome) == [.completed])
        #expect(sessions.first?.focusedSeconds == 1500)
        #expect(sessions.first?.start == startWall)
        #expect(sessions.first?.end == startWall + 1500)
    }

    /// A clock stepped back by more than the phase (NTP correcting a dual-boot clock) never
    /// gives a session that ends before it starts, completed or stopped; a pause stays inside it.
    @Test func aClockSteppedBackNeverEndsASessionBeforeItStarts() throws {
        let clock = FakeClock()
        let d = try InProcessDaemon(config: "[timer]\nmin_session = 0\n", clocks: clock.clocks)
        defer { d.stop() }
        #expect(try d.request("{\"command\":\"task_add\",\"name\":\"Short\",\"work\":600}")["ok"] == .bool(true))
        let firstStart = clock.wall
        _ = try d.request("{\"command\":\"start\",\"task\":\"Short\"}")
        clock.advance(100)
        _ = try d.request("{\"command\":\"pause\"}")
        clock.advance(50)
        _ = try d.request("{\"command\":\"resume\"}")
        clock.stepWall(-7200)
        clock.advance(500)
        #expect(try d.status()["state"] == .string("pending"))
        let completed = try #require(d.sessions().first)
        #expect(completed.start == firstStart)
        #expect(completed.end == firstStart + 650, "600 s running and a 50 s pause")
        #expect(completed.focusedSeconds == 600)

        // The next phase starts at the stepped clock's time; a step back during it changes nothing.
        #expect(try d.request("{\"command\":\"skip\"}")["ok"] == .bool(true)) // the pending break
        let secondStart = clock.wall
        let startAnswer = try d.request("{\"command\":\"start\"}")
        #expect(startAnswer["ok"] == .bool(true), "\(startAnswer.serialized)")
        clock.advance(30)
        clock.stepWall(-3600)
        let stopAnswer = try d.request("{\"command\":\"stop\"}")
        #expect(stopAnswer["ok"] == .bool(true), "\(stopAnswer.serialized)")
        // (Sessions list by start: the stepped clock put this one first.)
        let stopped = try #require(d.sessions().first { $0.outcome == .abandoned })
        #expect(stopped.start == secondStart && stopped.end == secondStart + 30)
        #expect(d.sessions().allSatisfy { $0.end >= $0.start })
    }

    /// An announcement not followed by a sleep (and no PrepareForSleep(false)) does not date a
    /// suspend an hour later: that one is dated at the wake less the slept time.
    @Test func aStaleAnnouncementDoesNotDateALaterSuspend() throws {
        let clock = FakeClock()
        let d = try InProcessDaemon(config: "[timer]\nsuspend = abandon\nmin_session = 0\n", clocks: clock.clocks)
        defer { d.stop() }
        d.daemon.queue.sync { d.daemon.sleepSignal(true) }
        clock.advance(3600)
        let start = clock.wall
        _ = try d.request("{\"command\":\"start\",\"task\":\"Work\"}")
        clock.advance(20)
        clock.suspend(300)
        _ = try d.status()
        let session = try #require(d.sessions().first)
        #expect(session.start == start && session.end == start + 20)
    }

    /// With logind, the suspend is dated at PrepareForSleep(true), however late the machine's
    /// wake is noticed: an abandoned session ends there, not at "noticed − slept".
    @Test func logindDatesTheSuspendAtPrepareForSleep() throws {
        let clock = FakeClock()
        let d = try InProcessDaemon(config: "[timer]\nsuspend = abandon\nmin_session = 0\n", clocks: clock.clocks)
        defer { d.stop() }
        let start = clock.wall
        _ = try d.request("{\"command\":\"start\",\"task\":\"Work\"}")
        clock.advance(16.6)
        d.daemon.queue.sync { d.daemon.sleepSignal(true) }
        clock.advance(2) // the last seconds before the kernel suspends
        clock.suspend(300)
        clock.advance(10) // awake, and nothing happens
        d.daemon.queue.sync { d.daemon.sleepSignal(false) }
        let session = try #require(d.sessions().first)
        #expect(session.outcome == .abandoned)
        #expect(session.focusedSeconds == 17, "16.6 s of work before the announced sleep")
        #expect(session.end == start + 16.6)
    }
}

/// `today_completed` follows the wall clock's day even though the day's bounds are computed
/// once and reused (Daemon.statusDayBounds).
@Suite struct TodayCompletedTests {
    @Test func aNewDayOrAWallStepStartsANewCount() throws {
        try withTimeZone("UTC0") {
            let clock = FakeClock()
            let d = try InProcessDaemon(clocks: clock.clocks)
            defer { d.stop() }
            #expect(try d.request("{\"command\":\"task_add\",\"name\":\"Short\",\"work\":60}")["ok"] == .bool(true))
            #expect(try d.request("{\"command\":\"start\",\"task\":\"Short\"}")["ok"] == .bool(true))
            clock.advance(61)
            #expect(try d.status()["today_completed"] == .int(1))
            // A wall-clock step into tomorrow: a new day, nothing completed in it yet.
            clock.stepWall(86_400)
            #expect(try d.status()["today_completed"] == .int(0))
            // And back: the session is today's again.
            clock.stepWall(-86_400)
            #expect(try d.status()["today_completed"] == .int(1))
        }
    }

    @Test func correctionsAndImportsChangeTheCountAtOnce() throws {
        try withTimeZone("UTC0") {
            let clock = FakeClock()
            let d = try InProcessDaemon(clocks: clock.clocks)
            defer { d.stop() }
            #expect(try d.status()["today_completed"] == .int(0))
            let day = RFC3339.format(clock.wall).prefix(10)
            let added = try d.request(
                "{\"command\":\"history_add\",\"task\":\"Work\",\"start\":\"\(day)T00:00:00Z\",\"end\":\"\(day)T00:25:00Z\"}")
            #expect(added["ok"] == .bool(true), "\(added.serialized)")
            #expect(try d.status()["today_completed"] == .int(1))
            let id = try #require(added["result"]?["id"]?.intValue ?? added["result"]?["session"]?["id"]?.intValue)
            #expect(try d.request("{\"command\":\"history_remove\",\"id\":\(id)}")["ok"] == .bool(true))
            #expect(try d.status()["today_completed"] == .int(0))
        }
    }
}
