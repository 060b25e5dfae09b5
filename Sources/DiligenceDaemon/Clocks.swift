import CLinux
import DiligenceCore
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

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

    /// One reading of all three clocks.
    public var reading: Reading { source() }

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

/// The kernel's word that the wall clock jumped: it was set (NTP stepping it, `date -s`), or the
/// machine resumed from a suspend, which Linux treats as a setting of the clock. A
/// CLOCK_REALTIME timer armed with TFD_TIMER_CANCEL_ON_SET turns readable then
/// (`clinux_clock_jump_timer`), so the daemon reads its clocks the moment the machine wakes —
/// with or without logind, whether a phase timer is due or not — at no cost in between.
final class ClockJumpWatch {
    private let fd: Int32
    private let source: DispatchSourceRead

    /// `jumped` runs on `queue` after each jump; nil (logged) when the kernel offers no such timer.
    init?(queue: DispatchQueue, jumped: @escaping () -> Void) {
        let fd = clinux_clock_jump_timer()
        guard fd >= 0 else {
            Log.warning(
                "Cannot watch the wall clock for jumps (\(String(cString: strerror(errno)))); a suspend is noticed at the next timer or command."
            )
            return nil
        }
        self.fd = fd
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler {
            // ECANCELED (the jump) or, never, an expiry: either way the timer is armed again.
            var expirations: UInt64 = 0
            _ = read(fd, &expirations, 8)
            _ = clinux_arm_clock_jump_timer(fd)
            jumped()
        }
        source.setCancelHandler { Glibc.close(fd) }
        source.activate()
    }

    func close() {
        source.cancel()
    }
}
