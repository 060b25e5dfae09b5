import CSystemd
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// One open sd-bus connection driven from the daemon's queue, shared by the bus users
/// (Notifier and ScreenSaverWatch on the session bus, Logind on the system bus).
///
/// The descriptor is watched by a read source, a write source that runs only while sd-bus has
/// output queued, and a timer at sd-bus's earliest call timeout: an idle bus costs no wake-up,
/// and nothing ever blocks the queue.
final class BusConnection {
    /// The connection; valid until `close()`.
    let bus: OpaquePointer
    private let onBroken: (String) -> Void
    private var readSource: DispatchSourceRead?
    private var writeSource: DispatchSourceWrite?
    private var writeResumed = false
    private var timeoutTimer: DispatchSourceTimer?
    private var slots: [OpaquePointer?] = []
    private var signalHandlers: [SignalHandler] = []
    /// Inside sd_bus_process: sd-bus is not re-entrant, so nothing may pump meanwhile.
    private var processing = false
    /// Work that callbacks inside sd_bus_process leave for when it has returned.
    private var afterProcessing: [() -> Void] = []
    private var closed = false

    /// Which bus to open: sd-bus honours `DBUS_SYSTEM_BUS_ADDRESS` and `DBUS_SESSION_BUS_ADDRESS`.
    enum Bus: String {
        case system, session

        /// Where sd-bus looks for it, for messages.
        var address: String {
            switch self {
            case .system: getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) } ?? "unix:path=/run/dbus/system_bus_socket"
            case .session: getenv("DBUS_SESSION_BUS_ADDRESS").map { String(cString: $0) } ?? "$XDG_RUNTIME_DIR/bus"
            }
        }
    }

    /// Why a bus could not be opened.
    struct OpenFailure: Error {
        var bus: Bus
        /// sd-bus's negative errno; nil when the bus opened but has no descriptor to watch.
        var rc: Int32?

        /// "no system bus (ADDRESS: REASON)", "the session bus has no descriptor".
        var reason: String {
            guard let rc else { return "the \(bus.rawValue) bus has no descriptor" }
            return "no \(bus.rawValue) bus (\(bus.address): \(String(cString: strerror(-rc))))"
        }
    }

    /// Opens `bus` and drives it from `queue`; bus users go through `open(_:description:queue:lost:)`.
    private static func open(
        _ bus: Bus, description: String, queue: DispatchQueue, onBroken: @escaping (String) -> Void
    ) -> Result<BusConnection, OpenFailure> {
        var opened: OpaquePointer?
        let rc = bus == .system ? sd_bus_open_system(&opened) : sd_bus_open_user(&opened)
        guard rc >= 0, let opened else { return .failure(OpenFailure(bus: bus, rc: rc)) }
        guard let connection = BusConnection(opened, description: description, queue: queue, onBroken: onBroken) else {
            return .failure(OpenFailure(bus: bus, rc: nil))
        }
        return .success(connection)
    }

    /// Why a bus user has no connection: it did not open, or it ended later.
    enum Loss {
        case notOpened(OpenFailure)
        case ended(Bus, String)

        /// "no session bus (ADDRESS: REASON)", "the system bus connection ended (REASON)".
        var reason: String {
            switch self {
            case .notOpened(let failure): failure.reason
            case .ended(let bus, let why): "the \(bus.rawValue) bus connection ended (\(why))"
            }
        }
    }

    /// Opens `bus` for a user that does without it: `lost` runs before nil is returned when it
    /// does not open, and on the queue when the connection ends later (the user closes it then).
    static func open(_ bus: Bus, description: String, queue: DispatchQueue, lost: @escaping (Loss) -> Void) -> BusConnection? {
        switch Self.open(bus, description: description, queue: queue, onBroken: { lost(.ended(bus, $0)) }) {
        case .success(let connection): return connection
        case .failure(let failure):
            lost(.notOpened(failure))
            return nil
        }
    }

    /// Takes over `bus` (an opened, started connection) and starts watching it on `queue`.
    /// `onBroken` runs on the queue when the connection fails; the owner then calls `close()`.
    /// Nil (with the connection closed) when sd-bus has no descriptor to watch.
    init?(_ bus: OpaquePointer, description: String, queue: DispatchQueue, onBroken: @escaping (String) -> Void) {
        sd_bus_set_description(bus, description)
        let fd = sd_bus_get_fd(bus)
        guard fd >= 0 else {
            sd_bus_close_unref(bus)
            return nil
        }
        self.bus = bus
        self.onBroken = onBroken
        let read = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        read.setEventHandler { [weak self] in
            dispatchPrecondition(condition: .onQueue(queue))
            self?.pump()
        }
        read.activate()
        readSource = read
        let write = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
        write.setEventHandler { [weak self] in
            dispatchPrecondition(condition: .onQueue(queue))
            self?.pump()
        }
        writeSource = write // resumed only while sd-bus has output queued
        write.activate()
        write.suspend()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [weak self] in
            dispatchPrecondition(condition: .onQueue(queue))
            self?.pump()
        }
        timer.schedule(deadline: .distantFuture)
        timer.activate()
        timeoutTimer = timer
    }

    // MARK: Signals

    private final class SignalHandler {
        let handle: (OpaquePointer) -> Void
        init(_ handle: @escaping (OpaquePointer) -> Void) { self.handle = handle }
    }

    /// Subscribes to a signal (the AddMatch call goes out asynchronously); `handle` runs inside
    /// sd_bus_process, so anything that may use the bus again goes through `afterProcessing`.
    /// `arg0` narrows it to signals whose first argument is that string (the bus then sends no
    /// others: NameOwnerChanged of one name costs no wake-up for the rest). The caller pumps
    /// afterwards to send it. Returns sd-bus's negative errno on failure.
    @discardableResult
    func matchSignal(
        sender: String, path: String?, interface: String, member: String, arg0: String? = nil,
        _ handle: @escaping (OpaquePointer) -> Void
    ) -> Int32 {
        let handler = SignalHandler(handle)
        var slot: OpaquePointer?
        let callback: sd_bus_message_handler_t = { m, userdata, _ in
            guard let m, let userdata else { return 0 }
            Unmanaged<SignalHandler>.fromOpaque(userdata).takeUnretainedValue().handle(m)
            return 0
        }
        let context = Unmanaged.passUnretained(handler).toOpaque()
        let rc: Int32
        if let arg0 {
            var rule = "type='signal',sender='\(sender)',interface='\(interface)',member='\(member)',arg0='\(arg0)'"
            if let path { rule += ",path='\(path)'" }
            rc = sd_bus_add_match_async(bus, &slot, rule, callback, nil, context)
        } else {
            rc = sd_bus_match_signal_async(bus, &slot, sender, path, interface, member, callback, nil, context)
        }
        guard rc >= 0 else { return rc }
        slots.append(slot)
        signalHandlers.append(handler) // kept alive as long as its slot
        return rc
    }

    // MARK: Calls

    private final class ReplyHandler {
        let handle: (Result<OpaquePointer, BusError>) -> Void
        init(_ handle: @escaping (Result<OpaquePointer, BusError>) -> Void) { self.handle = handle }
    }

    /// A method call's error: its D-Bus name and message.
    struct BusError: Error {
        var name: String
        var message: String
        var description: String { message.isEmpty ? name : "\(name): \(message)" }
    }

    /// Calls a method without waiting for it: `append` adds the arguments (a negative errno
    /// fails the call), `handle` gets the reply message or its error inside sd_bus_process
    /// (read the reply there; anything that uses the bus again goes through
    /// `afterProcessing`). Returns sd-bus's negative errno when the call could not be sent.
    @discardableResult
    func call(
        _ destination: String, path: String, interface: String, member: String,
        append: (OpaquePointer) -> Int32 = { _ in 0 }, _ handle: @escaping (Result<OpaquePointer, BusError>) -> Void
    ) -> Int32 {
        var message: OpaquePointer?
        var rc = sd_bus_message_new_method_call(bus, &message, destination, path, interface, member)
        guard rc >= 0, let message else { return rc }
        defer { sd_bus_message_unref(message) }
        rc = append(message)
        guard rc >= 0 else { return rc }
        let context = Unmanaged.passRetained(ReplyHandler(handle)).toOpaque()
        rc = sd_bus_call_async(
            bus, nil, message,
            { reply, userdata, _ in
                let handler = Unmanaged<ReplyHandler>.fromOpaque(userdata!).takeRetainedValue()
                guard let reply else { return 0 }
                if sd_bus_message_is_method_error(reply, nil) != 0 {
                    let error = sd_bus_message_get_error(reply)
                    handler.handle(
                        .failure(
                            BusError(
                                name: error?.pointee.name.map { String(cString: $0) } ?? "error",
                                message: error?.pointee.message.map { String(cString: $0) } ?? "")))
                } else {
                    handler.handle(.success(reply))
                }
                return 0
            }, context, 25_000_000)
        if rc < 0 { Unmanaged<ReplyHandler>.fromOpaque(context).release() }
        pump()
        return rc
    }

    /// Runs `work` once the current sd_bus_process has returned (at once when none runs).
    func afterProcessing(_ work: @escaping () -> Void) {
        if processing { afterProcessing.append(work) } else { work() }
    }

    // MARK: Driving

    /// Lets sd-bus read, write and dispatch until it has nothing left, then waits for what it
    /// asks for next: output room, or its earliest call timeout.
    func pump() {
        guard !closed, !processing else { return }
        processing = true
        var rc: Int32 = 1
        while rc > 0 { rc = sd_bus_process(bus, nil) }
        processing = false
        let deferred = afterProcessing
        afterProcessing = []
        defer { deferred.forEach { $0() } }
        if rc < 0 {
            onBroken(String(cString: strerror(-rc)))
            return
        }
        guard !closed else { return }
        let wantsOutput = sd_bus_get_events(bus) & Int32(POLLOUT) != 0
        if wantsOutput != writeResumed {
            if wantsOutput { writeSource?.resume() } else { writeSource?.suspend() }
            writeResumed = wantsOutput
        }
        var usec: UInt64 = 0
        if sd_bus_get_timeout(bus, &usec) >= 0, usec != UInt64.max {
            // usec is absolute CLOCK_MONOTONIC, as DispatchTime is on Linux; 0 means "now".
            timeoutTimer?.schedule(deadline: DispatchTime(uptimeNanoseconds: max(1, usec) * 1000))
        } else {
            timeoutTimer?.schedule(deadline: .distantFuture)
        }
    }

    /// Stops watching and closes the connection, first sending what is queued if `flush`.
    func close(flush: Bool = false) {
        guard !closed else { return }
        closed = true
        if flush { sd_bus_flush(bus) }
        readSource?.cancel()
        if !writeResumed { writeSource?.resume() } // a suspended source cannot be cancelled
        writeSource?.cancel()
        timeoutTimer?.cancel()
        readSource = nil
        writeSource = nil
        timeoutTimer = nil
        for slot in slots { sd_bus_slot_unref(slot) }
        slots = []
        signalHandlers = []
        sd_bus_close_unref(bus)
    }

    deinit { close() }
}
