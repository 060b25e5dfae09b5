// A private D-Bus session bus and a notification server of the tests' own, both real: the bus
// is `dbus-daemon --session`, the server owns org.freedesktop.Notifications on it through
// sd-bus, records every Notify call and emits ActionInvoked when a test asks. LogindTests
// uses the same bus as a system bus, with a fake logind of its own.

import CSystemd
import DiligenceTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `dbus-daemon --session --nofork` on a private socket; killed when released.
final class SessionBus {
    let address: String
    private let process: ChildProcess

    init(directory: String) throws {
        let candidates: [String] = ["/usr/bin/dbus-daemon", "/bin/dbus-daemon"]
        guard let tool = candidates.first(where: { access($0, X_OK) == 0 }) else {
            throw HarnessError("dbus-daemon is needed for the notification tests: apt-get install -y dbus (make test-deps)")
        }
        let out = directory + "/dbus.address"
        process = try ChildProcess(
            executable: tool,
            arguments: ["--session", "--nofork", "--nopidfile", "--print-address=1", "--address=unix:path=\(directory)/bus"],
            environment: ["PATH": "/usr/bin:/bin"], stdoutPath: out, stderrPath: directory + "/dbus.stderr")
        let deadline = monotonicNow() + 10
        while true {
            let text = readTextFile(out).trimmingCharacters(in: .whitespacesAndNewlines)
            if !text.isEmpty {
                address = text
                break
            }
            if monotonicNow() > deadline || !process.isRunning {
                throw HarnessError("dbus-daemon printed no address: \(readTextFile(directory + "/dbus.stderr"))")
            }
            sleepFor(0.02)
        }
    }

    deinit { process.killAndReap() }
}

/// A started sd-bus client connection to the bus at `address` that owns the name `name`.
func openBusClient(address: String, owning name: String) throws -> OpaquePointer {
    var bus: OpaquePointer?
    var rc = sd_bus_new(&bus)
    if rc >= 0 { rc = sd_bus_set_address(bus, address) }
    if rc >= 0 { rc = sd_bus_set_bus_client(bus, 1) }
    if rc >= 0 { rc = sd_bus_start(bus) }
    if rc >= 0 { rc = sd_bus_request_name(bus, name, 0) }
    guard rc >= 0, let bus else {
        sd_bus_unref(bus)
        throw HarnessError("sd-bus on \(address) owning \(name): \(String(cString: strerror(-rc)))")
    }
    return bus
}

/// A minimal org.freedesktop.Notifications server on its own thread.
final class NotificationServer: @unchecked Sendable {
    struct Call: CustomStringConvertible {
        var appName: String
        var replacesID: UInt32
        var summary: String
        var body: String
        /// Alternating keys and labels, as on the wire.
        var actions: [String]
        /// The hints whose values are strings (desktop-entry, category).
        var hints: [String: String]
        /// The id this server answered.
        var id: UInt32
        var description: String {
            "Notify(\(appName), replaces \(replacesID), \(summary.debugDescription), \(body.debugDescription), \(actions)) → \(id)"
        }
        var actionKeys: [String] { stride(from: 0, to: actions.count, by: 2).map { actions[$0] } }
    }

    private let condition = NSCondition()
    private var calls: [Call] = []
    private var closes: [UInt32] = []
    private var pending: [(UInt32, String)] = []
    private var stopped = false
    private var failure: String?
    private var nextID: UInt32 = 1

    init(busAddress: String) throws {
        let started = DispatchSemaphore(value: 0)
        Thread.detachNewThread { [self] in run(busAddress, started) }
        started.wait()
        if let failure { throw HarnessError("notification server: \(failure)") }
    }

    var received: [Call] {
        condition.lock()
        defer { condition.unlock() }
        return calls
    }

    /// Waits for the `count`-th Notify call (1-based); nil after `timeout` seconds.
    func waitForCall(_ count: Int, timeout: Double) -> Call? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while calls.count < count {
            if !condition.wait(until: deadline) { break }
        }
        return calls.count >= count ? calls[count - 1] : nil
    }

    /// The ids CloseNotification was called with, in order.
    var closed: [UInt32] {
        condition.lock()
        defer { condition.unlock() }
        return closes
    }

    /// Waits until CloseNotification(id) came; false after `timeout` seconds.
    func waitForClose(of id: UInt32, timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !closes.contains(id) {
            if !condition.wait(until: deadline) { break }
        }
        return closes.contains(id)
    }

    /// Emits ActionInvoked(id, key), as a server does when the user clicks a button.
    func invoke(_ key: String, on id: UInt32) {
        condition.lock()
        pending.append((id, key))
        condition.unlock()
    }

    func stop() {
        condition.lock()
        stopped = true
        condition.unlock()
    }

    deinit { stop() }

    // MARK: The server thread

    private func run(_ address: String, _ started: DispatchSemaphore) {
        let bus: OpaquePointer
        do {
            bus = try openBusClient(address: address, owning: "org.freedesktop.Notifications")
        } catch {
            failure = "\(error)"
            started.signal()
            return
        }
        let rc = sd_bus_add_object(
            bus, nil, "/org/freedesktop/Notifications",
            { m, userdata, _ in
                guard let m, let userdata else { return 0 }
                return Unmanaged<NotificationServer>.fromOpaque(userdata).takeUnretainedValue().handle(m)
            }, Unmanaged.passUnretained(self).toOpaque())
        guard rc >= 0 else {
            sd_bus_flush_close_unref(bus)
            failure = "sd-bus on \(address): \(String(cString: strerror(-rc)))"
            started.signal()
            return
        }
        started.signal()
        defer { sd_bus_flush_close_unref(bus) }
        while true {
            condition.lock()
            let done = stopped
            let emits = pending
            pending = []
            condition.unlock()
            if done { return }
            for (id, key) in emits { emitAction(bus, id: id, key: key) }
            while sd_bus_process(bus, nil) > 0 {}
            sd_bus_wait(bus, 20_000)
        }
    }

    private static func code(_ c: Unicode.Scalar) -> CChar { CChar(UInt8(ascii: c)) }

    private static func readString(_ m: OpaquePointer) -> String? {
        var p: UnsafePointer<CChar>?
        guard sd_bus_message_read_basic(m, code("s"), &p) > 0, let p else { return nil }
        return String(cString: p)
    }

    private func handle(_ m: OpaquePointer) -> Int32 {
        if sd_bus_message_is_method_call(m, "org.freedesktop.Notifications", "CloseNotification") > 0 {
            return handleClose(m)
        }
        guard sd_bus_message_is_method_call(m, "org.freedesktop.Notifications", "Notify") > 0 else { return 0 }
        let app = Self.readString(m) ?? ""
        var replaces: UInt32 = 0
        sd_bus_message_read_basic(m, Self.code("u"), &replaces)
        _ = Self.readString(m) // icon
        let summary = Self.readString(m) ?? ""
        let body = Self.readString(m) ?? ""
        var actions: [String] = []
        if sd_bus_message_enter_container(m, Self.code("a"), "s") > 0 {
            while let s = Self.readString(m) { actions.append(s) }
            sd_bus_message_exit_container(m)
        }
        var hints: [String: String] = [:]
        if sd_bus_message_enter_container(m, Self.code("a"), "{sv}") > 0 {
            while sd_bus_message_enter_container(m, Self.code("e"), "sv") > 0 {
                let key = Self.readString(m) ?? ""
                if sd_bus_message_enter_container(m, Self.code("v"), "s") > 0 {
                    hints[key] = Self.readString(m)
                    sd_bus_message_exit_container(m)
                } else {
                    sd_bus_message_skip(m, "v")
                }
                sd_bus_message_exit_container(m)
            }
            sd_bus_message_exit_container(m)
        }
        condition.lock()
        let id = replaces != 0 ? replaces : nextID
        if replaces == 0 { nextID += 1 }
        calls.append(Call(appName: app, replacesID: replaces, summary: summary, body: body, actions: actions, hints: hints, id: id))
        condition.broadcast()
        condition.unlock()
        var reply: OpaquePointer?
        guard sd_bus_message_new_method_return(m, &reply) >= 0, let reply else { return -ENOMEM }
        defer { sd_bus_message_unref(reply) }
        var answer = id
        sd_bus_message_append_basic(reply, Self.code("u"), &answer)
        return sd_bus_send(nil, reply, nil)
    }

    /// CloseNotification(u id): recorded, answered, and NotificationClosed(id, 3) emitted.
    private func handleClose(_ m: OpaquePointer) -> Int32 {
        var id: UInt32 = 0
        sd_bus_message_read_basic(m, Self.code("u"), &id)
        condition.lock()
        closes.append(id)
        condition.broadcast()
        condition.unlock()
        let bus = sd_bus_message_get_bus(m)
        var signal: OpaquePointer?
        if sd_bus_message_new_signal(bus, &signal, "/org/freedesktop/Notifications", "org.freedesktop.Notifications", "NotificationClosed")
            >= 0,
            let signal
        {
            var number = id
            var reason: UInt32 = 3
            sd_bus_message_append_basic(signal, Self.code("u"), &number)
            sd_bus_message_append_basic(signal, Self.code("u"), &reason)
            sd_bus_send(bus, signal, nil)
            sd_bus_message_unref(signal)
        }
        var reply: OpaquePointer?
        guard sd_bus_message_new_method_return(m, &reply) >= 0, let reply else { return -ENOMEM }
        defer { sd_bus_message_unref(reply) }
        return sd_bus_send(nil, reply, nil)
    }

    private func emitAction(_ bus: OpaquePointer, id: UInt32, key: String) {
        var signal: OpaquePointer?
        guard
            sd_bus_message_new_signal(bus, &signal, "/org/freedesktop/Notifications", "org.freedesktop.Notifications", "ActionInvoked")
                >= 0,
            let signal
        else { return }
        defer { sd_bus_message_unref(signal) }
        var number = id
        sd_bus_message_append_basic(signal, Self.code("u"), &number)
        _ = key.withCString { sd_bus_message_append_basic(signal, Self.code("s"), $0) }
        sd_bus_send(bus, signal, nil)
    }
}

/// dunst, the notification server many tiling-desktop users run, on `busAddress`, drawing on a
/// display of its own (Xvfb; no socket in /tmp: it listens on the abstract socket only).
/// `displayed` asks it through `dunstctl` how many notifications it shows.
final class Dunst {
    static let unavailable: String? = {
        let programs: [String] = ["/usr/bin/dunst", "/usr/bin/dunstctl", "/usr/bin/Xvfb"]
        return programs.first { access($0, X_OK) != 0 }.map { "\($0) is missing: apt-get install -y dunst xvfb (make test-deps)" }
    }()

    private let xvfb: ChildProcess
    private var dunst: ChildProcess
    private var starts = 0
    private let environment: [String: String]
    private let directory: String
    var environmentForTools: [String: String] { environment }
    var directoryForTools: String { directory }

    init(directory: String, busAddress: String) throws {
        self.directory = directory
        let displayFile = directory + "/xvfb.display"
        xvfb = try ChildProcess(
            executable: "/usr/bin/Xvfb",
            arguments: ["-displayfd", "1", "-nolisten", "tcp", "-nolisten", "unix", "-screen", "0", "640x480x24"],
            environment: ["PATH": "/usr/bin:/bin"], stdoutPath: displayFile, stderrPath: directory + "/xvfb.stderr")
        var display = ""
        try waitUntil("Xvfb names its display", timeout: 10, diagnostics: readTextFile(directory + "/xvfb.stderr")) {
            display = readTextFile(displayFile).trimmingWhitespace()
            return !display.isEmpty
        }
        environment = [
            "PATH": "/usr/bin:/bin", "HOME": directory, "XDG_CONFIG_HOME": directory + "/config",
            "DISPLAY": ":" + display, "DBUS_SESSION_BUS_ADDRESS": busAddress,
        ]
        dunst = try Self.launch(environment, directory + "/dunst.log")
        try waitUntil("dunst answers on the bus", timeout: 10, diagnostics: readTextFile(directory + "/dunst.log")) {
            displayed != nil
        }
    }

    private static func launch(_ environment: [String: String], _ log: String) throws -> ChildProcess {
        try ChildProcess(executable: "/usr/bin/dunst", arguments: [], environment: environment, stdoutPath: log, stderrPath: log)
    }

    /// dunst killed and started again, as after a crash or a config reload by restart: the new
    /// one is not paused.
    func restart() throws {
        dunst.killAndReap()
        try waitUntil("dunst gone from the bus", timeout: 10) { displayed == nil }
        starts += 1
        let log = directory + "/dunst.\(starts).log"
        dunst = try Self.launch(environment, log)
        try waitUntil("dunst answers on the bus again", timeout: 10, diagnostics: readTextFile(log)) { displayed != nil }
    }

    /// How many notifications dunst shows now; nil when it does not answer.
    var displayed: Int? {
        let run = try? runProgram(["/usr/bin/dunstctl", "count", "displayed"], environment: environment, directory: directory, timeout: 10)
        return run.flatMap { $0.succeeded ? Int($0.output) : nil }
    }

    deinit {
        dunst.killAndReap()
        // SIGTERM first: Xvfb removes its lock file in /tmp when it ends by a signal it handles.
        xvfb.signal(SIGTERM)
        _ = xvfb.wait(timeout: 5)
        xvfb.killAndReap()
    }
}
