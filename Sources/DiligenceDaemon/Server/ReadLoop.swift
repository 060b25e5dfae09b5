import Dispatch

/// Readiness of the control server's connections, on a thread of its own that runs each ready
/// connection's handler on the daemon's queue with `queue.sync` — which, for a serial queue
/// that is free, runs the handler right here on this thread.
///
/// Why not Dispatch sources: libdispatch's epoll thread hands each readiness event to a
/// worker thread and re-arms the descriptor through an eventfd, so a status request cost two
/// thread wake-ups and about a dozen system calls. Here it is one `epoll_wait`, one `read` and
/// the answer's `send` (docs/performance.md, throughput). Idle, the thread sleeps in
/// `epoll_wait` and never wakes. A descriptor is out of the loop the moment `unwatch` returns,
/// so it may be closed right after (a Dispatch source would hold it until its cancel handler
/// ran). Everything a handler touches is still touched only on the queue; `handlers` too.
final class ReadLoop: @unchecked Sendable {
    private let queue: DispatchQueue
    private let epollFD: Int32
    /// Readable once `stop` was called: the thread then ends.
    private let stopFD: Int32
    private var handlers: [UInt64: (Readiness) -> Void] = [:]
    private static let stopToken: UInt64 = 0

    init(queue: DispatchQueue) throws(Errno) {
        self.queue = queue
        epollFD = try Sys.epollCreate()
        do {
            stopFD = try Sys.eventDescriptor()
            try Sys.epollWatch(epollFD, stopFD, token: Self.stopToken, for: .readable, adding: true)
        } catch {
            Sys.close(epollFD)
            throw error
        }
    }

    /// Starts the thread. It keeps the loop alive until `stop`.
    func start() {
        if let error = Sys.startThread(name: "diligenced-read", { self.run() }) {
            Log.error("Could not start the control socket's read thread: \(error.reason).")
        }
    }

    /// Ends the thread (after any handler it is running or waiting to run). Call on the queue.
    func stop() {
        Sys.signalEvent(stopFD)
    }

    /// Calls `handler` on the queue whenever `fd` has input or was closed by the peer. `token`
    /// (never 0) names this registration: an event still in flight for a descriptor removed
    /// meanwhile, whose number a new connection may already reuse, finds no handler. Call on the queue.
    func watch(_ fd: Int32, token: Int, handler: @escaping () -> Void) {
        watch(fd, token: token, for: .readable) { _ in handler() }
    }

    /// Calls `handler` on the queue with what `fd` is ready for, of `interest`; called again
    /// for the same token, changes what it waits for (empty: `unwatch`). Call on the queue.
    func watch(_ fd: Int32, token: Int, for interest: Readiness, handler: @escaping (Readiness) -> Void) {
        let key = UInt64(token)
        guard !interest.isEmpty else { return unwatch(fd, token: token) }
        let adding = handlers[key] == nil
        handlers[key] = handler
        do { try Sys.epollWatch(epollFD, fd, token: key, for: interest, adding: adding) } catch {
            Log.error("Could not watch client descriptor \(fd): \(error.reason).")
        }
    }

    /// Stops calling `fd`'s handler; call before closing `fd`. Call on the queue.
    func unwatch(_ fd: Int32, token: Int) {
        guard handlers.removeValue(forKey: UInt64(token)) != nil else { return }
        Sys.epollRemove(epollFD, fd)
    }

    private func run() {
        while true {
            let ready: [(token: UInt64, ready: Readiness)]
            do { ready = try Sys.epollWait(epollFD) } catch {
                Log.error("The control socket's read loop failed: \(error.reason).")
                break
            }
            if ready.contains(where: { $0.token == Self.stopToken }) { break }
            queue.sync {
                for event in ready { handlers[event.token]?(event.ready) }
            }
        }
        Sys.close(stopFD)
        Sys.close(epollFD)
    }
}
