// The notification servers the focus guard speaks to, for the focus tests: Plasma as a
// stand-in on a private bus with Plasma's own method and property names (Inhibit, UnInhibit,
// the Inhibited property on org.freedesktop.Notifications), dunst's paused state read back
// with the real dunstctl, mako under a headless sway read back with makoctl, and GNOME's
// show-banners in a real dconf database read back with gsettings.

import CSystemd
import DiligenceTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// org.freedesktop.Notifications as Plasma serves it: GetServerInformation names "Plasma",
/// Inhibit(desktop_entry, reason, hints) answers a cookie, UnInhibit(cookie) releases it, and an
/// inhibition ends with the connection of the program that holds it. Notify calls made while
/// inhibited are counted as held.
final class FakePlasmaNotifications: FakeBusService, @unchecked Sendable {
    private let lock = NSLock()
    /// Cookie → the unique bus name of its holder.
    private var holders: [UInt32: String] = [:]
    private var nextCookie: UInt32 = 1
    private(set) var shown = 0
    private(set) var held = 0
    /// Inhibit calls answered, the first and those after a restart.
    private(set) var inhibitCalls = 0

    init(busAddress: String) throws {
        try super.init(busAddress: busAddress, name: "org.freedesktop.Notifications", prefix: "/org/freedesktop/Notifications")
    }

    /// Whether notifications are held back now: an inhibition whose holder is still on the bus.
    var inhibited: Bool {
        var alive = false
        perform { [self] bus in
            lock.lock()
            let names = Array(holders)
            lock.unlock()
            for (cookie, name) in names {
                var error = sd_bus_error()
                var call: OpaquePointer?
                var reply: OpaquePointer?
                var has: Int32 = 0
                var rc = sd_bus_message_new_method_call(
                    bus, &call, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner")
                if rc >= 0 { rc = name.withCString { sd_bus_message_append_basic(call, Self.code("s"), $0) } }
                if rc >= 0, sd_bus_call(bus, call, 5_000_000, &error, &reply) >= 0 {
                    sd_bus_message_read_basic(reply, Self.code("b"), &has)
                }
                sd_bus_message_unref(call)
                sd_bus_message_unref(reply)
                sd_bus_error_free(&error)
                if has != 0 { alive = true } else { lock.withLock { _ = holders.removeValue(forKey: cookie) } }
            }
        }
        return alive
    }

    /// Whether a Notify call's hints say urgency 2 (critical).
    private static func isCritical(_ m: OpaquePointer) -> Bool {
        // (s app, u replaces, s icon, s summary, s body, as actions, a{sv} hints, i timeout)
        guard sd_bus_message_skip(m, "susssas") >= 0, sd_bus_message_enter_container(m, code("a"), "{sv}") > 0 else { return false }
        while sd_bus_message_enter_container(m, code("e"), "sv") > 0 {
            if readString(m) == "urgency", sd_bus_message_enter_container(m, code("v"), "y") > 0 {
                var level: UInt8 = 0
                sd_bus_message_read_basic(m, code("y"), &level)
                return level == 2
            }
            sd_bus_message_skip(m, "v")
            sd_bus_message_exit_container(m)
        }
        return false
    }

    /// Another program's inhibition (the user's do-not-disturb as far as diligence can see),
    /// held by this service's own connection, which stays on the bus.
    func inhibitForAnotherProgram() {
        perform { [self] bus in
            var unique: UnsafePointer<CChar>?
            guard sd_bus_get_unique_name(bus, &unique) >= 0, let unique else { return }
            lock.withLock {
                holders[nextCookie] = String(cString: unique)
                nextCookie += 1
            }
        }
    }

    /// Plasma crashed and came back: no inhibition survives, and the name changes hands on the
    /// bus (NameOwnerChanged), as when a new plasmashell takes it.
    func restart() {
        perform { [self] bus in
            lock.withLock { holders.removeAll() }
            sd_bus_release_name(bus, "org.freedesktop.Notifications")
            sd_bus_request_name(bus, "org.freedesktop.Notifications", 0)
        }
    }

    override func handle(_ m: OpaquePointer, member: String, interface: String, path: String) -> Bool {
        switch (interface, member) {
        case ("org.freedesktop.Notifications", "GetServerInformation"):
            Self.reply(m) { r in
                for text in ["Plasma", "KDE", "5.27.5", "1.2"] { Self.append(r, string: text) }
            }
        case ("org.freedesktop.Notifications", "Inhibit"):
            let sender = sd_bus_message_get_sender(m).map { String(cString: $0) } ?? ""
            var cookie: UInt32 = 0
            lock.withLock {
                cookie = nextCookie
                nextCookie += 1
                holders[cookie] = sender
                inhibitCalls += 1
            }
            Self.reply(m) { r in sd_bus_message_append_basic(r, Self.code("u"), &cookie) }
        case ("org.freedesktop.Notifications", "UnInhibit"):
            var cookie: UInt32 = 0
            sd_bus_message_read_basic(m, Self.code("u"), &cookie)
            let known = lock.withLock {
                let known = holders.removeValue(forKey: cookie) != nil
                // Plasma shows what came in while inhibited once the last inhibition is lifted.
                if known, holders.isEmpty {
                    shown += held
                    held = 0
                }
                return known
            }
            if known { Self.reply(m) } else { Self.replyError(m, "org.freedesktop.DBus.Error.InvalidArgs", "no inhibition \(cookie)") }
        case ("org.freedesktop.Notifications", "Notify"):
            // Plasma shows critical notifications during do-not-disturb (its default).
            let critical = Self.isCritical(m)
            let isHeld = lock.withLock { !holders.isEmpty } && !critical
            lock.withLock { if isHeld { held += 1 } else { shown += 1 } }
            var id: UInt32 = UInt32(shown + held)
            Self.reply(m) { r in sd_bus_message_append_basic(r, Self.code("u"), &id) }
        case ("org.freedesktop.Notifications", "GetCapabilities"):
            Self.reply(m) { r in
                sd_bus_message_open_container(r, Self.code("a"), "s")
                Self.append(r, string: "body")
                sd_bus_message_close_container(r)
            }
        case ("org.freedesktop.Notifications", "CloseNotification"):
            Self.reply(m)
        default:
            return false
        }
        return true
    }
}

extension Dunst {
    /// `dunstctl is-paused`: true or false; nil when dunst does not answer.
    var isPaused: Bool? {
        let run = try? runProgram(
            ["/usr/bin/dunstctl", "is-paused"], environment: environmentForTools, directory: directoryForTools, timeout: 10)
        return run.flatMap { $0.succeeded ? $0.output == "true" : nil }
    }

    /// `dunstctl set-paused true|false`, as the user would before the work.
    func setPaused(_ paused: Bool) throws {
        let run = try runProgram(
            ["/usr/bin/dunstctl", "set-paused", paused ? "true" : "false"], environment: environmentForTools, directory: directoryForTools,
            timeout: 10)
        guard run.succeeded else { throw HarnessError("dunstctl set-paused: \(run.output)") }
    }

    /// How many notifications wait while dunst is paused.
    var waiting: Int? {
        let run = try? runProgram(
            ["/usr/bin/dunstctl", "count", "waiting"], environment: environmentForTools, directory: directoryForTools, timeout: 10)
        return run.flatMap { $0.succeeded ? Int($0.output) : nil }
    }
}

/// The Wayland side of the focus tests: a session bus any user may join, headless sway, and
/// mako or swaync on it, run as `nobody` (sway refuses to run as root) in a directory of their
/// own that is removed at the end. The daemon under test stays root and reaches them over the
/// bus; `makoctl` and `swaync-client` read their state back.
final class WaylandDesktop {
    enum Server: String { case mako, swaync }

    static let nobody = (uid: 65534, gid: 65534)
    static func unavailable(_ server: Server) -> String? {
        var programs = ["/usr/bin/sway", "/usr/bin/setpriv", "/usr/bin/dbus-daemon"]
        programs +=
            server == .mako
            ? ["/usr/bin/mako", "/usr/bin/makoctl"] : ["/usr/bin/swaync", "/usr/bin/swaync-client", "/usr/libexec/dconf-service"]
        if geteuid() != 0 { return "needs root to run sway as another user" }
        return programs.first { access($0, X_OK) != 0 }.map {
            "\($0) is missing: apt-get install -y sway mako-notifier sway-notification-center dconf-service (make test-deps)"
        }
    }

    let directory: String
    let busAddress: String
    let server: Server
    private var processes: [ChildProcess] = []
    /// Where the notification server is in `processes`.
    private var serverIndex = 0

    init(_ server: Server) throws {
        self.server = server
        var template = Array("/tmp/diligence-focus-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw HarnessError("mkdtemp: \(String(cString: strerror(errno)))") }
        directory = String(cString: made)
        let run = directory + "/run"
        mkdir(run, 0o700)
        mkdir(directory + "/config", 0o755)
        mkdir(directory + "/config/mako", 0o755)
        // The mode the docs give: in do-not-disturb, notifications are kept but not shown, but
        // for critical ones (diligence's reminders during work).
        try "[mode=do-not-disturb]\ninvisible=1\n[mode=do-not-disturb urgency=critical]\ninvisible=0\n".write(
            toFile: directory + "/config/mako/config", atomically: true, encoding: .utf8)
        try "output * bg #000000 solid_color\n".write(toFile: directory + "/sway.conf", atomically: true, encoding: .utf8)
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig><type>session</type><listen>unix:path=\(directory)/bus</listen><auth>EXTERNAL</auth>
            <policy context="default"><allow user="*"/><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>
            <allow own="*"/></policy></busconfig>
            """
        try config.write(toFile: directory + "/bus.conf", atomically: true, encoding: .utf8)
        for path in [directory, run, directory + "/config", directory + "/config/mako"] { chown(path, 65534, 65534) }
        chmod(directory, 0o755)
        let addressFile = directory + "/bus.address"
        processes.append(
            try ChildProcess(
                executable: "/usr/bin/dbus-daemon",
                arguments: ["--config-file=\(directory)/bus.conf", "--nofork", "--nopidfile", "--print-address=1"],
                environment: ["PATH": "/usr/bin:/bin"], stdoutPath: addressFile, stderrPath: directory + "/dbus.log"))
        var address = ""
        try waitUntil("dbus-daemon prints its address", timeout: 10, diagnostics: readTextFile(directory + "/dbus.log")) {
            address = readTextFile(addressFile).trimmingWhitespace()
            return !address.isEmpty
        }
        busAddress = address
        try startAsNobody(
            "sway", ["/usr/bin/sway", "-c", directory + "/sway.conf"],
            ["WLR_BACKENDS": "headless", "WLR_LIBINPUT_NO_DEVICES": "1", "WLR_RENDERER": "pixman"])
        try waitUntil("sway makes its Wayland socket", timeout: 15, diagnostics: readTextFile(directory + "/sway.log")) {
            access(run + "/wayland-1", F_OK) == 0
        }
        if server == .swaync {
            // swaync keeps its do-not-disturb in GSettings: without dconf-service the change is lost.
            try startAsNobody("dconf", ["/usr/libexec/dconf-service"], [:])
        }
        try startServer()
    }

    private func startServer() throws {
        serverIndex = processes.count
        try startAsNobody(server.rawValue, ["/usr/bin/\(server.rawValue)"], ["WAYLAND_DISPLAY": "wayland-1"])
        try waitUntil(
            "\(server.rawValue) answers on the bus", timeout: 15, diagnostics: readTextFile(directory + "/\(server.rawValue).log")
        ) {
            self.serverName == (self.server == .mako ? "mako" : "SwayNotificationCenter")
        }
    }

    /// The notification server killed and started again, as after a crash: mako comes back in
    /// its default mode.
    func restartServer() throws {
        let old = processes.remove(at: serverIndex)
        old.killAndReap()
        try startServer()
    }

    /// The environment of the tools that read the state back (and of the daemon's children).
    var environment: [String: String] {
        ["PATH": "/usr/bin:/bin", "DBUS_SESSION_BUS_ADDRESS": busAddress, "HOME": directory]
    }

    private func startAsNobody(_ name: String, _ argv: [String], _ extra: [String: String]) throws {
        let env =
            [
                "PATH=/usr/bin:/bin", "HOME=\(directory)", "XDG_CONFIG_HOME=\(directory)/config", "XDG_RUNTIME_DIR=\(directory)/run",
                "DBUS_SESSION_BUS_ADDRESS=\(busAddress)", "\(TestRun.variable)=\(TestRun.id)",
            ] + extra.map { "\($0.key)=\($0.value)" }
        processes.append(
            try ChildProcess(
                executable: "/usr/bin/setpriv",
                arguments: ["--reuid=65534", "--regid=65534", "--clear-groups", "--", "/usr/bin/env", "-i"] + env + argv,
                environment: ["PATH": "/usr/bin:/bin"], stdoutPath: directory + "/\(name).log", stderrPath: directory + "/\(name).log"))
    }

    /// A program's output on this desktop's bus (makoctl mode, swaync-client -D).
    func run(_ argv: [String]) -> String? {
        let run = try? runProgram(argv, environment: environment, directory: directory, timeout: 10)
        return run.flatMap { $0.succeeded ? $0.output : nil }
    }

    var serverName: String? {
        run([
            "/usr/bin/busctl", "--user", "call", "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
            "org.freedesktop.Notifications", "GetServerInformation",
        ]).flatMap { $0.split(separator: "\"").dropFirst().first.map(String.init) }
    }

    /// mako's modes, one a line as `makoctl mode` prints them.
    var makoModes: [String] { (run(["/usr/bin/makoctl", "mode"]) ?? "").split(separator: "\n").map(String.init) }
    /// swaync's do-not-disturb as `swaync-client -D` prints it.
    var swayncDND: Bool? { run(["/usr/bin/swaync-client", "-D"]).map { $0.hasPrefix("true") } }

    deinit {
        for process in processes.reversed() {
            process.signal(SIGTERM)
            _ = process.wait(timeout: 5)
            process.killAndReap()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// GNOME's side: a real dconf-service on a private session bus with its database in the test's
/// directory; `gsettings get` reads show-banners back as the user would.
final class GnomeSettings {
    static let unavailable: String? = {
        let programs: [String] = ["/usr/libexec/dconf-service", "/usr/bin/gsettings"]
        return programs.first { access($0, X_OK) != 0 }.map {
            "\($0) is missing: apt-get install -y dconf-service gsettings-desktop-schemas libglib2.0-bin (make test-deps)"
        }
    }()

    let environment: [String: String]
    private let service: ChildProcess
    private let directory: String

    /// `configHome` and `runtimeDirectory` are the daemon's: gsettings there writes through
    /// this service into `configHome`/dconf/user.
    init(directory: String, busAddress: String, configHome: String, runtimeDirectory: String) throws {
        self.directory = directory
        environment = [
            "PATH": "/usr/bin:/bin", "HOME": directory, "XDG_CONFIG_HOME": configHome, "XDG_RUNTIME_DIR": runtimeDirectory,
            "DBUS_SESSION_BUS_ADDRESS": busAddress, "GSETTINGS_BACKEND": "dconf",
        ]
        service = try ChildProcess(
            executable: "/usr/libexec/dconf-service", arguments: [], environment: environment, stdoutPath: directory + "/dconf.log",
            stderrPath: directory + "/dconf.log")
        try waitUntil("dconf-service owns ca.desrt.dconf", timeout: 10, diagnostics: readTextFile(directory + "/dconf.log")) {
            self.showBanners != nil
        }
    }

    /// `gsettings get org.gnome.desktop.notifications show-banners`.
    var showBanners: Bool? {
        let run = try? runProgram(
            ["/usr/bin/gsettings", "get", "org.gnome.desktop.notifications", "show-banners"], environment: environment,
            directory: directory,
            timeout: 10)
        return run.flatMap { $0.succeeded ? $0.output == "true" : nil }
    }

    func setShowBanners(_ value: Bool) throws {
        let run = try runProgram(
            ["/usr/bin/gsettings", "set", "org.gnome.desktop.notifications", "show-banners", value ? "true" : "false"],
            environment: environment,
            directory: directory, timeout: 10)
        guard run.succeeded else { throw HarnessError("gsettings set: \(run.output)") }
    }

    deinit {
        service.signal(SIGTERM)
        _ = service.wait(timeout: 5)
        service.killAndReap()
    }
}
