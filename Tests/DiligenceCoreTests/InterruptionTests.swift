import DiligenceJSON
import DiligenceTestSupport
import Testing

@testable import DiligenceCore

/// Interruptions (`interrupt`): marks on running work that move nothing, recorded with its
/// session; the strict rule of a `void_on_interrupt` task.
@Suite("TimerMachine interruptions")
struct InterruptionTests {
    @Test func anInterruptionMovesNoDeadline() throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        let deadline = machine.nextDeadline
        let events = try machine.interrupt(.internal, note: "  mail  ", at: clock.advance(100))
        #expect(events == [.interrupted(Interruption(kind: .internal, at: clock.now.wall, note: "mail"))])
        _ = try machine.interrupt(.external, at: clock.advance(100))
        #expect(machine.nextDeadline == deadline)
        #expect(machine.state == .running)
        #expect(machine.status(at: clock.now).remainingSeconds == 1300)
        #expect(machine.interruptions.map(\.kind) == [.internal, .external])
    }

    @Test func theSessionCarriesItsInterruptionsAndTheNextWorkStartsWithNone() throws {
        let clock = FakeClock()
        var machine = try running(task(autostart: .all), clock)
        _ = try machine.pause(at: clock.advance(60))
        _ = try machine.interrupt(.external, note: "phone", at: clock.advance(10))
        _ = try machine.resume(at: clock.now)
        _ = try machine.interrupt(.internal, at: clock.advance(5))
        let session = try #require(sessions(machine.tick(at: clock.advance(1500))).first)
        #expect(session.outcome == .completed)
        #expect(session.interruptions.map(\.kind) == [.external, .internal])
        #expect(session.interruptions[0].note == "phone")
        #expect(session.interruptions.marks == "-'")
        #expect(session.interruptions.allSatisfy { $0.at >= session.start && $0.at <= session.end })
        #expect(machine.phase == .shortBreak)
        #expect(machine.interruptions.isEmpty)
        _ = machine.tick(at: clock.advance(300))
        #expect(machine.phase == .work)
        #expect(machine.interruptions.isEmpty)
    }

    @Test func noWorkNoInterruption() throws {
        let clock = FakeClock()
        var idle = TimerMachine()
        #expect(errorCode { try idle.interrupt(.internal, at: clock.now) } == "not_running")
        var machine = try running(task(), clock)
        _ = machine.tick(at: clock.advance(1500))
        #expect(machine.state == .pending)
        #expect(errorCode { try machine.interrupt(.internal, at: clock.now) } == "not_running")
        _ = try machine.start(nil, at: clock.now)
        #expect(machine.phase == .shortBreak)
        #expect(errorCode { try machine.interrupt(.external, at: clock.now) } == "not_running")
    }

    @Test func itsNoteFollowsTheNoteRules() throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        #expect(errorCode { try machine.interrupt(.internal, note: "two\nlines", at: clock.now) } == "invalid_value")
        #expect(errorCode { try machine.interrupt(.internal, note: String(repeating: "x", count: 501), at: clock.now) } == "out_of_range")
        #expect(machine.interruptions.isEmpty)
        _ = try machine.interrupt(.internal, note: "   ", at: clock.now)
        #expect(machine.interruptions == [Interruption(kind: .internal, at: clock.now.wall, note: nil)])
    }

    @Test func aVoidOnInterruptTaskEndsItsWorkAtAnExternalOne() throws {
        let clock = FakeClock()
        var strict = task()
        strict.voidOnInterrupt = true
        var machine = try running(strict, clock)
        _ = try machine.interrupt(.internal, at: clock.advance(60))
        #expect(machine.state == .running)
        let events = try machine.interrupt(.external, note: "boss", at: clock.advance(60))
        let session = try #require(sessions(events).first)
        #expect(events.first == .interrupted(Interruption(kind: .external, at: clock.now.wall, note: "boss")))
        #expect(events.last == .stopped(.work))
        #expect(session.outcome == .abandoned)
        #expect(session.reason == .interrupted)
        #expect(session.focusedSeconds == 120)
        #expect(session.interruptions.marks == "'-")
        #expect(machine.state == .idle)
    }

    @Test func anOrdinaryTaskGoesOnAfterAnExternalOne() throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        let events = try machine.interrupt(.external, at: clock.advance(60))
        #expect(sessions(events).isEmpty)
        #expect(machine.state == .running)
    }

    @Test func savedAndRestoredMidPhaseTheyAreKept() throws {
        let clock = FakeClock()
        var machine = try running(task(), clock)
        _ = try machine.interrupt(.internal, note: "idea", at: clock.advance(100))
        _ = try machine.interrupt(.external, at: clock.advance(100))
        let saved = machine.saved(at: clock.advance(10))
        #expect(saved.interruptions.count == 2)
        let later = Now(steady: 3, wall: clock.now.wall + 30)
        var restored = TimerMachine(restoring: saved, downtime: 30, at: later)
        #expect(restored.interruptions == machine.interruptions)
        #expect(abs((restored.nextDeadline ?? 0) - (3 + 1500 - 240)) < 1e-6)
        let session = try #require(sessions(try restored.stop(at: later)).first)
        #expect(session.interruptions == machine.interruptions)
    }

    @Test func theListReadsBackWhatItWrites() throws {
        let list = [
            Interruption(kind: .internal, at: 1_800_000_000.25, note: "idea"),
            Interruption(kind: .external, at: 1_800_000_100, note: nil),
        ]
        for wire in [true, false] {
            let json = JSON.array(list.map { $0.json(wire: wire) })
            let read = try Interruption.list(json, wire: wire).get()
            #expect(read.map(\.kind) == list.map(\.kind))
            #expect(read.map(\.note) == list.map(\.note))
            #expect(read[1].at == list[1].at)
        }
        #expect(try Interruption.list(nil, wire: true).get().isEmpty)
        #expect(errorCode { try Interruption.list(.array([.object([("kind", .string("boss"))])]), wire: true).get() } == "invalid_import")
        #expect(errorCode { try Interruption.list(.string("x"), wire: false).get() } == "invalid_import")
    }
}
