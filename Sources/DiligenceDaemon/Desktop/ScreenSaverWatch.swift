import CSystemd
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// `org.freedesktop.ScreenSaver` on the session bus (GNOME, KDE, xfce; docs/presence.md): its
/// `ActiveChanged(b)` signal, from whichever object path the desktop uses, says the screen
/// saver (or lock) came on or went off. `GetActive` is asked once at the start, which also
/// tells whether anyone provides it; without a session bus or a screen saver it says so once.
/// Signals only: nothing is polled.
final class ScreenSaverWatch {
    static let service = "org.freedesktop.ScreenSaver"
    static let objectPath = "/org/freedesktop/ScreenSaver"

    private let queue: DispatchQueue
    private let onActive: (Bool) -> Void
    private var connection: BusConnection?

    /// Whether a screen saver answered on the session bus (`doctor`).
    private(set) var following = false

    /// `onActive` runs on `queue` with the screen saver's new state.
    init(queue: DispatchQueue, onActive: @escaping (Bool) -> Void) {
        self.queue = queue
        self.onActive = onActive
    }

    /// Opens the session bus and subscribes. Call once.
    func start() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard
            let bus = BusConnection.open(
                .session, description: "diligenced-screensaver", queue: queue, lost: { [weak self] loss in self?.unavailable(loss.reason) })
        else { return }
        connection = bus
        bus.matchSignal(sender: Self.service, path: nil, interface: Self.service, member: "ActiveChanged") { [weak self] m in
            var active: Int32 = 0
            guard sd_bus_message_read_basic(m, CChar(UInt8(ascii: "b")), &active) > 0 else { return }
            self?.connection?.afterProcessing { self?.onActive(active != 0) }
        }
        bus.call(Self.service, path: Self.objectPath, interface: Self.service, member: "GetActive") { [weak self] reply in
            switch reply {
            case .success(let m):
                var active: Int32 = 0
                guard sd_bus_message_read_basic(m, CChar(UInt8(ascii: "b")), &active) > 0 else { return }
                self?.following = true
                Log.info(
                    "Following the screen saver on the session bus.", fields: [("EVENT", "presence_source"), ("SOURCE", "screensaver")])
                self?.connection?.afterProcessing { self?.onActive(active != 0) }
            case .failure(let error):
                // Kept subscribed: a screen saver started later is heard.
                Log.info(
                    "No org.freedesktop.ScreenSaver on the session bus (\(error.description)); its ActiveChanged is heard if one starts.",
                    fields: [("EVENT", "presence_unavailable"), ("SOURCE", "screensaver")])
            }
        }
    }

    /// Logs why the screen saver is not heard and closes the connection for good.
    private func unavailable(_ why: String) {
        Log.info(
            "Not following the screen saver: \(why); `diligencectl away`/`back` still work (diligenced(1), PRESENCE).",
            fields: [("EVENT", "presence_unavailable"), ("SOURCE", "screensaver")])
        close()
    }

    func close() {
        connection?.close()
        connection = nil
    }
}
