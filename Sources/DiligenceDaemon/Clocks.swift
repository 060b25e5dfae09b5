#if canImport(Glibc)
import Glibc
#endif
import DiligenceCore

/// The daemon's clocks (DESIGN.md "Clocks: one rule"): CLOCK_BOOTTIME drives durations (it runs on
/// during suspend), CLOCK_MONOTONIC tells how long the machine slept (it stops), the wall clock
/// dates records.
///
/// The readings come from one `source`: the system's clocks in production, a fake in tests that
/// simulate a suspend (BOOTTIME jumps, MONOTONIC does not) or a wall-clock step. Everything
/// that uses the readings is the same code either way.
public struct Clocks: Sendable {
    /// One reading of the three clocks, in seconds.
    public struct Reading: Sendable, Equatable {
        public var boottime: Double
        public var monotonic: Double
        public var wall: Double

        public init(boottime: Double, monotonic: Double, wall: Double) {
            self.boottime = boottime
            self.monotonic = monotonic
            self.wall = wall
        }
    }

    private let source: @Sendable () -> Reading

    /// The system's clocks.
    public init() {
        source = { Reading(boottime: Self.read(CLOCK_BOOTTIME), monotonic: Self.read(CLOCK_MONOTONIC), wall: Self.read(CLOCK_REALTIME)) }
    }

    /// Clocks read from `source` (tests).
    public init(source: @escaping @Sendable () -> Reading) {
        self.source = source
    }

    static func read(_ clock: clockid_t) -> Double {
        var ts = timespec()
        clock_gettime(clock, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    public var boottime: Double { source().boottime }
    public var monotonic: Double { source().monotonic }
    public var wall: Double { source().wall }

    /// The reading the core works with.
    public var now: Now {
        let r = source()
        return Now(steady: r.boottime, wall: r.wall)
    }

    /// Seconds the machine has spent suspended since boot: BOOTTIME − MONOTONIC.
    public var slept: Double {
        let r = source()
        return r.boottime - r.monotonic
    }

    /// This boot's id, so a saved timer can tell a daemon restart from a reboot.
    public static let bootID: String = {
        guard let f = fopen("/proc/sys/kernel/random/boot_id", "r") else { return "" }
        defer { fclose(f) }
        var buffer = [CChar](repeating: 0, count: 64)
        guard fgets(&buffer, 64, f) != nil else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()
}
