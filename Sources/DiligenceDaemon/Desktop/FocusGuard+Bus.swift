import CSystemd
import DiligenceCore
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// The guard's session bus, which server runs there, and the restore at the daemon's exit.
extension FocusGuard {
    /// The session bus, opened at the first use and again after it broke.
    func sessionBus() -> BusConnection? {
        if let connection = bus.connection { return connection }
        // Not opened: nil, asked again at the next use; ended: dropped, opened again then.
        let opened = BusConnection.open(.session, description: "diligenced-focus", queue: queue) { [weak self] loss in
            guard case .ended = loss else { return }
            self?.bus.connection?.close()
            self?.bus.connection = nil
        }
        guard let connection = opened else { return nil }
        bus.connection = connection
        watchServer(connection)
        return connection
    }

    /// A notification server that starts while the guard holds (dunst killed and started
    /// again, a crashed Plasma) comes up without do-not-disturb: NameOwnerChanged of
    /// org.freedesktop.Notifications with a new owner makes the guard enter again.
    private func watchServer(_ connection: BusConnection) {
        connection.matchSignal(
            sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "NameOwnerChanged", arg0: BusFocusBackend.notifications
        ) { [weak self] m in
            // (s name, s old_owner, s new_owner); an empty new owner: gone, nothing to set yet.
            var texts: [String] = []
            for _ in 0..<3 {
                var text: UnsafePointer<CChar>?
                guard sd_bus_message_read_basic(m, CChar(UInt8(ascii: "s")), &text) > 0, let text else { return }
                texts.append(String(cString: text))
            }
            guard !texts[2].isEmpty else { return }
            self?.bus.connection?.afterProcessing { self?.serverStarted() }
        }
        connection.pump()
    }

    /// The backend for `settings`: the one set, else the one the running server's name says
    /// (GetServerInformation); nil when none (the commands alone, if any, then run).
    func chooseBackend(_ settings: FocusSettings, _ done: @escaping (FocusSettings.Backend?) -> Void) {
        guard settings.backend == .auto else { return done(settings.backend) }
        guard let connection = sessionBus() else { return done(nil) }
        let rc = connection.call(
            "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications", interface: "org.freedesktop.Notifications",
            member: "GetServerInformation"
        ) { result in
            var name: String?
            if case .success(let reply) = result {
                var text: UnsafePointer<CChar>?
                if sd_bus_message_read_basic(reply, CChar(UInt8(ascii: "s")), &text) > 0, let text { name = String(cString: text) }
            }
            connection.afterProcessing { done(name.flatMap(focusBackend(forServer:))) }
        }
        if rc < 0 { done(nil) }
    }

    /// At the daemon's exit: puts the server back before the process ends, waiting for it
    /// (the queue is not served any more), the bus calls and programs each within 5 s.
    func leaveAtExit(settings: FocusSettings) {
        guard let saved = record else { return }
        if saved.commandsEntered, let argv = settings.onLeave { Self.runAndWait(argv) }
        switch saved.backend {
        case .dunst:
            Self.callAndWait { bus, m in
                sd_bus_message_new_method_call(
                    bus, &m, "org.freedesktop.Notifications", "/org/freedesktop/Notifications", "org.freedesktop.DBus.Properties", "Set")
            } append: { m in
                Self.appendDunstPaused(m, saved.previous == "true")
            }
        case .swaync:
            Self.callAndWait { bus, m in
                sd_bus_message_new_method_call(
                    bus, &m, BusFocusBackend.swaync, BusFocusBackend.swayncPath, BusFocusBackend.swaync, "SetDnd")
            } append: { m in
                var value: Int32 = saved.previous == "true" ? 1 : 0
                return sd_bus_message_append_basic(m, CChar(UInt8(ascii: "b")), &value)
            }
        case .mako:
            if !CommandFocusBackend.modes(saved.previous).contains(CommandFocusBackend.makoMode) {
                Self.runAndWait(["makoctl", "mode", "-r", CommandFocusBackend.makoMode])
            }
        case .gnome:
            Self.runAndWait(["gsettings", "set"] + CommandFocusBackend.gnomeSchema + [saved.previous == "false" ? "false" : "true"])
        case .plasma, .commands, .auto:
            break // Plasma's cookie goes with the connection, which ends with the process.
        }
        record = nil
        persist(nil)
        Log.info(
            "Do not disturb off (\(saved.backend.rawValue)).", fields: [("EVENT", "focus_leave"), ("BACKEND", saved.backend.rawValue)])
    }

    static func appendDunstPaused(_ m: OpaquePointer, _ paused: Bool) -> Int32 {
        var value: Int32 = paused ? 1 : 0
        var rc: Int32 = 0
        for text in [BusFocusBackend.dunstInterface, "paused"] where rc >= 0 {
            rc = text.withCString { sd_bus_message_append_basic(m, CChar(UInt8(ascii: "s")), $0) }
        }
        if rc >= 0 { rc = sd_bus_message_open_container(m, CChar(UInt8(ascii: "v")), "b") }
        if rc >= 0 { rc = sd_bus_message_append_basic(m, CChar(UInt8(ascii: "b")), &value) }
        if rc >= 0 { rc = sd_bus_message_close_container(m) }
        return rc
    }

    /// One blocking call on a connection of its own.
    private static func callAndWait(make: (OpaquePointer, inout OpaquePointer?) -> Int32, append: (OpaquePointer) -> Int32) {
        var bus: OpaquePointer?
        guard sd_bus_open_user(&bus) >= 0, let bus else { return }
        defer { sd_bus_flush_close_unref(bus) }
        var message: OpaquePointer?
        var error = sd_bus_error()
        defer {
            sd_bus_message_unref(message)
            sd_bus_error_free(&error)
        }
        guard make(bus, &message) >= 0, let message, append(message) >= 0 else { return }
        if sd_bus_call(bus, message, 5_000_000, &error, nil) < 0 {
            Log.warning(
                "Could not put do not disturb back: \(error.name.map { String(cString: $0) } ?? "no answer")",
                fields: [("EVENT", "focus_failed")])
        }
    }

    /// Runs `argv` and waits for it, at most 5 s.
    private static func runAndWait(_ argv: [String]) {
        guard
            let pid = try? Sys.spawn(
                argv, environment: nil, input: .null, output: .null, resetSignals: Daemon.handledSignals + [SIGPIPE, SIGCHLD])
        else {
            Log.warning("[focus]: could not start \(argv[0]).", fields: [("EVENT", "focus_failed")])
            return
        }
        for _ in 0..<500 {
            if Sys.reap(pid) != nil { return }
            Sys.sleep(seconds: 0.01)
        }
        Sys.kill(-pid, SIGKILL)
        _ = Sys.reap(pid)
    }
}
