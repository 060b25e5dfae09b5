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
        if pending > Self.maxBacklog { holdsRequests = true }
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
        if pending <= Self.maxBacklog / 2 { holdsRequests = false }
    }

    mutating func removeAll() {
        bytes = []
        start = 0
        holdsRequests = false
    }

    // MARK: Back-pressure

    /// Set once the client left more than the backlog unread, cleared once it caught up to half
    /// of it (so reading does not flap at the edge). One rule for reading and for handling the
    /// lines already read: two rules once let lines wait with reading on and nothing to come.
    private(set) var holdsRequests = false
    /// Whether more requests may be read and handled.
    var takesRequests: Bool { !holdsRequests }

    /// Whether the client left so much unread that it is dropped: a watcher past the backlog,
    /// anyone past the largest answer.
    func overflows(watcher: Bool) -> Bool {
        pending > (watcher ? Self.maxBacklog : Self.maxAnswerBacklog)
    }
}
