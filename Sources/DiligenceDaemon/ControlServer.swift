import DiligenceCore
import DiligenceProtocol
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// The layout of `struct ucred` (pid, uid, gid), which Glibc's Swift overlay does not export.
private struct PeerCredentials {
    var pid: pid_t = 0
    var uid: uid_t = 0
    var gid: gid_t = 0
}

/// Bytes a server's connections read into, one read at a time.
final class ReadBuffer {
    var bytes = [UInt8](repeating: 0, count: 64 * 1024)
}

/// One client connection: non-blocking, line-framed input, buffered output.
final class ClientConnection {
    let fd: Int32
    let id: Int
    /// Set once the client asked for `watch`: it then only receives events.
    var isWatcher = false
    private var input: [UInt8] = []
    /// Bytes queued for the client; those before `outputStart` were sent already (a large
    /// answer is written in many pieces: advancing an index keeps that linear).
    private var output: [UInt8] = []
    private var outputStart = 0
    /// Reading stops while the client leaves more than `maxBacklog` unread (back-pressure):
    /// a client that pipelines requests but never reads holds at most that plus one answer.
    private var readingPaused = false
    /// Guards against handling lines again from inside a handler's own `send`.
    private var processingInput = false
    /// When the client last sent or was sent anything (CLOCK_MONOTONIC nanoseconds): at the
    /// connection limit the one idle longest makes room (`ControlServer.admit`).
    private(set) var lastActive = DispatchTime.now().uptimeNanoseconds
    /// A request of this connection waits for the database (`Daemon.serve`): no further line
    /// is handled, and nothing more read, until it is answered and `resume()` is called.
    private(set) var isHeld = false
    private var onLine: ((ClientConnection, ArraySlice<UInt8>) -> Void)?
    /// Reads arrive through the server's read loop (not a Dispatch source: see `ReadLoop`).
    private var readLoop: ReadLoop?
    private var writeSource: DispatchSourceWrite?
    private var writeSourceActive = false
    private(set) var closed = false
    /// Close once the output is flushed (after `line_too_long`).
    private var closeAfterFlush = false
    fileprivate var onClose: ((ClientConnection) -> Void)?
    /// Seconds a partial request line may wait for its newline (ControlServer.partialLineTimeout).
    fileprivate var partialLineTimeout = ControlServer.defaultPartialLineTimeout
    /// Armed only while a partial line is pending: an idle connection costs no wake-up.
    private var partialLineTimer: DispatchSourceTimer?
    private var partialLineArmed = false
    private var queue: DispatchQueue?

    /// Output a client may leave unread: a watcher past it is dropped (it must never hold up
    /// the daemon); a request client past it is no longer read from until it catches up.
    static let maxBacklog = 256 * 1024
    /// One answer may exceed the backlog on its own (an export of a million sessions is about
    /// 200 MiB); beyond this the client is dropped.
    static let maxAnswerBacklog = 512 * 1024 * 1024

    /// The server's read buffer, shared by its connections: they all read on the server's one
    /// queue, and a buffer allocated per read showed up in the status round trip's profile.
    /// (One per server, not one per process: tests run several daemons on several queues.)
    private let readBuffer: ReadBuffer

    /// Bytes queued and not yet taken by the client.
    var pendingOutput: Int { output.count - outputStart }

    fileprivate init(fd: Int32, id: Int, readBuffer: ReadBuffer) {
        self.fd = fd
        self.id = id
        self.readBuffer = readBuffer
    }

    fileprivate func start(queue: DispatchQueue, readLoop: ReadLoop, onLine: @escaping (ClientConnection, ArraySlice<UInt8>) -> Void) {
        self.queue = queue
        self.onLine = onLine
        self.readLoop = readLoop
        watchInput()
        let writer = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
        writer.setEventHandler { [unowned self] in self.flush() }
        // libdispatch keys its epoll registrations by descriptor: the descriptor may be closed
        // (and its number reused by the next client) only after the source is cancelled.
        let fd = self.fd
        writer.setCancelHandler { Sys.close(fd) }
        writeSource = writer
        // Activated (resumed) only while output waits: an idle writable socket would fire forever.
        writer.activate()
        writer.suspend()
    }

    private func watchInput() {
        readLoop?.watch(fd, token: id) { [unowned self] in self.readAvailable() }
    }

    private func readAvailable() {
        guard !closed else { return }
        lastActive = DispatchTime.now().uptimeNanoseconds
        let n = readBuffer.bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EAGAIN || errno == EINTR { return }
            close()
            return
        }
        if n == 0 {
            close()
            return
        }
        // A watch stream takes no further requests; after line_too_long the rest is dropped.
        if isWatcher || closeAfterFlush { return }
        input += readBuffer.bytes[..<n]
        processInput()
    }

    /// Handles the complete lines received, until the client has too much unread output.
    private func processInput() {
        guard !processingInput, let onLine else { return }
        processingInput = true
        defer { processingInput = false }
        var start = 0
        while !isHeld, pendingOutput <= Self.maxBacklog, let newline = input[start...].firstIndex(of: 0x0A) {
            var line = input[start..<newline]
            if line.count > ProtocolInfo.maxLineBytes { return refuseLongLine() }
            if line.last == 0x0D { line = line.dropLast() }
            start = newline + 1
            if !line.isEmpty { onLine(self, line) }
            if closed || isWatcher { return }
        }
        input.removeFirst(start)
        if isHeld || pendingOutput > Self.maxBacklog {
            // Back-pressure (or a request waiting for the database): read no more until the
            // client takes its answers (flush resumes) or the request is answered (`resume`).
            if !readingPaused {
                readingPaused = true
                readLoop?.unwatch(fd, token: id)
            }
            disarmPartialLineTimer()
            return
        }
        if input.count > ProtocolInfo.maxLineBytes { return refuseLongLine() }
        if input.isEmpty {
            disarmPartialLineTimer()
        } else if !input.contains(0x0A) && !partialLineArmed {
            armPartialLineTimer()
        }
    }

    // MARK: Partial lines

    /// Starts the clock on a partial line: it must be completed within `partialLineTimeout`
    /// of its first byte (not of the latest byte, so a byte every few seconds does not keep
    /// a stalled client connected forever).
    private func armPartialLineTimer() {
        guard let queue else { return }
        let timer =
            partialLineTimer
            ?? {
                let t = DispatchSource.makeTimerSource(queue: queue)
                t.setEventHandler { [unowned self] in self.partialLineTimedOut() }
                t.schedule(deadline: .distantFuture)
                t.activate()
                partialLineTimer = t
                return t
            }()
        timer.schedule(deadline: .now() + partialLineTimeout, leeway: .milliseconds(50))
        partialLineArmed = true
    }

    private func disarmPartialLineTimer() {
        guard partialLineArmed else { return }
        partialLineTimer?.schedule(deadline: .distantFuture)
        partialLineArmed = false
    }

    private func partialLineTimedOut() {
        guard !closed, partialLineArmed, !input.isEmpty else { return }
        partialLineArmed = false
        Log.info(
            "Closing client \(id): a partial request line waited \(partialLineTimeout) s for its newline.",
            fields: [("EVENT", "refused"), ("CODE", "request_timeout")])
        input = []
        closeAfterFlush = true
        send(
            Response.error(
                DiligenceError(
                    "request_timeout",
                    "A request line stayed incomplete for \(Int(partialLineTimeout.rounded(.up))) s; end each request with a newline. Closing the connection."
                ), id: nil))
    }

    /// The rest of an overlong line cannot be told from the next request: answer and close.
    private func refuseLongLine() {
        input = []
        disarmPartialLineTimer()
        closeAfterFlush = true
        send(
            Response.error(
                DiligenceError(
                    "line_too_long", "A request line may hold at most \(ProtocolInfo.maxLineBytes) bytes; closing the connection."), id: nil
            ))
    }

    /// Queues `text` and writes what the socket takes now.
    func send(_ text: String) {
        guard !closed else { return }
        lastActive = DispatchTime.now().uptimeNanoseconds
        output += text.utf8
        if pendingOutput > (isWatcher ? Self.maxBacklog : Self.maxAnswerBacklog) {
            Log.warning("Dropping client \(id): it left \(pendingOutput) bytes unread.")
            close()
            return
        }
        if !writeSourceActive { flush() }
    }

    private func flush() {
        while pendingOutput > 0 {
            let start = outputStart
            let n = output.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + start, $0.count - start, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN {
                    if !writeSourceActive {
                        writeSourceActive = true
                        writeSource?.resume()
                    }
                    compactOutput()
                    resumeReadingIfCaughtUp()
                    return
                }
                close()
                return
            }
            outputStart += n
        }
        output.removeAll(keepingCapacity: output.count <= 64 * 1024)
        outputStart = 0
        if writeSourceActive {
            writeSourceActive = false
            writeSource?.suspend()
        }
        if closeAfterFlush {
            close()
            return
        }
        resumeReadingIfCaughtUp()
    }

    /// Drops the bytes already sent once they are the larger part of the buffer.
    private func compactOutput() {
        if outputStart > 64 * 1024 && outputStart * 2 > output.count {
            output.removeFirst(outputStart)
            outputStart = 0
        }
    }

    /// Holds the connection while its current request waits (see `isHeld`).
    func hold() { isHeld = true }

    /// The held request is answered: read and handle the next ones.
    func resume() {
        isHeld = false
        if readingPaused { resumeReadingIfCaughtUp() } else { processInput() }
    }

    private func resumeReadingIfCaughtUp() {
        guard readingPaused, !closed, !isHeld, pendingOutput <= Self.maxBacklog / 2 else { return }
        readingPaused = false
        watchInput()
        processInput()
    }

    func close() {
        guard !closed else { return }
        closed = true
        output = []
        outputStart = 0
        onLine = nil
        partialLineTimer?.cancel()
        partialLineTimer = nil
        // A refused client was never started: its descriptor is closed here, or it would leak
        // and the client would wait for an end of stream that never comes.
        if writeSource == nil { Sys.close(fd) }
        // Out of the read loop before the descriptor is closed (by the write source's cancel).
        if !readingPaused { readLoop?.unwatch(fd, token: id) }
        readLoop = nil
        if let writer = writeSource {
            // A suspended source must be resumed before it can be cancelled.
            if !writeSourceActive { writer.resume() }
            writer.cancel()
        }
        writeSource = nil
        onClose?(self)
        onClose = nil
    }
}

/// Accepts connections on the control socket and feeds request lines to `handler`.
/// Everything runs on the daemon's one serial queue.
final class ControlServer {
    private let queue: DispatchQueue
    private let listenFD: Int32
    private var acceptSource: DispatchSourceRead?
    private var readLoop: ReadLoop?
    private(set) var connections: [Int: ClientConnection] = [:]
    private let readBuffer = ReadBuffer()
    private var nextID = 1
    private let handler: (ClientConnection, ArraySlice<UInt8>) -> Void

    /// Clients served at once: as many as the descriptors this process may open
    /// (RLIMIT_NOFILE, raised to its hard limit at start) allow, less `reservedDescriptors` for
    /// the database, the log, timers, hooks and players. At the limit the connection idle
    /// longest that is not a watcher is closed to admit the new one, so a process that opens
    /// connections and forgets them cannot lock the status bar out; only when every one is a
    /// watcher (or busy) is the new client refused with `too_many_connections`.
    var maxConnections = ControlServer.connectionLimit()
    static let reservedDescriptors = 64

    static func connectionLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 256 }
        // RLIM_INFINITY is the largest value: clamped like any other.
        return max(16, min(Int(clamping: limit.rlim_cur), 1 << 20) - reservedDescriptors)
    }

    /// Raises this process's soft RLIMIT_NOFILE to its hard limit (where that is allowed: it
    /// always is for the soft one), so many clients fit; called once at start.
    static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// A descriptor kept open to be given up when accept(2) fails with EMFILE: it lets the
    /// daemon accept the waiting client and tell it why, instead of spinning on a listening
    /// socket that stays readable.
    private var spareDescriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
    /// Whether root may connect too (by default only the daemon's own user may).
    var allowRoot = false
    /// Seconds a client may leave a request line incomplete before it is answered
    /// `request_timeout` and closed (tests shorten it).
    var partialLineTimeout = ControlServer.defaultPartialLineTimeout
    static let defaultPartialLineTimeout = 10.0

    init(listenFD: Int32, queue: DispatchQueue, handler: @escaping (ClientConnection, ArraySlice<UInt8>) -> Void) {
        self.listenFD = listenFD
        self.queue = queue
        self.handler = handler
    }

    func start() throws(DiligenceError) {
        do {
            let loop = try ReadLoop(queue: queue)
            loop.start()
            readLoop = loop
        } catch {
            throw DiligenceError(
                "socket_error", "Cannot set up reading from clients (\(error)); the system may be out of file descriptors.")
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: listenFD, queue: queue)
        source.setEventHandler { [unowned self] in self.acceptPending() }
        acceptSource = source
        source.activate()
    }

    /// Stops accepting and closes every connection.
    func stop() {
        if spareDescriptor >= 0 {
            Sys.close(spareDescriptor)
            spareDescriptor = -1
        }
        acceptSource?.cancel()
        acceptSource = nil
        for connection in Array(connections.values) { connection.close() }
        readLoop?.stop()
        readLoop = nil
    }

    private func acceptPending() {
        while true {
            // accept4 is not visible through Glibc: accept, then set the flags.
            let fd = accept(listenFD, nil, nil)
            if fd >= 0 {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                do { try Sys.setNonBlocking(fd) } catch {
                    Sys.close(fd)
                    continue
                }
            }
            if fd < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return }
                if errno == EMFILE || errno == ENFILE, makeRoomForDescriptor() { continue }
                Log.warning("accept failed: \(String(cString: strerror(errno)))")
                return
            }
            admit(fd)
        }
    }

    /// Out of descriptors: closes the idlest connection, or refuses the waiting client through
    /// the spare descriptor. Whether accept should be tried again.
    private func makeRoomForDescriptor() -> Bool {
        if let idle = idlest() {
            evict(idle)
            return true
        }
        guard spareDescriptor >= 0 else { return false }
        Sys.close(spareDescriptor)
        let fd = accept(listenFD, nil, nil)
        if fd >= 0 {
            let refusal = DiligenceError(
                "too_many_connections",
                "The daemon is out of file descriptors with \(connections.count) connections, all of them watchers; close some and try again."
            )
            let bytes = Array(Response.error(refusal, id: nil).utf8)
            _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            Sys.close(fd)
        }
        spareDescriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
        return false
    }

    /// The connection idle longest that may be closed to make room: not a watcher, no
    /// request waiting for the database, nothing left to send.
    private func idlest() -> ClientConnection? {
        connections.values.filter { !$0.isWatcher && !$0.isHeld && $0.pendingOutput == 0 }.min { $0.lastActive < $1.lastActive }
    }

    /// Closes `connection` to admit another, saying why.
    private func evict(_ connection: ClientConnection) {
        let idle = Double(DispatchTime.now().uptimeNanoseconds - connection.lastActive) / 1e9
        Log.info(
            "Closing client \(connection.id), idle for \(Int(idle)) s: \(connections.count) clients are connected, the limit; it makes room for a new one.",
            fields: [("EVENT", "connection_evicted")])
        connection.send(
            Response.error(
                DiligenceError(
                    "too_many_connections",
                    "The daemon serves \(maxConnections) connections, its limit; this one was idle longest and is closed to admit another. Connect again when needed."
                ), id: nil))
        connection.close()
    }

    private func admit(_ fd: Int32) {
        let connection = ClientConnection(fd: fd, id: nextID, readBuffer: readBuffer)
        nextID += 1
        if connections.count >= maxConnections, let idle = idlest() { evict(idle) }
        if let refusal = refusal(for: fd) {
            connection.send(Response.error(refusal, id: nil))
            connection.close()
            return
        }
        connections[connection.id] = connection
        connection.partialLineTimeout = partialLineTimeout
        connection.onClose = { [unowned self] in self.connections[$0.id] = nil }
        guard let readLoop else { return connection.close() }
        connection.start(queue: queue, readLoop: readLoop, onLine: handler)
    }

    /// Why this peer may not talk to the daemon, if it may not.
    private func refusal(for fd: Int32) -> DiligenceError? {
        var credentials = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        if getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 {
            let me = getuid()
            if credentials.uid != me && !(credentials.uid == 0 && allowRoot) {
                Log.warning(
                    "Refused a connection from uid \(credentials.uid) (pid \(credentials.pid)): only uid \(me) may control this daemon.")
                return DiligenceError("permission_denied", "This daemon belongs to uid \(me); uid \(credentials.uid) may not control it.")
            }
        }
        if connections.count >= maxConnections {
            Log.warning("Refused a connection: \(maxConnections) clients are connected already, every one a watcher or busy.")
            return DiligenceError(
                "too_many_connections",
                "The daemon already serves \(maxConnections) connections, every one a watcher or busy; close some and try again.")
        }
        return nil
    }
}
