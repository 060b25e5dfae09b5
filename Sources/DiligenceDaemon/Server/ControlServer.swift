import DiligenceCore
import DiligenceProtocol
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// Accepts connections on the control socket and feeds request lines to `handler`.
/// Everything runs on the daemon's one serial queue.
final class ControlServer {
    private let queue: DispatchQueue
    /// Closed (and its file removed) by `stop`.
    private let listening: ListeningSocket
    private var listenFD: Int32 { listening.fd }
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
        guard let limit = Sys.descriptorLimit() else { return 256 }
        // RLIM_INFINITY is the largest value: clamped like any other.
        return max(16, min(Int(clamping: limit.soft), 1 << 20) - reservedDescriptors)
    }

    /// Raises this process's soft RLIMIT_NOFILE to its hard limit (where that is allowed: it
    /// always is for the soft one), so many clients fit; called once at start.
    static func raiseDescriptorLimit() {
        guard let limit = Sys.descriptorLimit(), limit.soft < limit.hard else { return }
        Sys.setDescriptorLimit(soft: limit.hard, hard: limit.hard)
    }

    /// A descriptor kept open to be given up when accept(2) fails with EMFILE while every
    /// connection is a watcher or busy: it lets the daemon accept the waiting client and tell
    /// it why, instead of leaving it to wait.
    private var spareDescriptor = (try? Sys.open("/dev/null", O_RDONLY)) ?? -1
    /// Accepting pauses after an accept error nothing could make room for (out of descriptors
    /// or memory) and is tried again after a back-off.
    private var backoff = AcceptBackoff()
    private var acceptRetry: DispatchSourceTimer?
    /// The episode of crowding going on (clients closed or refused to make room, accept
    /// errors): logged once when it begins and once when it is over.
    private var crowding: Crowding?
    private var crowdingCheck: DispatchSourceTimer?
    /// Whether root may connect too (by default only the daemon's own user may).
    var allowRoot = false
    /// Seconds a client may leave a request line incomplete before it is answered
    /// `request_timeout` and closed (tests shorten it).
    var partialLineTimeout = ControlServer.defaultPartialLineTimeout
    static let defaultPartialLineTimeout = 10.0

    init(listening: ListeningSocket, queue: DispatchQueue, handler: @escaping (ClientConnection, ArraySlice<UInt8>) -> Void) {
        self.listening = listening
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
                .socketError, "Cannot set up reading from clients (\(error)); the system may be out of file descriptors.")
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: listenFD, queue: queue)
        source.setEventHandler { [unowned self] in self.acceptPending() }
        acceptSource = source
        source.activate()
    }

    /// Stops accepting, closes every connection and the listening socket.
    func stop() {
        if spareDescriptor >= 0 {
            Sys.close(spareDescriptor)
            spareDescriptor = -1
        }
        acceptRetry?.cancel()
        acceptRetry = nil
        crowdingCheck?.cancel()
        crowdingCheck = nil
        if backoff.paused { acceptSource?.resume() }
        acceptSource?.cancel()
        acceptSource = nil
        for connection in Array(connections.values) { connection.close() }
        readLoop?.stop()
        readLoop = nil
        listening.close()
    }

    // MARK: Accepting

    private func acceptPending() {
        dispatchPrecondition(condition: .onQueue(queue))
        while acceptSource != nil {
            let fd: Int32
            do {
                guard case .done(let accepted) = try Sys.accept(listenFD) else { return }
                fd = accepted
                backoff.succeeded()
            } catch {
                guard handleAcceptError(error) else { return }
                continue
            }
            admit(fd)
        }
    }

    /// Whether to try accept again at once: a client gave up meanwhile, or room was made.
    /// Otherwise accepting pauses and is tried again after a back-off, logged once per episode.
    private func handleAcceptError(_ error: Errno) -> Bool {
        switch error.code {
        case ECONNABORTED, EPROTO, EPERM: return true
        case EMFILE, ENFILE:
            switch makeRoom(error) {
            case .madeRoom: return true
            case .nobodyWaiting: return false
            case .impossible: break
            }
        default: break
        }
        pauseAccepting(error)
        return false
    }

    private enum Room { case madeRoom, nobodyWaiting, impossible }

    /// Out of descriptors (accept fails so whether or not a client waits): takes the waiting
    /// client with the spare descriptor's number, then admits it in place of the connection
    /// idle longest, or refuses it when every connection is a watcher or busy.
    private func makeRoom(_ error: Errno) -> Room {
        if spareDescriptor < 0 { spareDescriptor = (try? Sys.open("/dev/null", O_RDONLY)) ?? -1 }
        guard spareDescriptor >= 0 else { return .impossible }
        Sys.close(spareDescriptor)
        defer { spareDescriptor = (try? Sys.open("/dev/null", O_RDONLY)) ?? -1 }
        let fd: Int32
        switch try? Sys.accept(listenFD) {
        case .done(let accepted)?: fd = accepted
        case .wouldBlock?: return .nobodyWaiting
        case nil: return .impossible
        }
        if let idle = idlest() {
            evict(idle, "The daemon is out of file descriptors (\(error.reason))")
            admit(fd)
            return .madeRoom
        }
        note(
            .refused,
            "The daemon is out of file descriptors (\(error.reason)) with \(connections.count) clients connected, every one a watcher or busy: new clients are refused with `too_many_connections`."
        )
        let refusal = DiligenceError(
            .tooManyConnections,
            "The daemon is out of file descriptors with \(connections.count) connections, all of them watchers or busy; close some and try again."
        )
        _ = try? Sys.send(fd, Array(Response.error(refusal, id: nil).utf8), flags: Int32(MSG_DONTWAIT))
        Sys.close(fd)
        return .madeRoom
    }

    private func pauseAccepting(_ error: Errno) {
        note(
            .acceptFailed,
            "Cannot accept clients (\(error.reason)) with \(connections.count) connected; accepting pauses and is tried again, backing off to every \(AcceptBackoff.maximumDelay) s."
        )
        let delay = backoff.failed()
        acceptSource?.suspend()
        let timer = acceptRetry ?? DispatchSource.makeTimerSource(queue: queue)
        if acceptRetry == nil {
            timer.setEventHandler { [unowned self] in self.retryAccepting() }
            timer.activate()
            acceptRetry = timer
        }
        timer.schedule(deadline: .now() + delay)
    }

    private func retryAccepting() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard backoff.paused, let source = acceptSource else { return }
        backoff.paused = false
        source.resume()
        acceptPending()
    }

    /// Counts `event` in the current episode of crowding, or begins one: logged with
    /// `description` now and summed up once it has been quiet for `Crowding.quietPeriod`.
    private func note(_ event: Crowding.Event, _ description: @autoclosure () -> String) {
        let now = DispatchTime.now().uptimeNanoseconds
        if crowding == nil {
            crowding = Crowding(since: now)
            Log.warning(
                description() + " Logged once for this episode.", fields: [("EVENT", "connections_crowded"), ("REASON", event.rawValue)])
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { [unowned self] in self.checkCrowding() }
            timer.schedule(deadline: .now() + Crowding.quietSeconds, repeating: Crowding.quietSeconds)
            timer.activate()
            crowdingCheck = timer
        }
        crowding?.record(event, at: now)
    }

    private func checkCrowding() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let episode = crowding, episode.isOver(at: DispatchTime.now().uptimeNanoseconds) else { return }
        Log.info(episode.summary(connected: connections.count), fields: [("EVENT", "connections_uncrowded")])
        crowding = nil
        crowdingCheck?.cancel()
        crowdingCheck = nil
    }

    // MARK: Admitting

    /// The connection idle longest that may be closed to make room: not a watcher, no
    /// request waiting for the database, nothing left to send.
    private func idlest() -> ClientConnection? {
        connections.values.filter { !$0.isWatcher && !$0.isHeld && $0.pendingOutput == 0 }.min { $0.lastActive < $1.lastActive }
    }

    /// Closes `connection` to admit another, saying why (`limit`: which one was reached). Its
    /// descriptor is free when this returns.
    private func evict(_ connection: ClientConnection, _ limit: String) {
        note(
            .evicted,
            "\(limit): the client idle longest is closed to admit a new one (\(connections.count) connected; every one closed is told `too_many_connections`)."
        )
        connection.send(
            Response.error(
                DiligenceError(
                    .tooManyConnections,
                    "\(limit); this connection was idle longest and is closed to admit another. Connect again when needed."
                ), id: nil))
        connection.close()
    }

    private var atTheLimit: String { "The daemon serves \(maxConnections) connections, its limit" }

    private func admit(_ fd: Int32) {
        let connection = ClientConnection(fd: fd, id: nextID, readBuffer: readBuffer)
        nextID += 1
        if connections.count >= maxConnections, let idle = idlest() { evict(idle, atTheLimit) }
        if let refusal = refusal(for: connection) {
            connection.send(Response.error(refusal, id: nil))
            connection.close()
            return
        }
        connections[connection.id] = connection
        connection.partialLineTimeout = partialLineTimeout
        guard let readLoop else {
            connections[connection.id] = nil
            return connection.close()
        }
        connection.start(
            queue: queue, readLoop: readLoop, onClose: { [unowned self] in self.connections[$0.id] = nil }, onLine: handler)
    }

    /// Why this peer may not talk to the daemon, if it may not.
    private func refusal(for connection: ClientConnection) -> DiligenceError? {
        if let peer = connection.peer {
            let me = Sys.userID
            if peer.uid != me && !(peer.uid == 0 && allowRoot) {
                Log.warning("Refused a connection from uid \(peer.uid) (pid \(peer.pid)): only uid \(me) may control this daemon.")
                return DiligenceError(.permissionDenied, "This daemon belongs to uid \(me); uid \(peer.uid) may not control it.")
            }
        }
        if connections.count >= maxConnections {
            note(.refused, "\(atTheLimit), every one a watcher or busy: new clients are refused with `too_many_connections`.")
            return DiligenceError(
                .tooManyConnections,
                "The daemon already serves \(maxConnections) connections, every one a watcher or busy; close some and try again.")
        }
        return nil
    }
}

/// An episode of crowding, as a value: clients closed or refused to make room, accept
/// errors. Logging each would flood the journal (a client reconnecting in a loop meets one
/// per attempt); the episode is logged when it begins and summed up when it has been quiet
/// for `quietSeconds`.
struct Crowding {
    enum Event: String {
        case evicted, refused
        case acceptFailed = "accept_failed"
    }

    static let quietSeconds = 5.0
    /// When it began and when its latest event was (CLOCK_MONOTONIC nanoseconds).
    let since: UInt64
    private(set) var latest: UInt64
    private(set) var counts: [Event: Int] = [:]

    init(since: UInt64) {
        self.since = since
        latest = since
    }

    mutating func record(_ event: Event, at now: UInt64) {
        counts[event, default: 0] += 1
        latest = max(latest, now)
    }

    func isOver(at now: UInt64) -> Bool {
        now >= latest && Double(now - latest) / 1e9 >= Self.quietSeconds
    }

    func summary(connected: Int) -> String {
        let seconds = Int((Double(latest - since) / 1e9).rounded())
        return "Clients are admitted normally again (\(connected) connected); over \(seconds) s, "
            + "\(counts[.evicted, default: 0]) idle client(s) were closed to make room, \(counts[.refused, default: 0]) refused, "
            + "\(counts[.acceptFailed, default: 0]) accept attempt(s) failed."
    }
}

/// The pause after an accept error nothing could make room for: accept(2) would fail again if
/// tried at once (the listening socket stays readable, so retrying in a loop is a spin). The
/// delay doubles per failure in a row, up to `maximumDelay`.
struct AcceptBackoff {
    static let firstDelay = 0.05
    static let maximumDelay = 1.0

    private(set) var failures = 0
    /// Whether accepting is paused now (waiting for the next try).
    var paused = false

    /// One more failure: pauses; the seconds to wait before the next try.
    mutating func failed() -> Double {
        failures += 1
        paused = true
        return min(Self.maximumDelay, Self.firstDelay * Double(1 << min(failures - 1, 10)))
    }

    /// A client was accepted: the next failure starts over at `firstDelay`.
    mutating func succeeded() {
        failures = 0
    }
}
