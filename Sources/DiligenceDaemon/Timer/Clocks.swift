import DiligenceCore
import DiligenceSync
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's clocks (docs/architecture.md, "The timer"): CLOCK_BOOTTIME drives durations (it runs on
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
        Sys.clock(clock)
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
        guard let bytes = try? RegularFile.read("/proc/sys/kernel/random/boot_id", limit: 64) else { return "" }
        return String(decoding: bytes.prefix { $0 != 0 && $0 != 10 }, as: UTF8.self)
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
        let fd: Int32
        do { fd = try Sys.clockJumpTimer() } catch {
            Log.warning("Cannot watch the wall clock for jumps (\(error.reason)); a suspend is noticed at the next timer or command.")
            return nil
        }
        self.fd = fd
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler {
            dispatchPrecondition(condition: .onQueue(queue))
            // ECANCELED (the jump) or, never, an expiry: either way the timer is armed again.
            Sys.rearmClockJumpTimer(fd)
            jumped()
        }
        source.setCancelHandler { Sys.close(fd) }
        source.activate()
    }

    func close() {
        source.cancel()
    }
}
