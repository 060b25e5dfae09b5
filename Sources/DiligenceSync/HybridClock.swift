import DiligenceTime

/// A reading of a hybrid logical clock (Kulkarni et al., 2014): wall-clock milliseconds, and a
/// counter that orders changes within one millisecond and changes stamped after a later
/// reading from another device. Readings order as (milliseconds, counter).
public struct HLC: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var millis: Int64
    public var counter: Int64

    public init(millis: Int64, counter: Int64) {
        self.millis = millis
        self.counter = counter
    }

    public static let zero = HLC(millis: 0, counter: 0)
    /// The readings a journal line may carry (docs/sync.md, "The journal"): milliseconds to
    /// 9999-12-31T23:59:59.999Z, a counter that fits 32 bits. A clock stamps only these.
    public static let millisRange: ClosedRange<Int64> = 0...253_402_300_799_999
    public static let counterRange: ClosedRange<Int64> = 0...Int64(Int32.max)

    public static func < (a: HLC, b: HLC) -> Bool { (a.millis, a.counter) < (b.millis, b.counter) }

    public var description: String { "\(millis).\(counter)" }
}

/// Which change of a thing wins: the later clock reading, and for equal readings (two devices
/// in the same millisecond) the greater device id. A total order over every change of every
/// device, so each device picks the same winner whatever order it saw the changes in.
public struct Version: Comparable, Hashable, Sendable {
    public var hlc: HLC
    public var device: String

    public init(hlc: HLC, device: String) {
        self.hlc = hlc
        self.device = device
    }

    public static func < (a: Version, b: Version) -> Bool {
        a.hlc != b.hlc ? a.hlc < b.hlc : a.device.utf8.lexicographicallyPrecedes(b.device.utf8)
    }
}

/// A device's hybrid logical clock: every change it writes is stamped later than every change
/// it wrote or read before, even when its wall clock is behind another device's or steps back.
public struct HybridClock: Sendable {
    /// The latest reading stamped or observed.
    public private(set) var last: HLC

    /// How far ahead of this device's wall clock an observed reading may pull the clock
    /// (docs/sync.md, "Clocks that are wrong"): within it, a change made after reading a change
    /// of a device whose clock is fast wins over it; beyond it (a clock years ahead must not
    /// make every later local change look older) its changes are still applied, only this clock
    /// does not follow them, and the skew is reported (`aheadMillis`).
    public static let maxDriftMillis: Int64 = 7 * 24 * 3600 * 1000

    /// How far a clock reading is ahead of the wall clock `now` that read it, in milliseconds,
    /// when it says its writer's wall clock was ahead (counter 0: a stamp from the writer's own
    /// wall clock, not one carried along after another device's reading); nil otherwise.
    public static func aheadMillis(of reading: HLC, now: Double) -> Int64? {
        guard reading.counter == 0 else { return nil }
        let ahead = reading.millis &- millis(now)
        return ahead > 0 ? ahead : nil
    }

    public init(last: HLC = .zero) {
        self.last = last
    }

    /// The wall clock `now` (seconds since 1970) in milliseconds, clamped.
    static func millis(_ now: Double) -> Int64 {
        Int64(Int(saturating: (now * 1000).rounded(.down)))
    }

    /// The reading for a change made at wall time `now`: later than every earlier one, and
    /// one a journal line may carry (`HLC.millisRange`, `HLC.counterRange`): a counter at its
    /// greatest (another device's line may bring one) moves on to the next millisecond.
    public mutating func stamp(now: Double) -> HLC {
        let wall = min(Self.millis(now), HLC.millisRange.upperBound)
        if wall > last.millis {
            last = HLC(millis: wall, counter: 0)
        } else if last.counter < HLC.counterRange.upperBound {
            last.counter += 1
        } else {
            last = HLC(millis: min(last.millis + 1, HLC.millisRange.upperBound), counter: 0)
        }
        return last
    }

    /// Takes in a reading from another device's journal at wall time `now`: later local
    /// stamps follow it (unless it is more than `maxDriftMillis` ahead of `now`).
    public mutating func observe(_ remote: HLC, now: Double) {
        guard remote > last, remote.millis <= Self.millis(now) &+ Self.maxDriftMillis else { return }
        last = remote
    }
}
