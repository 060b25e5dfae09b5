import CSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// The user's logind session on the system bus, as a source of presence (docs/presence.md):
/// its `Lock`/`Unlock` signals and the `LockedHint`, `IdleHint` and `IdleSinceHintMonotonic`
/// properties through `PropertiesChanged`. Signals only: one `GetAll` when it is found, then
/// nothing is asked again and nothing wakes the daemon up.
///
/// The session is the daemon's own (`GetSessionByPID`) or, for a daemon run by the user's
/// systemd manager (which belongs to no session), the user's display session
/// (`org.freedesktop.login1.User.Display`). Without one it says so once and stays silent.
final class LogindSession {
    enum Signal: Equatable {
        case locked(Bool)
        /// Idle or not; `since`: when the idleness began, CLOCK_MONOTONIC seconds.
        case idle(Bool, since: Double?)
    }

    static let sessionInterface = "org.freedesktop.login1.Session"
    static let userInterface = "org.freedesktop.login1.User"
    static let properties = "org.freedesktop.DBus.Properties"

    private let connection: BusConnection
    private let onSignal: (Signal) -> Void
    /// The session object followed; nil until found.
    private(set) var path: String?

    /// `onSignal` runs outside sd_bus_process, on the connection's queue.
    init(connection: BusConnection, onSignal: @escaping (Signal) -> Void) {
        self.connection = connection
        self.onSignal = onSignal
    }

    /// Finds the session and follows it.
    func start() {
        let pid = UInt32(Sys.processID)
        let rc = connection.call(
            Logind.service, path: Logind.objectPath, interface: Logind.interface, member: "GetSessionByPID",
            append: Self.arguments(uint32: pid)
        ) { [weak self] reply in
            switch reply {
            case .success(let m): self?.found(Self.readObjectPath(m), how: "the daemon's own")
            case .failure: self?.askDisplaySession()
            }
        }
        if rc < 0 { unavailable("GetSessionByPID could not be sent (\(String(cString: strerror(-rc))))") }
    }

    /// The user's display session: `GetUser(uid)`, then its `Display` property, `(so)`.
    private func askDisplaySession() {
        let uid = UInt32(Sys.userID)
        connection.call(
            Logind.service, path: Logind.objectPath, interface: Logind.interface, member: "GetUser",
            append: Self.arguments(uint32: uid)
        ) { [weak self] reply in
            guard case .success(let m) = reply, let user = Self.readObjectPath(m) else {
                self?.unavailable("logind knows no session of this process nor a user \(uid)")
                return
            }
            self?.connection.afterProcessing { self?.askDisplay(of: user) }
        }
    }

    private func askDisplay(of user: String) {
        connection.call(
            Logind.service, path: user, interface: Self.properties, member: "Get",
            append: Self.arguments(strings: [Self.userInterface, "Display"])
        ) { [weak self] reply in
            guard case .success(let m) = reply, let path = Self.readDisplay(m), path != "/" else {
                self?.unavailable("the user has no display session (User.Display is empty)")
                return
            }
            self?.found(path, how: "the user's display")
        }
    }

    /// Subscribes to the session's signals, then reads its hints once.
    private func found(_ path: String?, how: String) {
        guard let path else { return unavailable("logind answered no session path") }
        self.path = path
        connection.afterProcessing { [weak self] in
            guard let self else { return }
            for member in ["Lock", "Unlock"] {
                connection.matchSignal(sender: Logind.service, path: path, interface: Self.sessionInterface, member: member) {
                    [weak self] _ in
                    self?.deliver([.locked(member == "Lock")])
                }
            }
            connection.matchSignal(sender: Logind.service, path: path, interface: Self.properties, member: "PropertiesChanged") {
                [weak self] m in
                guard Self.readString(m) == Self.sessionInterface else { return }
                self?.deliver(Self.readHints(m))
            }
            connection.call(
                Logind.service, path: path, interface: Self.properties, member: "GetAll",
                append: Self.arguments(strings: [Self.sessionInterface])
            ) { [weak self] reply in
                if case .success(let m) = reply { self?.deliver(Self.readHints(m)) }
            }
            Log.info(
                "Following \(how) logind session \(path) for lock and idle.", fields: [("EVENT", "presence_source"), ("SOURCE", "logind")])
        }
    }

    private func deliver(_ signals: [Signal]) {
        guard !signals.isEmpty else { return }
        connection.afterProcessing { [weak self] in signals.forEach { self?.onSignal($0) } }
    }

    private func unavailable(_ why: String) {
        Log.info(
            "Not following logind's lock and idle hints: \(why); `diligencectl away`/`back` still work (diligenced(1), PRESENCE).",
            fields: [("EVENT", "presence_unavailable"), ("SOURCE", "logind")])
    }

    // MARK: Messages

    /// Appends one `u` argument.
    private static func arguments(uint32 value: UInt32) -> (OpaquePointer) -> Int32 {
        { m in
            var number = value
            return sd_bus_message_append_basic(m, code("u"), &number)
        }
    }

    /// Appends `s` arguments.
    private static func arguments(strings: [String]) -> (OpaquePointer) -> Int32 {
        { m in
            for text in strings {
                let rc = text.withCString { sd_bus_message_append_basic(m, code("s"), $0) }
                if rc < 0 { return rc }
            }
            return 0
        }
    }

    private static func code(_ c: Unicode.Scalar) -> CChar { CChar(UInt8(ascii: c)) }

    static func readString(_ m: OpaquePointer) -> String? {
        var p: UnsafePointer<CChar>?
        guard sd_bus_message_read_basic(m, code("s"), &p) > 0, let p else { return nil }
        return String(cString: p)
    }

    private static func readObjectPath(_ m: OpaquePointer) -> String? {
        var p: UnsafePointer<CChar>?
        guard sd_bus_message_read_basic(m, code("o"), &p) > 0, let p else { return nil }
        return String(cString: p)
    }

    /// `Display`'s value: a variant holding the struct (s id, o path).
    private static func readDisplay(_ m: OpaquePointer) -> String? {
        guard sd_bus_message_enter_container(m, code("v"), "(so)") > 0, sd_bus_message_enter_container(m, code("r"), "so") > 0
        else { return nil }
        _ = readString(m)
        return readObjectPath(m)
    }

    /// The hints in an `a{sv}` of session properties (GetAll's answer, PropertiesChanged's
    /// second argument): a lock change, then an idle change with its beginning.
    static func readHints(_ m: OpaquePointer) -> [Signal] {
        var locked: Bool?
        var idle: Bool?
        var since: Double?
        guard sd_bus_message_enter_container(m, code("a"), "{sv}") > 0 else { return [] }
        while sd_bus_message_enter_container(m, code("e"), "sv") > 0 {
            let key = readString(m) ?? ""
            switch key {
            case "LockedHint", "IdleHint":
                var flag: Int32 = 0
                if sd_bus_message_enter_container(m, code("v"), "b") > 0 {
                    if sd_bus_message_read_basic(m, code("b"), &flag) > 0 {
                        if key == "LockedHint" { locked = flag != 0 } else { idle = flag != 0 }
                    }
                    sd_bus_message_exit_container(m)
                }
            case "IdleSinceHintMonotonic":
                var usec: UInt64 = 0
                if sd_bus_message_enter_container(m, code("v"), "t") > 0 {
                    if sd_bus_message_read_basic(m, code("t"), &usec) > 0, usec > 0 { since = Double(usec) / 1e6 }
                    sd_bus_message_exit_container(m)
                }
            default:
                sd_bus_message_skip(m, "v")
            }
            sd_bus_message_exit_container(m)
        }
        sd_bus_message_exit_container(m)
        var signals: [Signal] = []
        if let locked { signals.append(.locked(locked)) }
        if let idle { signals.append(.idle(idle, since: since)) }
        return signals
    }
}
