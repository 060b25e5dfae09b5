import DiligenceCore
import DiligenceProtocol
import DiligenceTestSupport
import Testing

@testable import DiligenceDaemon

/// What the daemon does on logind's PrepareForSleep (Sleep.swift), with injected clocks; the
/// signal itself over a real bus is in EndToEndTests/LogindTests.swift.
@Suite struct SleepTests {
    /// The wake applies the suspend policy at once: the abandoned session is recorded by the
    /// signal itself, before any command or timer looks at the clocks.
    @Test func wakeAppliesTheSuspendPolicyAtOnce() throws {
        let clock = FakeClock()
        let d = try InProcessDaemon(config: "[timer]\nsuspend = abandon\n", clocks: clock.clocks)
        defer { d.stop() }
        #expect(try d.request("{\"command\":\"start\",\"task\":\"Work\"}")["ok"] == .bool(true))
        clock.advance(60)
        clock.suspend(300)
        #expect(d.sessions().isEmpty)
        d.daemon.queue.sync { d.daemon.sleepSignal(false) }
        let sessions = d.sessions()
        #expect(sessions.count == 1)
        #expect(sessions.first?.outcome == .abandoned)
        #expect(d.daemon.queue.sync { d.daemon.machine.state } == .idle)
    }

    /// Before the sleep, the saved timer is the running phase at that moment.
    @Test func sleepSavesTheTimerAsItIsNow() throws {
        let clock = FakeClock()
        let d = try InProcessDaemon(clocks: clock.clocks)
        defer { d.stop() }
        #expect(try d.request("{\"command\":\"start\",\"task\":\"Work\"}")["ok"] == .bool(true))
        clock.advance(90)
        d.daemon.queue.sync { d.daemon.sleepSignal(true) }
        let saved = try #require(d.daemon.queue.sync { try d.daemon.store.loadTimer() })
        #expect(saved.saved.state == .running)
        #expect(saved.saved.elapsed == 90)
        #expect(saved.wall == clock.wall)
    }
}
