// Stand-ins for the desktop's presence interfaces, on private buses (SessionBus.swift): logind
// on the "system" bus — the Manager with PrepareForSleep, GetSessionByPID and GetUser, a user
// object with its Display property, a session object with Lock/Unlock and LockedHint, IdleHint,
// IdleSinceHint(Monotonic) through Properties.GetAll and PropertiesChanged — and
// org.freedesktop.ScreenSaver on the session bus (GetActive, ActiveChanged). The object paths,
// interfaces and signatures are logind's and the screen saver specification's own.

import CSystemd
import DiligenceTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One bus connection owning `name`, served on a thread of its own: method calls to objects
/// under `prefix` go to `handle`, and `perform` runs work (emitting signals) on that thread,
/// waiting until it is sent.
class FakeBusService: @unchecked Sendable {
    private let condition = NSCondition()
    private var pending: [(OpaquePointer) -> Void] = []
    private var stopped = false
    private var finished = false
    private var failure: String?
    private var calls: [String] = []

    init(busAddress: String, name: String, prefix: String) throws {
        let started = DispatchSemaphore(value: 0)
        Thread.detachNewThread { [self] in run(busAddress, name, prefix, started) }
        started.wait()
        if let failure { throw HarnessError("\(name): \(failure)") }
    }

    /// The methods called so far, as `Interface.Member path`.
    var received: [String] {
        condition.lock()
        defer { condition.unlock() }
        return calls
    }

    /// Answers one method call; false: not handled (sd-bus answers UnknownMethod).
    func handle(_ m: OpaquePointer, member: String, interface: String, path: String) -> Bool { false }

    /// Runs `work` with the bus on the service's thread and waits until it ran.
    func perform(_ work: @escaping (OpaquePointer) -> Void) {
        let done = DispatchSemaphore(value: 0)
        condition.lock()
        pending.append { bus in
            work(bus)
            sd_bus_flush(bus)
            done.signal()
        }
        condition.unlock()
        _ = done.wait(timeout: .now() + 5)
    }

    func stop() {
        condition.lock()
        stopped = true
        while !finished { condition.wait() }
        condition.unlock()
    }

    deinit { stop() }

    private func run(_ address: String, _ name: String, _ prefix: String, _ started: DispatchSemaphore) {
        let bus: OpaquePointer
        do {
            bus = try openBusClient(address: address, owning: name)
        } catch {
            failure = "\(error)"
            finished = true
            started.signal()
            return
        }
        // The object at `prefix` itself, and every one below it.
        let handler: sd_bus_message_handler_t = { m, userdata, _ in
            guard let m, let userdata else { return 0 }
            return Unmanaged<FakeBusService>.fromOpaque(userdata).takeUnretainedValue().dispatch(m)
        }
        var rc = sd_bus_add_object(bus, nil, prefix, handler, Unmanaged.passUnretained(self).toOpaque())
        if rc >= 0 { rc = sd_bus_add_fallback(bus, nil, prefix, handler, Unmanaged.passUnretained(self).toOpaque()) }
        if rc < 0 { failure = "adding the objects: \(String(cString: strerror(-rc)))" }
        started.signal()
        defer {
            sd_bus_flush_close_unref(bus)
            condition.lock()
            finished = true
            condition.broadcast()
            condition.unlock()
        }
        guard rc >= 0 else { return }
        while true {
            condition.lock()
            let done = stopped
            let work = pending
            pending = []
            condition.unlock()
            if done { return }
            for item in work { item(bus) }
            while sd_bus_process(bus, nil) > 0 {}
            sd_bus_wait(bus, 20_000)
        }
    }

    private func dispatch(_ m: OpaquePointer) -> Int32 {
        guard sd_bus_message_is_method_call(m, nil, nil) > 0 else { return 0 }
        let member = sd_bus_message_get_member(m).map { String(cString: $0) } ?? ""
        let interface = sd_bus_message_get_interface(m).map { String(cString: $0) } ?? ""
        let path = sd_bus_message_get_path(m).map { String(cString: $0) } ?? ""
        condition.lock()
        calls.append("\(interface).\(member) \(path)")
        condition.unlock()
        return handle(m, member: member, interface: interface, path: path) ? 1 : 0
    }

    // MARK: Messages

    static func code(_ c: Unicode.Scalar) -> CChar { CChar(UInt8(ascii: c)) }

    static func readString(_ m: OpaquePointer) -> String? {
        var p: UnsafePointer<CChar>?
        guard sd_bus_message_read_basic(m, code("s"), &p) > 0, let p else { return nil }
        return String(cString: p)
    }

    static func append(_ m: OpaquePointer, string: String, type: Unicode.Scalar = "s") {
        _ = string.withCString { sd_bus_message_append_basic(m, code(type), $0) }
    }

    static func append(_ m: OpaquePointer, bool: Bool) {
        var value: Int32 = bool ? 1 : 0
        sd_bus_message_append_basic(m, code("b"), &value)
    }

    /// `{sv}` entries of a dictionary being built: booleans and unsigned 64-bit numbers.
    static func appendEntry(_ m: OpaquePointer, _ key: String, bool: Bool? = nil, uint64: UInt64? = nil) {
        sd_bus_message_open_container(m, code("e"), "sv")
        append(m, string: key)
        if let bool {
            sd_bus_message_open_container(m, code("v"), "b")
            append(m, bool: bool)
        } else {
            var value = uint64 ?? 0
            sd_bus_message_open_container(m, code("v"), "t")
            sd_bus_message_append_basic(m, code("t"), &value)
        }
        sd_bus_message_close_container(m)
        sd_bus_message_close_container(m)
    }

    /// Sends the method return `build` fills in.
    static func reply(_ m: OpaquePointer, _ build: (OpaquePointer) -> Void = { _ in }) {
        var reply: OpaquePointer?
        guard sd_bus_message_new_method_return(m, &reply) >= 0, let reply else { return }
        build(reply)
        sd_bus_send(nil, reply, nil)
        sd_bus_message_unref(reply)
    }

    static func replyError(_ m: OpaquePointer, _ name: String, _ text: String) {
        var error = sd_bus_error()
        sd_bus_error_set(&error, name, text)
        sd_bus_reply_method_error(m, &error)
        sd_bus_error_free(&error)
    }

    static func emit(_ bus: OpaquePointer, path: String, interface: String, member: String, _ build: (OpaquePointer) -> Void = { _ in }) {
        var signal: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &signal, path, interface, member) >= 0, let signal else { return }
        build(signal)
        sd_bus_send(bus, signal, nil)
        sd_bus_message_unref(signal)
    }
}

/// logind as diligenced sees it: org.freedesktop.login1 with the Manager, one user and one
/// session. By default the daemon's process belongs to no session (as under `systemd --user`)
/// and the session is found as the user's display session.
final class FakeLogind: FakeBusService, @unchecked Sendable {
    static let manager = "/org/freedesktop/login1"
    static let sessionPath = "/org/freedesktop/login1/session/_32"
    static let sessionInterface = "org.freedesktop.login1.Session"
    static let properties = "org.freedesktop.DBus.Properties"

    private let lock = NSLock()
    private var locked = false
    private var idle = false
    private var idleSince: Double = 0
    /// GetSessionByPID finds the daemon's own session (else: NoSessionForPID).
    let ownSession: Bool

    init(busAddress: String, ownSession: Bool = false) throws {
        self.ownSession = ownSession
        try super.init(busAddress: busAddress, name: "org.freedesktop.login1", prefix: Self.manager)
    }

    static var userPath: String { "/org/freedesktop/login1/user/_\(getuid())" }

    func prepareForSleep(_ sleeping: Bool) throws {
        perform { bus in
            Self.emit(bus, path: Self.manager, interface: "org.freedesktop.login1.Manager", member: "PrepareForSleep") {
                Self.append($0, bool: sleeping)
            }
        }
    }

    /// Locks or unlocks the session: the Lock/Unlock signal, as logind sends it to the screen
    /// locker, then LockedHint as the locker sets it.
    func setLocked(_ value: Bool) {
        lock.withLock { locked = value }
        perform { bus in
            Self.emit(bus, path: Self.sessionPath, interface: Self.sessionInterface, member: value ? "Lock" : "Unlock")
            self.propertiesChanged(bus) { Self.appendEntry($0, "LockedHint", bool: value) }
        }
    }

    /// IdleHint flips, with IdleSinceHint(Monotonic) set to `since` (CLOCK_MONOTONIC seconds).
    func setIdle(_ value: Bool, since: Double) {
        lock.withLock {
            idle = value
            idleSince = since
        }
        perform { bus in
            self.propertiesChanged(bus) { self.appendIdle($0) }
        }
    }

    private func appendIdle(_ m: OpaquePointer) {
        let (idle, since) = lock.withLock { (self.idle, self.idleSince) }
        Self.appendEntry(m, "IdleHint", bool: idle)
        let monotonic = UInt64(since * 1e6)
        let wall = UInt64((Date().timeIntervalSince1970 - (monotonicNow() - since)) * 1e6)
        Self.appendEntry(m, "IdleSinceHint", uint64: wall)
        Self.appendEntry(m, "IdleSinceHintMonotonic", uint64: monotonic)
    }

    /// PropertiesChanged(s interface, a{sv} changed, as invalidated) of the session.
    private func propertiesChanged(_ bus: OpaquePointer, _ entries: (OpaquePointer) -> Void) {
        Self.emit(bus, path: Self.sessionPath, interface: Self.properties, member: "PropertiesChanged") { m in
            Self.append(m, string: Self.sessionInterface)
            sd_bus_message_open_container(m, Self.code("a"), "{sv}")
            entries(m)
            sd_bus_message_close_container(m)
            sd_bus_message_open_container(m, Self.code("a"), "s")
            sd_bus_message_close_container(m)
        }
    }

    override func handle(_ m: OpaquePointer, member: String, interface: String, path: String) -> Bool {
        switch (interface, member, path) {
        case ("org.freedesktop.login1.Manager", "GetSessionByPID", Self.manager):
            if ownSession {
                Self.reply(m) { Self.append($0, string: Self.sessionPath, type: "o") }
            } else {
                Self.replyError(m, "org.freedesktop.login1.NoSessionForPID", "PID does not belong to any known session")
            }
        case ("org.freedesktop.login1.Manager", "GetUser", Self.manager):
            Self.reply(m) { Self.append($0, string: Self.userPath, type: "o") }
        case (Self.properties, "Get", Self.userPath):
            guard Self.readString(m) == "org.freedesktop.login1.User", Self.readString(m) == "Display" else { return false }
            Self.reply(m) { r in
                sd_bus_message_open_container(r, Self.code("v"), "(so)")
                sd_bus_message_open_container(r, Self.code("r"), "so")
                Self.append(r, string: "32")
                Self.append(r, string: Self.sessionPath, type: "o")
                sd_bus_message_close_container(r)
                sd_bus_message_close_container(r)
            }
        case (Self.properties, "GetAll", Self.sessionPath):
            guard Self.readString(m) == Self.sessionInterface else { return false }
            let locked = lock.withLock { self.locked }
            Self.reply(m) { r in
                sd_bus_message_open_container(r, Self.code("a"), "{sv}")
                Self.appendEntry(r, "LockedHint", bool: locked)
                self.appendIdle(r)
                sd_bus_message_close_container(r)
            }
        default:
            return false
        }
        return true
    }
}

/// org.freedesktop.ScreenSaver on the session bus, at /org/freedesktop/ScreenSaver (KDE's and
/// xfce's path; GNOME's gsd-screensaver-proxy provides the same).
final class FakeScreenSaver: FakeBusService, @unchecked Sendable {
    static let service = "org.freedesktop.ScreenSaver"
    static let path = "/org/freedesktop/ScreenSaver"
    private let lock = NSLock()
    private var active = false

    init(busAddress: String) throws {
        try super.init(busAddress: busAddress, name: Self.service, prefix: Self.path)
    }

    /// ActiveChanged(b), as the screen saver comes on or goes off.
    func setActive(_ value: Bool) {
        lock.withLock { active = value }
        perform { bus in
            Self.emit(bus, path: Self.path, interface: Self.service, member: "ActiveChanged") { Self.append($0, bool: value) }
        }
    }

    override func handle(_ m: OpaquePointer, member: String, interface: String, path: String) -> Bool {
        guard interface == Self.service, member == "GetActive" else { return false }
        let active = lock.withLock { self.active }
        Self.reply(m) { Self.append($0, bool: active) }
        return true
    }
}
