import CSystemd
import DiligenceCore
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// One notification server's do-not-disturb, in three steps: read the state it has now, turn
/// do-not-disturb on, and put back a state read before. Every step answers on the daemon's
/// queue; a failure carries the reason for the log.
protocol FocusBackendDriver: AnyObject {
    var backend: FocusSettings.Backend { get }
    func read(_ done: @escaping (Result<String, FocusFailure>) -> Void)
    /// Turns do-not-disturb on; `previous` is what `read` gave (Plasma answers a cookie).
    func enter(previous: String, _ done: @escaping (Result<String, FocusFailure>) -> Void)
    func leave(previous: String, _ done: @escaping (Result<Void, FocusFailure>) -> Void)
}

struct FocusFailure: Error, Equatable {
    var reason: String
    init(_ reason: String) { self.reason = reason }
}

private func busType(_ character: Character) -> CChar { CChar(UInt8(ascii: character.unicodeScalars.first!)) }

/// Session-bus backends: dunst's `paused` property, swaync's GetDnd/SetDnd, Plasma's
/// Inhibit/UnInhibit.
final class BusFocusBackend: FocusBackendDriver {
    let backend: FocusSettings.Backend
    private let bus: () -> BusConnection?
    static let notifications = "org.freedesktop.Notifications"
    static let notificationsPath = "/org/freedesktop/Notifications"
    static let dunstInterface = "org.dunstproject.cmd0"
    static let swaync = "org.erikreider.swaync.cc"
    static let swayncPath = "/org/erikreider/swaync/cc"

    init(_ backend: FocusSettings.Backend, bus: @escaping () -> BusConnection?) {
        self.backend = backend
        self.bus = bus
    }

    func read(_ done: @escaping (Result<String, FocusFailure>) -> Void) {
        switch backend {
        case .dunst:
            call(
                Self.notifications, Self.notificationsPath, "org.freedesktop.DBus.Properties", "Get",
                append: { m in Self.strings(m, [Self.dunstInterface, "paused"]) }, read: Self.readVariantBool, answer: done)
        case .swaync:
            call(Self.swaync, Self.swayncPath, Self.swaync, "GetDnd", append: { _ in 0 }, read: Self.readBool, answer: done)
        default:
            // Plasma's inhibitions are counted per holder: there is nothing of the user's to read.
            done(.success(""))
        }
    }

    func enter(previous: String, _ done: @escaping (Result<String, FocusFailure>) -> Void) {
        switch backend {
        case .dunst: setDunst(true) { done($0.map { previous }) }
        case .swaync: setSwaync(true) { done($0.map { previous }) }
        default:
            call(
                Self.notifications, Self.notificationsPath, Self.notifications, "Inhibit",
                append: { m in Self.inhibitArguments(m) },
                read: { reply in
                    var cookie: UInt32 = 0
                    return sd_bus_message_read_basic(reply, busType("u"), &cookie) > 0 ? String(cookie) : nil
                }, answer: done)
        }
    }

    func leave(previous: String, _ done: @escaping (Result<Void, FocusFailure>) -> Void) {
        switch backend {
        case .dunst: setDunst(previous == "true", done)
        case .swaync: setSwaync(previous == "true", done)
        default:
            // A cookie of an earlier connection was released by the bus when that one ended.
            guard var cookie = UInt32(previous) else { return done(.success(())) }
            call(
                Self.notifications, Self.notificationsPath, Self.notifications, "UnInhibit",
                append: { m in sd_bus_message_append_basic(m, busType("u"), &cookie) }, read: { _ in "" },
                answer: { done($0.map { _ in () }) })
        }
    }

    private func setDunst(_ paused: Bool, _ done: @escaping (Result<Void, FocusFailure>) -> Void) {
        call(
            Self.notifications, Self.notificationsPath, "org.freedesktop.DBus.Properties", "Set",
            append: { m in
                var value: Int32 = paused ? 1 : 0
                var rc = Self.strings(m, [Self.dunstInterface, "paused"])
                if rc >= 0 { rc = sd_bus_message_open_container(m, busType("v"), "b") }
                if rc >= 0 { rc = sd_bus_message_append_basic(m, busType("b"), &value) }
                if rc >= 0 { rc = sd_bus_message_close_container(m) }
                return rc
            }, read: { _ in "" },
            answer: { done($0.map { _ in () }) })
    }

    private func setSwaync(_ on: Bool, _ done: @escaping (Result<Void, FocusFailure>) -> Void) {
        call(
            Self.swaync, Self.swayncPath, Self.swaync, "SetDnd",
            append: { m in
                var value: Int32 = on ? 1 : 0
                return sd_bus_message_append_basic(m, busType("b"), &value)
            }, read: { _ in "" },
            answer: { done($0.map { _ in () }) })
    }

    /// Inhibit("diligence", reason, {}): Plasma holds notifications back until UnInhibit or
    /// until this connection ends.
    private static func inhibitArguments(_ m: OpaquePointer) -> Int32 {
        var rc = strings(m, ["diligence", "Focus: a work phase runs"])
        if rc >= 0 { rc = sd_bus_message_open_container(m, busType("a"), "{sv}") }
        if rc >= 0 { rc = sd_bus_message_close_container(m) }
        return rc
    }

    private static func strings(_ m: OpaquePointer, _ texts: [String]) -> Int32 {
        for text in texts {
            let rc = text.withCString { sd_bus_message_append_basic(m, busType("s"), $0) }
            if rc < 0 { return rc }
        }
        return 0
    }

    private static func readBool(_ reply: OpaquePointer) -> String? {
        var value: Int32 = 0
        return sd_bus_message_read_basic(reply, busType("b"), &value) > 0 ? (value != 0 ? "true" : "false") : nil
    }

    private static func readVariantBool(_ reply: OpaquePointer) -> String? {
        guard sd_bus_message_enter_container(reply, busType("v"), "b") > 0 else { return nil }
        return readBool(reply)
    }

    /// One method call; `decode` turns the reply into the answer (nil: a reply of the wrong shape).
    private func call(
        _ destination: String, _ path: String, _ interface: String, _ member: String, append: @escaping (OpaquePointer) -> Int32,
        read decode: @escaping (OpaquePointer) -> String?, answer done: @escaping (Result<String, FocusFailure>) -> Void
    ) {
        guard let connection = bus() else { return done(.failure(FocusFailure("no session bus"))) }
        let rc = connection.call(destination, path: path, interface: interface, member: member, append: append) { result in
            let answer: Result<String, FocusFailure>
            switch result {
            case .success(let reply):
                answer = decode(reply).map { .success($0) } ?? .failure(FocusFailure("\(member) answered an unexpected reply"))
            case .failure(let error):
                answer = .failure(FocusFailure("\(destination) \(member): \(error.description)"))
            }
            connection.afterProcessing { done(answer) }
        }
        if rc < 0 { done(.failure(FocusFailure("\(member) could not be sent: \(String(cString: strerror(-rc)))"))) }
    }
}

/// Backends driven by a program: mako's modes (`makoctl mode`), GNOME's show-banners
/// (`gsettings`), and the user's `on_enter`/`on_leave`.
final class CommandFocusBackend: FocusBackendDriver {
    let backend: FocusSettings.Backend
    private let queue: DispatchQueue
    private let onEnter: [String]
    private let onLeave: [String]
    private var running: [Subprocess] = []
    static let makoMode = "do-not-disturb"
    static let gnomeSchema = ["org.gnome.desktop.notifications", "show-banners"]

    init(_ backend: FocusSettings.Backend, queue: DispatchQueue, onEnter: [String] = [], onLeave: [String] = []) {
        self.backend = backend
        self.queue = queue
        self.onEnter = onEnter
        self.onLeave = onLeave
    }

    func read(_ done: @escaping (Result<String, FocusFailure>) -> Void) {
        switch backend {
        case .mako: run(["makoctl", "mode"]) { done($0.map { $0.joined(separator: ",") }) }
        case .gnome: run(["gsettings", "get"] + Self.gnomeSchema) { done($0.map { $0.joined() }) }
        default: done(.success(""))
        }
    }

    func enter(previous: String, _ done: @escaping (Result<String, FocusFailure>) -> Void) {
        switch backend {
        case .mako:
            // A mode the user had already stays theirs: not added, so not removed later.
            if Self.modes(previous).contains(Self.makoMode) { return done(.success(previous)) }
            // Read again: after a restart the mode this daemon added may still be there.
            run(["makoctl", "mode"]) { [self] now in
                if case .success(let modes) = now, modes.contains(Self.makoMode) { return done(.success(previous)) }
                run(["makoctl", "mode", "-a", Self.makoMode]) { done($0.map { _ in previous }) }
            }
        case .gnome: run(["gsettings", "set"] + Self.gnomeSchema + ["false"]) { done($0.map { _ in previous }) }
        default: run(onEnter) { done($0.map { _ in previous }) }
        }
    }

    func leave(previous: String, _ done: @escaping (Result<Void, FocusFailure>) -> Void) {
        switch backend {
        case .mako:
            if Self.modes(previous).contains(Self.makoMode) { return done(.success(())) }
            run(["makoctl", "mode", "-r", Self.makoMode]) { done($0.map { _ in () }) }
        case .gnome:
            let value = previous == "false" ? "false" : "true"
            run(["gsettings", "set"] + Self.gnomeSchema + [value]) { done($0.map { _ in () }) }
        default: run(onLeave) { done($0.map { _ in () }) }
        }
    }

    static func modes(_ text: String) -> [String] { text.split(separator: ",").map(String.init) }

    /// Runs `argv` to its end; its output lines are the answer, a failing exit the failure.
    private func run(_ argv: [String], _ done: @escaping (Result<[String], FocusFailure>) -> Void) {
        guard !argv.isEmpty else { return done(.success([])) }
        var lines: [String] = []
        do {
            let child = try Subprocess(
                argv: argv, queue: queue, onLine: { lines.append($0) },
                onExit: { [weak self] pid, status in
                    self?.running.removeAll { $0.pid == pid }
                    if status == 0 {
                        done(.success(lines.map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }))
                    } else {
                        let said = lines.first.map { ": \($0)" } ?? ""
                        done(.failure(FocusFailure("\(argv[0]) ended with \(Subprocess.describe(status))\(said)")))
                    }
                })
            running.append(child)
            child.limit(to: 10, queue: queue) {}
        } catch {
            done(.failure(FocusFailure("could not start \(argv[0]): \(error)")))
        }
    }
}
