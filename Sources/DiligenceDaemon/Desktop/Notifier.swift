import CSystemd
import DiligenceCore
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// Desktop notifications through org.freedesktop.Notifications on the user's session bus
/// (sd-bus), with action buttons.
///
/// Everything runs on the daemon's queue (BusConnection drives the bus): calls are asynchronous
/// so an absent or slow notification server never blocks the timer, and an idle bus costs no
/// wake-up. The bus is opened on the first notification; when there is no bus or no server, one
/// warning is logged and the daemon goes on without notifications (it tries again on the next
/// one).
///
/// A notification lives as long as what it offered is still there: `closeStale` (after every
/// change of the timer) closes one whose state is gone (CloseNotification), so a desktop never
/// keeps offering "Start break" for a break that was skipped.
final class Notifier {
    /// One notification to show. Notifications of the same `slot` replace each other
    /// (replaces_id), so phase ends never stack up.
    struct Message {
        var slot: String
        var summary: String
        var body: String
        /// Action key and button label, in order.
        var actions: [(key: String, label: String)]
        var settings: NotificationSettings
        /// The `category` hint: `x-diligence.phase`, `x-diligence.reminder`.
        var category: String
        /// Whether the state the notification was shown for (and its buttons act on) is still
        /// there; once it is not, the notification is closed.
        var stillValid: () -> Bool
        /// Called on the queue once it is gone: closed, expired or never shown.
        let onClosed: (() -> Void)?
        /// Called on the queue with the action key the user chose.
        var onAction: (String) -> Void
    }

    static let service = "org.freedesktop.Notifications"
    static let objectPath = "/org/freedesktop/Notifications"
    /// How long a Notify call may wait for its reply.
    static let callTimeoutMicroseconds: UInt64 = 5_000_000

    private let queue: DispatchQueue
    private var connection: BusConnection?

    /// Per slot: the id the server gave the shown notification, and its message.
    private var shown: [String: (id: UInt32, message: Message)] = [:]
    /// Slots whose Notify call awaits its reply; a newer message for the slot waits here so
    /// that it can carry the reply's id as replaces_id.
    private var inFlight: Set<String> = []
    private var waiting: [String: Message] = [:]
    /// One warning per kind of trouble, until it goes away.
    private var warnedNoBus = false
    private var warnedNoServer = false

    /// Notifications the server acknowledged (tests, the log).
    private(set) var delivered = 0

    /// Called with each message no desktop shows (notifications off, no session bus, no
    /// server answering): the daemon's terminal fallback (`[notifications] bell`).
    private let undelivered: (Message) -> Void

    init(queue: DispatchQueue, undelivered: @escaping (Message) -> Void) {
        self.queue = queue
        self.undelivered = undelivered
    }

    // MARK: Showing

    /// Shows `message`, replacing the previous one of its slot.
    func show(_ message: Message) {
        guard message.settings.enabled else { return notShown(message) }
        if inFlight.contains(message.slot) {
            waiting[message.slot] = message
            return
        }
        guard let connection = openBus() else { return notShown(message) }
        let bus = connection.bus
        var call: OpaquePointer?
        guard sd_bus_message_new_method_call(bus, &call, Self.service, Self.objectPath, Self.service, "Notify") >= 0, let call else {
            return
        }
        defer { sd_bus_message_unref(call) }
        // The one it replaces is no longer ours to close (closeStale would close the new one).
        // Its `onClosed` is left to the new one, which holds the slot from now on.
        let replaces = shown.removeValue(forKey: message.slot)?.id ?? 0
        let built = Self.appendNotify(call, message: message, replacesID: replaces)
        guard built >= 0 else {
            Log.warning("Could not build a notification: \(String(cString: strerror(-built))).")
            return
        }
        let context = Unmanaged.passRetained(ReplyContext(notifier: self, message: message)).toOpaque()
        let rc = sd_bus_call_async(
            bus, nil, call,
            { reply, userdata, _ in
                let context = Unmanaged<ReplyContext>.fromOpaque(userdata!).takeRetainedValue()
                context.notifier?.received(reply, for: context.message)
                return 0
            }, context, Self.callTimeoutMicroseconds)
        guard rc >= 0 else {
            Unmanaged<ReplyContext>.fromOpaque(context).release()
            dropBus("sending a notification failed: \(String(cString: strerror(-rc)))")
            return notShown(message)
        }
        inFlight.insert(message.slot)
        connection.pump()
    }

    private final class ReplyContext {
        weak var notifier: Notifier?
        let message: Message
        init(notifier: Notifier, message: Message) {
            self.notifier = notifier
            self.message = message
        }
    }

    /// The Notify reply: the id to replace next time, or why there is no notification.
    private func received(_ reply: OpaquePointer?, for message: Message) {
        inFlight.remove(message.slot)
        if let reply, sd_bus_message_is_method_error(reply, nil) != 0 {
            let error = sd_bus_message_get_error(reply)
            let name = error?.pointee.name.map { String(cString: $0) } ?? "error"
            let text = error?.pointee.message.map { String(cString: $0) } ?? ""
            if !warnedNoServer {
                warnedNoServer = true
                Log.warning(
                    "No desktop notification shown (\(name): \(text)); is a notification server (dunst, mako, a desktop) running? Notifications are skipped until one answers.",
                    fields: [("EVENT", "notifications_unavailable")])
            }
            shown[message.slot] = nil
            notShown(message)
        } else if let reply {
            var id: UInt32 = 0
            if sd_bus_message_read_basic(reply, CChar(UInt8(ascii: "u")), &id) > 0 {
                shown[message.slot] = (id, message)
                delivered += 1
                if warnedNoServer {
                    warnedNoServer = false
                    Log.info("Desktop notifications work again.")
                }
            }
        }
        if let next = waiting.removeValue(forKey: message.slot) {
            // Not from inside sd_bus_process: show() pumps the bus.
            connection?.afterProcessing { [weak self] in self?.show(next) }
        } else if shown[message.slot] != nil {
            // The timer may have moved on while the call was on its way.
            connection?.afterProcessing { [weak self] in self?.closeStale() }
        }
    }

    /// A message no desktop shows: the terminal fallback, and it is gone.
    private func notShown(_ message: Message) {
        undelivered(message)
        message.onClosed?()
    }

    // MARK: Closing

    /// Closes every shown notification whose state is gone (CloseNotification; the server
    /// answers with NotificationClosed). Call after every change of the timer.
    func closeStale() {
        for (slot, entry) in shown where !entry.message.stillValid() {
            shown[slot] = nil
            close(id: entry.id)
            entry.message.onClosed?()
        }
    }

    private func close(id: UInt32) {
        guard let connection else { return }
        var call: OpaquePointer?
        guard sd_bus_message_new_method_call(connection.bus, &call, Self.service, Self.objectPath, Self.service, "CloseNotification") >= 0,
            let call
        else { return }
        defer { sd_bus_message_unref(call) }
        var number = id
        // No reply is awaited: a notification the user dismissed already answers with an error.
        guard sd_bus_message_append_basic(call, Self.type("u"), &number) >= 0,
            sd_bus_message_set_expect_reply(call, 0) >= 0, sd_bus_send(connection.bus, call, nil) >= 0
        else {
            Log.warning("Could not close notification \(id).")
            return
        }
        connection.pump()
    }

    /// Appends Notify's arguments: (s app_name, u replaces_id, s app_icon, s summary, s body,
    /// as actions, a{sv} hints, i expire_timeout). Negative errno on failure.
    private static func appendNotify(_ m: OpaquePointer, message: Message, replacesID: UInt32) -> Int32 {
        func string(_ text: String) -> Int32 { text.withCString { sd_bus_message_append_basic(m, type("s"), $0) } }
        var rc = string("Diligence")
        var replaces = replacesID
        if rc >= 0 { rc = sd_bus_message_append_basic(m, type("u"), &replaces) }
        if rc >= 0 { rc = string("diligence") }
        if rc >= 0 { rc = string(message.summary) }
        if rc >= 0 { rc = string(message.body) }
        if rc >= 0 { rc = sd_bus_message_open_container(m, type("a"), "s") }
        for action in message.actions where rc >= 0 {
            rc = string(action.key)
            if rc >= 0 { rc = string(action.label) }
        }
        if rc >= 0 { rc = sd_bus_message_close_container(m) }
        if rc >= 0 { rc = sd_bus_message_open_container(m, type("a"), "{sv}") }
        if rc >= 0 { rc = sd_bus_message_open_container(m, type("e"), "sv") }
        if rc >= 0 { rc = string("urgency") }
        if rc >= 0 { rc = sd_bus_message_open_container(m, type("v"), "y") }
        var urgency = message.settings.urgency.level
        if rc >= 0 { rc = sd_bus_message_append_basic(m, type("y"), &urgency) }
        if rc >= 0 { rc = sd_bus_message_close_container(m) }
        if rc >= 0 { rc = sd_bus_message_close_container(m) }
        // desktop-entry names contrib/diligence.desktop (installed in share/applications).
        for (key, value) in [("desktop-entry", "diligence"), ("category", message.category)] where rc >= 0 {
            rc = sd_bus_message_open_container(m, type("e"), "sv")
            if rc >= 0 { rc = string(key) }
            if rc >= 0 { rc = sd_bus_message_open_container(m, type("v"), "s") }
            if rc >= 0 { rc = string(value) }
            if rc >= 0 { rc = sd_bus_message_close_container(m) }
            if rc >= 0 { rc = sd_bus_message_close_container(m) }
        }
        if rc >= 0 { rc = sd_bus_message_close_container(m) }
        var timeout = Int32(message.settings.timeoutMilliseconds ?? -1)
        if rc >= 0 { rc = sd_bus_message_append_basic(m, type("i"), &timeout) }
        return rc
    }

    private static func type(_ code: Unicode.Scalar) -> CChar { CChar(UInt8(ascii: code)) }

    // MARK: Signals

    /// ActionInvoked(u id, s action_key) and NotificationClosed(u id, u reason).
    private func signalArrived(_ m: OpaquePointer) {
        var id: UInt32 = 0
        guard sd_bus_message_read_basic(m, Self.type("u"), &id) > 0 else { return }
        guard let slot = shown.first(where: { $0.value.id == id })?.key, let onAction = shown[slot]?.message.onAction else { return }
        if sd_bus_message_is_signal(m, Self.service, "ActionInvoked") > 0 {
            var key: UnsafePointer<CChar>?
            guard sd_bus_message_read_basic(m, Self.type("s"), &key) > 0, let key else { return }
            let action = String(cString: key)
            Log.info("Notification action \(action) chosen.", fields: [("EVENT", "notification_action"), ("ACTION", action)])
            // Not from inside sd_bus_process: the action may show the next notification.
            connection?.afterProcessing { onAction(action) }
        } else {
            let closed = shown.removeValue(forKey: slot)?.message.onClosed
            connection?.afterProcessing { closed?() }
        }
    }

    // MARK: Asking the server

    enum ProbeFailure: Error {
        case noBus(String)
        case noServer(String)
    }

    /// The server's "name version (vendor)", asked on a connection of its own (`doctor`); waits
    /// at most `timeoutMicroseconds`, the only call here that blocks: a person asked for it.
    static func serverInformation(timeoutMicroseconds: UInt64 = 1_000_000) -> Result<String, ProbeFailure> {
        var bus: OpaquePointer?
        let opened = sd_bus_open_user(&bus)
        guard opened >= 0, let bus else {
            return .failure(.noBus(BusConnection.OpenFailure(bus: .session, rc: opened).reason))
        }
        defer { sd_bus_flush_close_unref(bus) }
        var error = sd_bus_error()
        var call: OpaquePointer?
        var reply: OpaquePointer?
        defer {
            sd_bus_error_free(&error)
            sd_bus_message_unref(call)
            sd_bus_message_unref(reply)
        }
        var rc = sd_bus_message_new_method_call(bus, &call, service, objectPath, service, "GetServerInformation")
        if rc >= 0 { rc = sd_bus_call(bus, call, timeoutMicroseconds, &error, &reply) }
        guard rc >= 0, let reply else {
            let name = error.name.map { String(cString: $0) } ?? String(cString: strerror(-rc))
            return .failure(.noServer(name))
        }
        var fields: [String] = []
        for _ in 0..<3 {
            var text: UnsafePointer<CChar>?
            guard sd_bus_message_read_basic(reply, type("s"), &text) > 0, let text else { break }
            fields.append(String(cString: text))
        }
        guard fields.count == 3 else { return .failure(.noServer("GetServerInformation answered no name, vendor and version")) }
        // Another program's words: kept to one short line.
        let clean = fields.map { field in
            String(String.UnicodeScalarView(field.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(64)))
        }
        return .success("\(clean[0]) \(clean[2]) (\(clean[1]))")
    }

    // MARK: The bus

    /// The open bus, opening it (and subscribing to the signals) the first time.
    private func openBus() -> BusConnection? {
        if let connection { return connection }
        guard
            let opened = BusConnection.open(
                .session, description: "diligenced-notifications", queue: queue, lost: { [weak self] loss in self?.busLost(loss) })
        else { return nil }
        warnedNoBus = false
        connection = opened
        for member in ["ActionInvoked", "NotificationClosed"] {
            let rc = opened.matchSignal(sender: Self.service, path: Self.objectPath, interface: Self.service, member: member) {
                [weak self] m in
                self?.signalArrived(m)
            }
            if rc < 0 {
                Log.warning("Could not subscribe to \(member): \(String(cString: strerror(-rc))); notification buttons will do nothing.")
            }
        }
        return opened
    }

    /// No bus is warned of once, until one opens; a broken one is dropped.
    private func busLost(_ loss: BusConnection.Loss) {
        switch loss {
        case .ended: dropBus(loss.reason)
        case .notOpened(let failure) where failure.rc != nil:
            guard !warnedNoBus else { return }
            warnedNoBus = true
            Log.warning(
                "\(failure.reason.capitalizedFirst); desktop notifications are off until one appears.",
                fields: [("EVENT", "notifications_unavailable")])
        case .notOpened: warnedNoBus = false
        }
    }

    /// Forgets a broken connection; the next notification opens a new one.
    private func dropBus(_ why: String?) {
        guard let connection else { return }
        if let why { Log.warning("Desktop notifications: \(why); reconnecting on the next one.") }
        connection.close()
        self.connection = nil
        shown = [:]
        inFlight = []
    }

    /// Sends what is queued and closes the bus (daemon exit).
    func close() {
        connection?.close(flush: true)
        dropBus(nil)
    }
}
