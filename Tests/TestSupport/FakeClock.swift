import DiligenceCore
import Synchronization

/// Clock readings a test moves by hand; it never sleeps. One for every test that needs time to
/// pass: the core's tests read `now` (the steady clock and the wall clock), the daemon's read
/// all three of its clocks (`Clocks` in DiligenceDaemonTests' ClockTests.swift).
///
/// `steady` is CLOCK_BOOTTIME (it runs on through a suspend), `monotonic` CLOCK_MONOTONIC (it
/// stops), `wall` the wall clock. They start far apart so that a test mixing them up fails, and
/// stay integral or dyadic fractions, so sums of durations are exact in `Double`. Shared by
/// reference: a daemon reading it sees every move the test makes.
public final class FakeClock: Sendable {
    public static let steadyStart = 5_000.0
    public static let monotonicStart = 4_000.0
    public static let wallStart = 1_800_000_000.0

    public struct Reading: Sendable, Equatable {
        public var steady: Double
        public var monotonic: Double
        public var wall: Double
    }

    private let state = Mutex(Reading(steady: FakeClock.steadyStart, monotonic: FakeClock.monotonicStart, wall: FakeClock.wallStart))

    public init() {}

    /// All three readings at once.
    public var reading: Reading { state.withLock { $0 } }
    /// The steady clock and the wall clock, as the core takes them.
    public var now: Now {
        let r = reading
        return Now(steady: r.steady, wall: r.wall)
    }
    public var wall: Double { reading.wall }
    /// Seconds on the steady clock since the fake clock started.
    public var offset: Double { reading.steady - Self.steadyStart }

    /// Time passes with the machine awake; returns the new `now`.
    @discardableResult
    public func advance(_ seconds: Double) -> Now {
        state.withLock {
            $0.steady += seconds
            $0.monotonic += seconds
            $0.wall += seconds
        }
        return now
    }

    /// Moves every clock on to `steady` (absolute, on the steady clock).
    @discardableResult
    public func set(steady: Double) -> Now { advance(steady - reading.steady) }

    /// The machine sleeps for `seconds`: the steady clock and the wall clock move, MONOTONIC not.
    public func suspend(_ seconds: Double) {
        state.withLock {
            $0.steady += seconds
            $0.wall += seconds
        }
    }

    /// The wall clock is set forward (positive) or back (negative); no time passes.
    public func stepWall(_ seconds: Double) {
        state.withLock { $0.wall += seconds }
    }
}
