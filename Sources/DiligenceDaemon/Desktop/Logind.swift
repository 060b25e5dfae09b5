import CSystemd
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// logind's `PrepareForSleep(b)` on the system bus (sd-bus, `DBUS_SYSTEM_BUS_ADDRESS` honoured):
/// told before the machine sleeps, the daemon saves everything; told when it wakes, it applies
/// the suspend policy at once instead of at the next timer.
///
/// Only a head start: the clocks (Daemon.observeClocks, the wall-clock wake timer) detect a
/// suspend without logind too. So a missing system bus is logged once and nothing more — no
/// retries, no wake-ups; a bus that goes away later is dropped the same way.
final class Logind {
    static let service = "org.freedesktop.login1"
    static let objectPath = "/org/freedesktop/login1"
    static let interface = "org.freedesktop.login1.Manager"

    private let queue: DispatchQueue
    private let prepareForSleep: (Bool) -> Void
    private let presence: (LogindSession.Signal) -> Void
    private var connection: BusConnection?
    /// The user's session, followed for lock and idle (`LogindSession`).
    private var session: LogindSession?

    /// `prepareForSleep` runs on `queue` with the signal's argument: true before the machine
    /// sleeps, false after it woke; `presence` with the session's lock and idle changes.
    init(
        queue: DispatchQueue, prepareForSleep: @escaping (Bool) -> Void,
        presence: @escaping (LogindSession.Signal) -> Void
    ) {
        self.queue = queue
        self.prepareForSleep = prepareForSleep
        self.presence = presence
    }

    /// Opens the system bus and subscribes to PrepareForSleep. Call once.
    func start() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard
            let bus = BusConnection.open(
                .system, description: "diligenced-logind", queue: queue, lost: { [weak self] loss in self?.unavailable(loss.reason) })
        else { return }
        connection = bus
        let subscribed = bus.matchSignal(sender: Self.service, path: Self.objectPath, interface: Self.interface, member: "PrepareForSleep")
        { [weak self] m in
            var sleeping: Int32 = 0
            guard sd_bus_message_read_basic(m, CChar(UInt8(ascii: "b")), &sleeping) > 0 else { return }
            // Saving writes the database and may notify: not from inside sd_bus_process.
            self?.connection?.afterProcessing { self?.prepareForSleep(sleeping != 0) }
        }
        guard subscribed >= 0 else {
            unavailable("subscribing to PrepareForSleep failed (\(String(cString: strerror(-subscribed))))")
            return
        }
        bus.pump()
        Log.debug("Listening for logind's PrepareForSleep on the system bus (\(BusConnection.Bus.system.address)).")
        session = LogindSession(connection: bus, onSignal: presence)
        session?.start()
    }

    /// The user's session that logind's lock and idle hints come from, once found (`doctor`).
    var sessionPath: String? { session?.path }

    /// Logs why logind is not heard and closes the connection for good.
    private func unavailable(_ why: String) {
        Log.info(
            "Not listening for logind's sleep signals: \(why); a suspend is still noticed from the clocks when the machine wakes.",
            fields: [("EVENT", "logind_unavailable")])
        close()
    }

    /// Closes the connection (daemon exit).
    func close() {
        session = nil
        connection?.close()
        connection = nil
    }
}
