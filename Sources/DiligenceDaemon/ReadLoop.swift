import CLinux
import Dispatch
import Glibc

/// Reads for the control server's connections, on a thread of its own that runs each ready
/// connection's handler on the daemon's queue with `queue.sync` — which, for a serial queue
/// that is free, runs the handler right here on this thread.
///
/// Why not Dispatch read sources: libdispatch's epoll thread hands each readiness event to a
/// worker thread and re-arms the descriptor through an eventfd, so a status request cost two
/// thread wake-ups and about a dozen system calls. Here it is one `epoll_wait`, one `read` and
/// the answer's `send` (docs/performance.md, throughput). Idle, the thread sleeps in
/// `epoll_wait` and never wakes. Everything a handler touches is still touched only on the
/// queue; `handlers` too.
final class ReadLoop: @unchecked Sendable {
    private let queue: DispatchQueue
    private let epollFD: Int32
    /// Readable once `stop` was called: the thread then ends.
    private let stopFD: Int32
    private var handlers: [UInt64: () -> Void] = [:]
    private static let stopToken: UInt64 = 0

    init(queue: DispatchQueue) throws(Errno) {
        self.queue = queue
        epollFD = try Sys.retrying("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        do {
            stopFD = try Sys.retrying("eventfd") { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) }
            try Sys.retrying("epoll_ctl") { clinux_epoll_add(epollFD, stopFD, Self.stopToken) }
        } catch {
            Sys.close(epollFD)
            throw error
        }
    }

    /// Starts the thread. It keeps the loop alive until `stop`.
    func start() {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(
            &thread, nil,
            { context in
                Unmanaged<ReadLoop>.fromOpaque(context!).takeRetainedValue().run()
                return nil
            }, context)
        if created == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<ReadLoop>.fromOpaque(context).release()
            Log.error("Could not start the control socket's read thread: \(String(cString: strerror(created))).")
        }
    }

    /// Ends the thread (after any handler it is running or waiting to run). Call on the queue.
    func stop() {
        var one: UInt64 = 1
        _ = write(stopFD, &one, 8)
    }

    /// Calls `handler` on the queue whenever `fd` has input or was closed by the peer. `token`
    /// (never 0) names this registration: an event still in flight for a descriptor removed
    /// meanwhile, whose number a new connection may already reuse, finds no handler. Call on the queue.
    func watch(_ fd: Int32, token: Int, handler: @escaping () -> Void) {
        handlers[UInt64(token)] = handler
        if clinux_epoll_add(epollFD, fd, UInt64(token)) != 0 {
            Log.error("Could not watch client descriptor \(fd): \(String(cString: strerror(errno))).")
        }
    }

    /// Stops calling `fd`'s handler; call before closing `fd`. Call on the queue.
    func unwatch(_ fd: Int32, token: Int) {
        handlers[UInt64(token)] = nil
        _ = clinux_epoll_remove(epollFD, fd)
    }

    private func run() {
        clinux_name_thread("diligenced-read")
        var tokens = [UInt64](repeating: 0, count: 64)
        while true {
            let count = Int(tokens.withUnsafeMutableBufferPointer { clinux_epoll_wait_tokens(epollFD, $0.baseAddress, Int32($0.count)) })
            if count < 0 {
                Log.error("The control socket's read loop failed: \(String(cString: strerror(errno))).")
                break
            }
            let ready = tokens[..<count]
            if ready.contains(Self.stopToken) { break }
            queue.sync {
                for token in ready { handlers[token]?() }
            }
        }
        Sys.close(stopFD)
        Sys.close(epollFD)
    }
}
