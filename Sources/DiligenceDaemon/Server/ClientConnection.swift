import DiligenceCore
import DiligenceProtocol
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// Bytes a server's connections read into, one read at a time.
final class ReadBuffer {
    var bytes = [UInt8](repeating: 0, count: 64 * 1024)
}

/// One client connection: non-blocking, line-framed input (`LineFramer`), buffered output
/// with back-pressure (`OutputBuffer`); readiness comes from the server's `ReadLoop`.
/// Everything runs on the server's queue.
final class ClientConnection {
    /// What the connection does now. Only `reading` takes requests.
    enum State: Equatable {
        /// Takes request lines; `held`: a request waits for the database (`Daemon.serve`), so
        /// no further line is handled until it is answered and `resume()` is called.
        case reading(held: Bool)
        /// Asked for `watch`: only receives events; what it sends is read and dropped.
        case watching
        /// Refused or timed out: its last answer is flushed, then it is closed.
        case closing
        case closed
    }

    let fd: Int32
    let id: Int
    private(set) var state = State.reading(held: false)
    /// The peer as the kernel saw it at connect (nil when it could not be read).
    let peer: PeerCredentials?
    private var framer = LineFramer(maxLineBytes: ProtocolInfo.maxLineBytes)
    private var output = OutputBuffer()
    /// When the client last sent or was sent anything (CLOCK_MONOTONIC nanoseconds): at the
    /// connection limit the one idle longest makes room (`ControlServer.admit`).
    private(set) var lastActive = DispatchTime.now().uptimeNanoseconds
    /// What the read loop waits for on this descriptor (empty: not registered).
    private var interest: Readiness = []
    /// The last send did not take everything: wait for room before sending more.
    private var waitingForRoom = false
    /// Set while request lines are handled: a handler's own `send` must not handle more.
    private var handlingLines = false
    /// The client closed its writing half (`printf … | socat`): the lines it sent are still
    /// answered and the answers flushed, then the connection closes.
    private var inputEnded = false
    private var onLine: ((ClientConnection, ArraySlice<UInt8>) -> Void)?
    private var readLoop: ReadLoop?
    private var onClose: ((ClientConnection) -> Void)?
    /// Seconds a partial request line may wait for its newline (ControlServer.partialLineTimeout).
    var partialLineTimeout = ControlServer.defaultPartialLineTimeout
    /// Exists only while a partial line is pending: an idle connection costs no wake-up.
    private var partialLineTimer: DispatchSourceTimer?
    private var queue: DispatchQueue?

    static let maxBacklog = OutputBuffer.maxBacklog
    static let maxAnswerBacklog = OutputBuffer.maxAnswerBacklog

    /// The server's read buffer, shared by its connections: they all read on the server's one
    /// queue, and a buffer allocated per read showed up in the status round trip's profile.
    /// (One per server, not one per process: tests run several daemons on several queues.)
    private let readBuffer: ReadBuffer

    var isWatcher: Bool { state == .watching }
    var isHeld: Bool { state == .reading(held: true) }
    var closed: Bool { state == .closed }
    /// Bytes queued and not yet taken by the client.
    var pendingOutput: Int { output.pending }

    init(fd: Int32, id: Int, readBuffer: ReadBuffer) {
        self.fd = fd
        self.id = id
        self.readBuffer = readBuffer
        peer = PeerCredentials.of(fd)
    }

    /// `onClose` runs once the connection closes, `onLine` for each request line.
    func start(
        queue: DispatchQueue, readLoop: ReadLoop, onClose: @escaping (ClientConnection) -> Void,
        onLine: @escaping (ClientConnection, ArraySlice<UInt8>) -> Void
    ) {
        self.queue = queue
        self.onClose = onClose
        self.onLine = onLine
        self.readLoop = readLoop
        updateInterest()
    }

    /// From now on the client only receives events.
    func becomeWatcher() {
        guard case .reading = state else { return }
        state = .watching
        framer.reset()
        disarmPartialLineTimer()
    }

    /// Registers with the read loop for what the state and the buffers call for: input unless
    /// back-pressure or a held request stops it, room to write while output waits.
    private func updateInterest() {
        guard let readLoop, !closed else { return }
        var wanted: Readiness = waitingForRoom ? .writable : []
        switch state {
        case .reading(let held): if !held && output.takesRequests && !inputEnded { wanted.insert(.readable) }
        case .watching, .closing: if !inputEnded { wanted.insert(.readable) }
        case .closed: return
        }
        guard wanted != interest else { return }
        interest = wanted
        readLoop.watch(fd, token: id, for: wanted) { [unowned self] ready in self.handle(ready) }
    }

    private func handle(_ ready: Readiness) {
        if let queue { dispatchPrecondition(condition: .onQueue(queue)) }
        if ready.contains(.writable) && waitingForRoom { flush() }
        if ready.contains(.readable) && interest.contains(.readable) { readAvailable() }
    }

    private func readAvailable() {
        guard !closed else { return }
        lastActive = DispatchTime.now().uptimeNanoseconds
        let n: Int
        do {
            guard case .done(let count) = try Sys.read(fd, into: &readBuffer.bytes) else { return }
            n = count
        } catch {
            return close()
        }
        // A watch stream takes no further requests; a closing connection's input is dropped.
        guard case .reading = state else { return n == 0 ? close() : () }
        if n == 0 {
            inputEnded = true
        } else {
            framer.append(readBuffer.bytes[..<n])
        }
        handleLines()
    }

    /// Handles the complete lines received, until the client has too much unread output or a
    /// request is held.
    private func handleLines() {
        guard !handlingLines, let onLine else { return }
        handlingLines = true
        defer { handlingLines = false }
        while state == .reading(held: false) && output.takesRequests {
            switch framer.next() {
            case .line(let line): onLine(self, line)
            case .tooLong: return refuseLongLine()
            case .needMore:
                if inputEnded { return finishAfterInputEnded() }
                if framer.hasPartialLine { armPartialLineTimer() } else { disarmPartialLineTimer() }
                return updateInterest()
            }
        }
        // Back-pressure or a held request: read no more until the client takes its answers
        // (`flush`) or the request is answered (`resume`).
        disarmPartialLineTimer()
        updateInterest()
    }

    /// Every complete line the client sent is answered (a partial last line, with no newline,
    /// is no request): close once the answers are out.
    private func finishAfterInputEnded() {
        framer.reset()
        disarmPartialLineTimer()
        state = .closing
        if output.isEmpty { close() } else { updateInterest() }
    }

    // MARK: Partial lines

    /// Starts the clock on a partial line: it must be completed within `partialLineTimeout`
    /// of its first byte (not of the latest byte, so a byte every few seconds does not keep
    /// a stalled client connected forever).
    private func armPartialLineTimer() {
        guard partialLineTimer == nil, let queue else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [unowned self] in self.partialLineTimedOut() }
        timer.schedule(deadline: .now() + partialLineTimeout, leeway: .milliseconds(50))
        timer.activate()
        partialLineTimer = timer
    }

    private func disarmPartialLineTimer() {
        partialLineTimer?.cancel()
        partialLineTimer = nil
    }

    private func partialLineTimedOut() {
        if let queue { dispatchPrecondition(condition: .onQueue(queue)) }
        disarmPartialLineTimer()
        guard case .reading = state, framer.hasPartialLine else { return }
        Log.info(
            "Closing client \(id): a partial request line waited \(partialLineTimeout) s for its newline.",
            fields: [("EVENT", "refused"), ("CODE", DiligenceError.Code.requestTimeout.rawValue)])
        closeAfter(
            DiligenceError(
                .requestTimeout,
                "A request line stayed incomplete for \(Int(partialLineTimeout.rounded(.up))) s; end each request with a newline. Closing the connection."
            ))
    }

    /// The rest of an overlong line cannot be told from the next request: answer and close.
    private func refuseLongLine() {
        closeAfter(
            DiligenceError(.lineTooLong, "A request line may hold at most \(ProtocolInfo.maxLineBytes) bytes; closing the connection."))
    }

    /// Sends `error` as the connection's last answer, then closes it.
    func closeAfter(_ error: DiligenceError) {
        framer.reset()
        disarmPartialLineTimer()
        state = .closing
        send(Response.error(error, id: nil))
    }

    // MARK: Output

    /// Queues `text` and writes what the socket takes now.
    func send(_ text: String) {
        guard !closed else { return }
        lastActive = DispatchTime.now().uptimeNanoseconds
        output.append(text)
        if output.overflows(watcher: isWatcher) {
            Log.warning("Dropping client \(id): it left \(output.pending) bytes unread.")
            return close()
        }
        if !waitingForRoom { flush() }
    }

    /// Called after each write of output and at the close, while an answer is sent in pieces
    /// (an export): it sends its next one once `pendingOutput` is low enough.
    private var onWritten: (() -> Void)?

    /// Calls `watcher` after each write of output and at the close, until `stopWatchingWrites`.
    func watchWrites(_ watcher: @escaping () -> Void) {
        precondition(onWritten == nil, "connection \(id): one answer in pieces at a time")
        onWritten = watcher
    }

    func stopWatchingWrites() { onWritten = nil }

    private func flush() {
        defer { onWritten?() }
        while !output.isEmpty {
            switch try? Sys.send(fd, output.bytes, from: output.start) {
            case .done(let n): output.sent(n)
            case .wouldBlock:
                waitingForRoom = true
                return continueAfterFlush()
            case nil: return close()
            }
        }
        waitingForRoom = false
        if state == .closing { return close() }
        continueAfterFlush()
    }

    /// After a flush back-pressure may have ended: the lines already received are handled now,
    /// since no further input may ever come to trigger them (issue 26).
    private func continueAfterFlush() {
        if state == .reading(held: false) && !handlingLines { handleLines() } else { updateInterest() }
    }

    /// Holds the connection while its current request waits (see `State.reading`).
    func hold() {
        if case .reading = state { state = .reading(held: true) }
    }

    /// The held request is answered: read and handle the next ones.
    func resume() {
        guard isHeld else { return }
        state = .reading(held: false)
        handleLines()
    }

    /// Closes the descriptor now (out of the read loop first), so its number is free at once.
    func close() {
        guard !closed else { return }
        state = .closed
        output.removeAll()
        framer.reset()
        onLine = nil
        disarmPartialLineTimer()
        if !interest.isEmpty { readLoop?.unwatch(fd, token: id) }
        interest = []
        readLoop = nil
        Sys.close(fd)
        onClose?(self)
        onClose = nil
        onWritten?()
        onWritten = nil
    }
}
