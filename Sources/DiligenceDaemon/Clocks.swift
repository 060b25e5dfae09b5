#if canImport(Glibc)
import Glibc
#endif
import DiligenceCore

/// The daemon's clocks (DESIGN.md "Clocks: one rule"): CLOCK_BOOTTIME drives durations (it runs on
/// during suspend), CLOCK_MONOTONIC tells how long the machine slept (it stops), the wall clock
/// dates records.
public struct Clocks: Sendable {
    public init() {}

    static func read(_ clock: clockid_t) -> Double {
        var ts = timespec()
        clock_gettime(clock, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    public var boottime: Double { Self.read(CLOCK_BOOTTIME) }
    public var monotonic: Double { Self.read(CLOCK_MONOTONIC) }
    public var wall: Double { Self.read(CLOCK_REALTIME) }

    /// The reading the core works with.
    public var now: Now { Now(steady: boottime, wall: wall) }

    /// Seconds the machine has spent suspended since boot: BOOTTIME − MONOTONIC.
    public var slept: Double { boottime - monotonic }

    /// This boot's id, so a saved timer can tell a daemon restart from a reboot.
    public static let bootID: String = {
        guard let f = fopen("/proc/sys/kernel/random/boot_id", "r") else { return "" }
        defer { fclose(f) }
        var buffer = [CChar](repeating: 0, count: 64)
        guard fgets(&buffer, 64, f) != nil else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()
}
