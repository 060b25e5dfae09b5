import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// Waiting for what a daemon does in the background, with a timeout on every wait: written once
// for the in-process daemon (DiligenceDaemonTests) and the live one (EndToEndTests).

/// Seconds on CLOCK_MONOTONIC: every "when" the tests measure uses this clock.
public func monotonicNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Wraps a value that is handed to exactly one helper thread and not used meanwhile.
public struct UncheckedSendable<Value>: @unchecked Sendable {
    public var value: Value
    public init(_ value: Value) { self.value = value }
}

/// A wait that ran out, or an answer a helper did not expect, with what a person needs to
/// understand it.
public struct TestKitError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Runs a blocking `body` on a helper thread and gives up after `timeout` seconds.
/// A thread that is still blocked (reading a socket) ends when the daemon is stopped at cleanup.
public func withTimeout<T>(_ timeout: Double, _ what: String, _ body: @escaping @Sendable () throws -> T) throws -> T {
    let slot = TimeoutSlot<T>()
    Thread.detachNewThread {
        slot.result = Result { try body() }
        slot.done.signal()
    }
    guard slot.done.wait(timeout: .now() + timeout) == .success, let result = slot.result else {
        throw TestKitError("timed out after \(timeout) s: \(what)")
    }
    return try result.get()
}

private final class TimeoutSlot<T>: @unchecked Sendable {
    var result: Result<T, Error>?
    let done = DispatchSemaphore(value: 0)
}

/// Items a background thread collects in arrival order, and waits for the first that matches:
/// the one mechanism behind the live harness's NotifyListener (datagrams) and EventWatcher
/// (watch events).
public final class ArrivalLog<Item>: @unchecked Sendable {
    private let condition = NSCondition()
    private var received: [Item] = []
    /// Why nothing more can arrive, once that is so: waiting then stops early.
    private var endReason: String?

    public init() {}

    public var ended: String? {
        condition.lock()
        defer { condition.unlock() }
        return endReason
    }

    public func append(_ make: (_ index: Int) -> Item) {
        condition.lock()
        received.append(make(received.count))
        condition.broadcast()
        condition.unlock()
    }

    public func end(_ reason: String) {
        condition.lock()
        endReason = reason
        condition.broadcast()
        condition.unlock()
    }

    public var items: [Item] {
        condition.lock()
        defer { condition.unlock() }
        return received
    }

    /// The first item at index ≥ `after` that satisfies `matches`, with its index; nil after
    /// `timeout` seconds or once the log has ended.
    public func first(after: Int, timeout: Double, where matches: (Item) -> Bool) -> (index: Int, item: Item)? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        var next = after
        while true {
            while next < received.count {
                let item = received[next]
                next += 1
                if matches(item) { return (next - 1, item) }
            }
            if endReason != nil { return nil }
            if !condition.wait(until: deadline) && next >= received.count { return nil }
        }
    }
}
