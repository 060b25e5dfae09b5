/// Bytes queued for a client, as a value, with the rule of back-pressure. Bytes before `start`
/// were sent already: a large answer goes out in many pieces, and advancing an index (with a
/// compaction now and then) keeps that linear.
struct OutputBuffer {
    /// Output a client may leave unread: a watcher past it is dropped (it must never hold up
    /// the daemon); a request client past it is no longer read from until it catches up.
    static let maxBacklog = 256 * 1024
    /// One answer may exceed the backlog on its own (an export of a million sessions is about
    /// 200 MiB); beyond this the client is dropped.
    static let maxAnswerBacklog = 512 * 1024 * 1024
    /// Capacity kept when the buffer empties: small enough to not hold memory per idle client.
    static let keptCapacity = 64 * 1024

    private(set) var bytes: [UInt8] = []
    private(set) var start = 0

    /// Bytes queued and not yet taken by the client.
    var pending: Int { bytes.count - start }
    var isEmpty: Bool { pending == 0 }

    mutating func append(_ text: String) {
        bytes += text.utf8
    }

    /// The client took `count` more bytes.
    mutating func sent(_ count: Int) {
        start += count
        if start == bytes.count {
            bytes.removeAll(keepingCapacity: bytes.count <= Self.keptCapacity)
            start = 0
        } else if start > Self.keptCapacity && start * 2 > bytes.count {
            // The bytes already sent are the larger part: drop them.
            bytes.removeFirst(start)
            start = 0
        }
    }

    mutating func removeAll() {
        bytes = []
        start = 0
    }

    // MARK: Back-pressure

    /// Whether more requests may be read and handled: the client takes its answers.
    var takesRequests: Bool { pending <= Self.maxBacklog }
    /// Whether reading, stopped by back-pressure, may start again: the client caught up to
    /// half the backlog (so reading does not flap at the edge).
    var caughtUp: Bool { pending <= Self.maxBacklog / 2 }

    /// Whether the client left so much unread that it is dropped: a watcher past the backlog,
    /// anyone past the largest answer.
    func overflows(watcher: Bool) -> Bool {
        pending > (watcher ? Self.maxBacklog : Self.maxAnswerBacklog)
    }
}
