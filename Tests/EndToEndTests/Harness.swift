// The end-to-end harness: written once, used by every test in this target.
//
// It launches the real `diligenced` in a fresh temporary directory (its own XDG_RUNTIME_DIR,
// XDG_DATA_HOME, XDG_CONFIG_HOME), listens for its sd_notify messages on a SOCK_DGRAM socket,
// talks to it through DiligenceProtocol's `ControlConnection`, and runs the real `diligencectl`.
// Every wait has a timeout, so a broken daemon makes the tests fail fast instead of hanging.
//
// Environment:
//   DILIGENCE_BIN_DIR   where `diligenced` and `diligencectl` are (default: <package>/.build/debug)
//   DILIGENCE_E2E_KEEP  set to 1 to keep each test's temporary directory (its path goes to stderr)

import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// MARK: - Errors and small helpers

/// A harness failure with everything needed to understand it (the daemon's stderr included).
struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Sleeps `seconds` (tests sleep only where the daemon's real clock must move on).
func sleepFor(_ seconds: Double) {
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}

func readTextFile(_ path: String) -> String {
    guard let data = FileManager.default.contents(atPath: path) else { return "" }
    return String(decoding: data, as: UTF8.self)
}

/// The last `count` characters of `text`, marked when cut.
func tail(_ text: String, _ count: Int = 4000) -> String {
    text.count <= count ? text : "…" + String(text.suffix(count))
}

extension JSON {
    /// `{"ok": true, ...}`
    var isOK: Bool { self["ok"]?.boolValue == true }
    /// The `error.code` of a failed response.
    var errorCode: String? { self["error"]?["code"]?.stringValue }
    var result: JSON? { self["result"] }
}

// MARK: - Binaries

/// Where the programs under test are: `$DILIGENCE_BIN_DIR`, else `<package root>/.build/debug`.
enum Binaries {
    static var directory: String {
        if let dir = ProcessInfo.processInfo.environment["DILIGENCE_BIN_DIR"], !dir.isEmpty { return dir }
        return packageRoot + "/.build/debug"
    }

    static var packageRoot: String { PackageFiles.root }

    static func path(_ name: String) throws -> String {
        let path = directory + "/" + name
        guard access(path, X_OK) == 0 else {
            throw HarnessError(
                "\(name) not found or not executable at \(path): run `swift build` first "
                    + "(or set DILIGENCE_BIN_DIR to the directory holding diligenced and diligencectl)")
        }
        // `swift test --skip-build` (or a test run from an editor) after an edit would test the
        // last build's daemon: a build of this tree older than its sources is refused.
        if path.hasPrefix(packageRoot + "/"), let source = unbuiltSource(newerThan: modificationTime(path)) {
            throw HarnessError(
                "\(path) is older than \(source) (edited after the last build): run `swift build` "
                    + "(or `make test`) first; the end-to-end tests start the built programs as they are")
        }
        return path
    }

    /// A Swift source under Sources/ changed after `time` that no build has looked at since.
    /// swift-driver skips a file whose content did not change (a `touch`, a stash and its pop)
    /// and then relinks nothing; it still writes its module's build record
    /// (`<Module>.build/primary.priors`), which therefore counts as a build after the change.
    static func unbuiltSource(newerThan time: Int) -> String? {
        let sources = packageRoot + "/Sources"
        guard let walker = FileManager.default.enumerator(atPath: sources) else { return nil }
        while let relative = walker.nextObject() as? String {
            guard relative.hasSuffix(".swift") || relative.hasSuffix("/VERSION") else { continue }
            let changed = modificationTime(sources + "/" + relative)
            guard changed > time else { continue }
            let module = relative.prefix { $0 != "/" }
            if modificationTime(directory + "/\(module).build/primary.priors") < changed { return "Sources/" + relative }
        }
        return nil
    }

    /// The file's mtime in nanoseconds (following links), zero when it cannot be read.
    static func modificationTime(_ path: String) -> Int {
        var info = stat()
        guard stat(path, &info) == 0 else { return 0 }
        return info.st_mtim.tv_sec * 1_000_000_000 + info.st_mtim.tv_nsec
    }

    static var daemon: String { get throws { try path("diligenced") } }
    static var client: String { get throws { try path("diligencectl") } }
}

// MARK: - Child processes

/// How a child process ended.
enum ExitStatus: Equatable, CustomStringConvertible {
    case exited(Int32)
    case signaled(Int32)

    init(waitStatus s: Int32) {
        if s & 0x7f == 0 { self = .exited((s >> 8) & 0xff) } else { self = .signaled(s & 0x7f) }
    }

    var exitCode: Int32? { if case .exited(let code) = self { code } else { nil } }

    var description: String {
        switch self {
        case .exited(let code): "exit status \(code)"
        case .signaled(let signal): "killed by signal \(signal)"
        }
    }
}

/// A process started with posix_spawn: stdin from /dev/null, stdout and stderr to files,
/// signal dispositions and mask reset to the defaults (the test runner's must not leak in).
///
/// The harness owns it and everything it starts: it leads a process group of its own, which
/// `killAndReap` (and deinit, and the test process's exit) kills whole — a `sh -c` pipeline, the
/// daemon behind `runuser`. The leader is not reaped before that (`poll` looks with WNOWAIT),
/// so the group id cannot be reused by an unrelated process meanwhile. Its environment carries
/// `DILIGENCE_TEST_RUN`, which finds whatever left the group (a daemonized tmux server).
final class ChildProcess {
    /// The pid, which is also the process group id.
    let pid: pid_t
    let executable: String
    private(set) var status: ExitStatus?
    private var reaped = false

    init(
        executable: String, arguments: [String], environment: [String: String],
        stdoutPath: String, stderrPath: String
    ) throws {
        self.executable = executable
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))

        var environment = environment
        environment[TestRun.variable] = TestRun.id
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard rc == 0 else {
            throw HarnessError("posix_spawn \(executable) failed: \(String(cString: strerror(rc)))")
        }
        self.pid = pid
        ProcessGroups.shared.add(pid)
    }

    /// The exit status if the process has ended, else nil. Leaves it unreaped (see above).
    @discardableResult
    func poll() -> ExitStatus? {
        if let status { return status }
        var info = siginfo_t()
        guard waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0, info._sifields._sigchld.si_pid == pid else {
            return nil
        }
        let value = info._sifields._sigchld.si_status
        status = info.si_code == Int32(CLD_EXITED) ? .exited(value) : .signaled(value)
        return status
    }

    var isRunning: Bool { poll() == nil }

    /// Waits for the process to end; nil when it is still running after `timeout` seconds.
    func wait(timeout: Double) -> ExitStatus? {
        let deadline = monotonicNow() + timeout
        while true {
            if let status = poll() { return status }
            if monotonicNow() >= deadline { return nil }
            sleepFor(0.01)
        }
    }

    func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// SIGKILL to the whole group, then reap the leader (cleanup; never leaves a process behind,
    /// and does nothing the second time).
    func killAndReap() {
        guard !reaped else { return }
        kill(-pid, SIGKILL)
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        if status == nil { status = ExitStatus(waitStatus: raw) }
        reaped = true
        ProcessGroups.shared.remove(pid)
    }

    deinit { killAndReap() }
}

/// The process groups of every ChildProcess not yet reaped. When the test process exits (all
/// tests done, or a test crashed it) they are killed, and so is any process of the run that left
/// its group: no test leaves a process behind, failing or not.
final class ProcessGroups: @unchecked Sendable {
    static let shared = ProcessGroups()
    private let lock = NSLock()
    private var groups: Set<pid_t> = []

    private init() {
        atexit {
            for group in ProcessGroups.shared.snapshot { kill(-group, SIGKILL) }
            for process in TestRun.processes() { kill(process.pid, SIGKILL) }
        }
    }

    var snapshot: Set<pid_t> { lock.withLock { groups } }
    func add(_ group: pid_t) { lock.withLock { _ = groups.insert(group) } }
    func remove(_ group: pid_t) { lock.withLock { _ = groups.remove(group) } }
}

/// What a run of `diligencectl` printed and how it exited.
struct CtlResult: CustomStringConvertible {
    var arguments: [String]
    var stdout: String
    var stderr: String
    var status: ExitStatus

    /// The exit code (-1 when killed by a signal).
    var exitCode: Int32 { status.exitCode ?? -1 }

    /// stdout parsed as one JSON value (for `--json` output).
    func json() throws -> JSON {
        do {
            return try JSON.parse(stdout.trimmingWhitespace())
        } catch {
            throw HarnessError("diligencectl \(arguments.joined(separator: " ")) printed no JSON (\(error.message)): \(self)")
        }
    }

    var description: String {
        "`diligencectl \(arguments.joined(separator: " "))` → \(status)\n--- stdout ---\n\(tail(stdout, 2000))\n--- stderr ---\n\(tail(stderr, 2000))"
    }
}

// MARK: - sd_notify listener

/// A fake systemd notify socket: a SOCK_DGRAM Unix socket whose path goes to the daemon as
/// `NOTIFY_SOCKET`. A background thread stores every datagram with its CLOCK_MONOTONIC arrival time.
final class NotifyListener: @unchecked Sendable {
    struct Message: CustomStringConvertible {
        /// Index in arrival order.
        var index: Int
        /// `KEY=value` assignments of the datagram (one datagram may carry several).
        var lines: [String]
        /// Arrival time on CLOCK_MONOTONIC.
        var time: Double
        var description: String { lines.joined(separator: "\\n") }
    }

    let path: String
    private let fd: Int32
    private let log = ArrivalLog<Message>()

    init(path: String) throws {
        self.path = path
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("notify socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count <= SocketPath.maxLength else {
            close(fd)
            throw HarnessError("notify socket path too long for sun_path: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw HarnessError("binding the notify socket \(path): \(reason)")
        }
        // A receive timeout lets the reader notice `stop()`.
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        self.fd = fd
        Thread.detachNewThread { [self] in readLoop() }
    }

    private func readLoop() {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while log.ended == nil {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { continue } // timeout, EINTR or an empty datagram
            let time = monotonicNow()
            let text = String(decoding: buffer[..<n], as: UTF8.self)
            let lines = text.split(separator: "\n").map(String.init)
            log.append { Message(index: $0, lines: lines, time: time) }
        }
        close(fd)
    }

    /// Stops the reader thread; it closes the socket within 100 ms.
    func stop() {
        log.end("stopped")
    }

    /// Every message so far, in arrival order.
    var messages: [Message] { log.items }

    /// How many messages arrived so far: a cursor for `waitFor(after:)`.
    var count: Int { messages.count }

    /// The first assignment line in a message with index ≥ `after` that satisfies `matches`,
    /// with its message's arrival time; nil after `timeout` seconds.
    func waitFor(after: Int = 0, timeout: Double, where matches: (String) -> Bool) -> (line: String, message: Message)? {
        guard let found = log.first(after: after, timeout: timeout, where: { $0.lines.contains(where: matches) }),
            let line = found.item.lines.first(where: matches)
        else { return nil }
        return (line, found.item)
    }

    /// Waits for a line beginning with `prefix` (e.g. `READY=1`, `STOPPING=1`).
    func waitFor(prefix: String, after: Int = 0, timeout: Double) -> (line: String, message: Message)? {
        waitFor(after: after, timeout: timeout) { $0.hasPrefix(prefix) }
    }

    /// Waits for a `STATUS=` line containing every one of `words` (case-insensitive).
    func waitForStatus(containing words: [String], after: Int = 0, timeout: Double) -> (line: String, message: Message)? {
        waitFor(after: after, timeout: timeout) { line in
            line.hasPrefix("STATUS=") && words.allSatisfy { line.lowercased().contains($0.lowercased()) }
        }
    }

    /// The `STATUS=` lines seen so far, for failure messages.
    var statusLines: [String] { messages.flatMap { $0.lines.filter { $0.hasPrefix("STATUS=") } } }

    deinit { stop() }
}

final class DaemonUnderTest: ControlledDaemon {
    let root: String
    let runtimeDir: String
    let dataHome: String
    let configHome: String
    let home: String
    /// `$XDG_RUNTIME_DIR/diligence/diligenced.sock` (the daemon is started without --socket).
    let socketPath: String
    /// `$XDG_DATA_HOME/diligence/diligence.sqlite3`
    let databasePath: String
    let notify: NotifyListener
    /// The running (or last) daemon process.
    private(set) var process: ChildProcess?
    /// Stderr files of every launch, in order.
    private(set) var stderrPaths: [String] = []
    private var launches = 0
    private var ctlRuns = 0
    private var sharedConnection: ControlConnection?
    let extraArguments: [String]
    /// Variables added to both programs' environment (DBUS_SESSION_BUS_ADDRESS, ...).
    var extraEnvironment: [String: String] = [:]
    /// Variables left out of both programs' environment (TZ, for a daemon on the system's zone).
    var removedEnvironment: Set<String> = []
    /// Variables for the daemon alone (LD_PRELOAD of a simulated clock).
    var daemonEnvironment: [String: String] = [:]
    /// A program the daemon is started through, its arguments before the daemon's path
    /// (`unshare ... sh -c '...; exec "$0" "$@"'`): it must exec the daemon, keeping its pid.
    var launcher: [String] = []
    /// The user the daemon runs as when not root (a test user's own systemd --user): the
    /// client and sqlite3 run as that user too, and files the test writes are handed to it.
    var owner: (uid: uid_t, gid: gid_t)?

    /// `command` as `owner` (setpriv, no other groups), or as it is.
    func asOwner(_ command: [String]) -> [String] {
        guard let owner else { return command }
        return ["/usr/bin/setpriv", "--reuid=\(owner.uid)", "--regid=\(owner.gid)", "--clear-groups", "--"] + command
    }

    /// Gives `path` (and what is under it) to `owner`, as the user's own files would be.
    func handOver(_ path: String) {
        guard let owner else { return }
        _ = try? runProgram(["/bin/chown", "-R", "\(owner.uid):\(owner.gid)", path], environment: [:], directory: root)
    }

    /// Makes the directories under `base` and (unless `launch` is false) starts the daemon and
    /// waits for READY=1. A systemd service with PrivateTmp= cannot see /tmp: those tests pass
    /// another `base`.
    init(launch: Bool = true, arguments: [String] = [], base: String = TestRun.temporaryBase, prefix: String = "dlg-e2e") throws {
        root = TestRun.makeDirectory(in: base, prefix: prefix)
        runtimeDir = root + "/run"
        dataHome = root + "/data"
        configHome = root + "/config"
        home = root + "/home"
        for dir in [runtimeDir, dataHome, configHome, home] { mkdir(dir, 0o700) }
        socketPath = SocketPath.resolve(environment: ["XDG_RUNTIME_DIR": runtimeDir])
        databasePath = dataHome + "/diligence/diligence.sqlite3"
        extraArguments = arguments
        notify = try NotifyListener(path: root + "/notify.sock")
        if launch { try start() }
    }

    /// The environment both programs get: nothing from the developer's session leaks in.
    var environment: [String: String] {
        [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin",
            "HOME": home,
            "XDG_RUNTIME_DIR": runtimeDir,
            "XDG_DATA_HOME": dataHome,
            "XDG_CONFIG_HOME": configHome,
            "XDG_STATE_HOME": root + "/state",
            "XDG_CACHE_HOME": root + "/cache",
            "TZ": "UTC",
            "LANG": "C.UTF-8",
        ].merging(extraEnvironment) { $1 }.filter { !removedEnvironment.contains($0.key) }
    }

    // MARK: Lifecycle

    /// Starts diligenced and waits (10 s at most) for READY=1; fails at once if it exits first.
    func start(readyTimeout: Double = 10) throws {
        if let process, process.isRunning {
            throw HarnessError("start(): diligenced (pid \(process.pid)) is still running")
        }
        let cursor = notify.count
        let child = try spawnDaemon()
        process = child
        let deadline = monotonicNow() + readyTimeout
        while true {
            if notify.waitFor(prefix: "READY=1", after: cursor, timeout: 0.05) != nil { return }
            if let status = child.poll() {
                throw HarnessError("diligenced exited (\(status)) before sending READY=1\n\(diagnostics)")
            }
            if monotonicNow() >= deadline {
                child.killAndReap()
                throw HarnessError("diligenced sent no READY=1 within \(readyTimeout) s (killed it)\n\(diagnostics)")
            }
        }
    }

    /// Spawns one more `diligenced` with this test's environment and notify socket, without
    /// waiting for anything (the second-daemon test).
    func spawnDaemon(arguments: [String]? = nil) throws -> ChildProcess {
        launches += 1
        let stderrPath = root + "/diligenced-\(launches).stderr"
        stderrPaths.append(stderrPath)
        var env = environment.merging(daemonEnvironment) { $1 }
        env["NOTIFY_SOCKET"] = notify.path
        let daemon = try Binaries.daemon
        return try ChildProcess(
            executable: launcher.first ?? daemon,
            arguments: launcher.dropFirst() + (launcher.isEmpty ? [] : [daemon]) + (arguments ?? extraArguments),
            environment: env, stdoutPath: root + "/diligenced-\(launches).stdout", stderrPath: stderrPath)
    }

    /// Sends `signal` to the running daemon.
    func signal(_ signal: Int32) {
        process?.signal(signal)
    }

    /// Waits for the daemon to exit (10 s at most).
    func waitExit(timeout: Double = 10) throws -> ExitStatus {
        guard let process else { throw HarnessError("waitExit(): no daemon was started") }
        guard let status = process.wait(timeout: timeout) else {
            throw HarnessError("diligenced did not exit within \(timeout) s\n\(diagnostics)")
        }
        return status
    }

    /// Stops the daemon (SIGTERM, then SIGKILL after 10 s) and starts it again on the same dirs,
    /// running `whileStopped` in between (files changed while no daemon runs).
    func restart(whileStopped: () throws -> Void = {}) throws {
        dropConnection()
        if let process, process.isRunning {
            process.signal(SIGTERM)
            if process.wait(timeout: 10) == nil { process.killAndReap() }
        }
        try whileStopped()
        try start()
    }

    /// SIGKILL: leaves the socket file behind, as a crash would.
    func kill() {
        dropConnection()
        process?.killAndReap()
    }

    /// Stderr of every launch so far.
    var stderr: String {
        stderrPaths.enumerated().map { "[launch \($0.offset + 1)]\n" + readTextFile($0.element) }.joined(separator: "\n")
    }

    /// What a failing test prints: the daemon's stderr and the notify messages it sent.
    var diagnostics: String {
        "--- diligenced stderr (\(root)) ---\n\(tail(stderr))\n--- sd_notify messages ---\n"
            + notify.messages.map { String(format: "%.3f ", $0.time) + $0.description }.joined(separator: "\n")
    }

    // MARK: Protocol

    private func dropConnection() { sharedConnection = nil }

    private func connection() throws -> ControlConnection {
        if let sharedConnection { return sharedConnection }
        let c = try connect()
        sharedConnection = c
        return c
    }

    /// Sends one raw line (a newline is added) on this test's shared connection and returns the
    /// response line parsed, within `timeout` seconds (`request(_:)`: 5 s).
    func request(_ line: String, timeout: Double) throws -> JSON {
        try Self.roundTrip(try connection(), line, timeout: timeout, diagnostics: { self.diagnostics })
    }

    func request(_ line: String) throws -> JSON { try request(line, timeout: 5) }

    /// Sends `request` on the shared connection, within `timeout` seconds.
    func send(_ request: Request, timeout: Double) throws -> JSON {
        try self.request(request.body.serialized, timeout: timeout)
    }

    /// One line out and one line back on `connection`, within `timeout` seconds.
    static func roundTrip(
        _ connection: ControlConnection, _ line: String, timeout: Double = 5,
        diagnostics: () -> String = { "" }
    ) throws -> JSON {
        let box = UncheckedSendable(connection)
        let text = line.hasSuffix("\n") ? line : line + "\n"
        do {
            return try withTimeout(timeout, "the answer to \(line)") {
                try box.value.send(line: text)
            }
        } catch {
            throw HarnessError("\(error)\n\(diagnostics())")
        }
    }

    // MARK: diligencectl

    /// Runs the real `diligencectl --socket <socketPath> ARGS...` (stdin is /dev/null, so not a
    /// terminal) and returns what it printed. 10 s at most.
    func ctl(_ arguments: String...) throws -> CtlResult {
        try ctl(arguments: arguments)
    }

    /// `socketFlag: false` leaves the socket to diligencectl's own resolution ($XDG_RUNTIME_DIR).
    /// `environment`: the client's own, in place of the daemon's (a shell set up differently).
    func ctl(arguments: [String], socketFlag: Bool = true, timeout: Double = 10, environment: [String: String]? = nil) throws -> CtlResult {
        ctlRuns += 1
        let out = root + "/ctl-\(ctlRuns).stdout"
        let err = root + "/ctl-\(ctlRuns).stderr"
        let full = (socketFlag ? ["--socket", socketPath] : []) + arguments
        let command = asOwner([try Binaries.client] + full)
        let child = try ChildProcess(
            executable: command[0], arguments: Array(command.dropFirst()), environment: environment ?? self.environment,
            stdoutPath: out, stderrPath: err)
        guard let status = child.wait(timeout: timeout) else {
            child.killAndReap()
            throw HarnessError("diligencectl \(full.joined(separator: " ")) did not finish within \(timeout) s\n\(diagnostics)")
        }
        return CtlResult(arguments: full, stdout: readTextFile(out), stderr: readTextFile(err), status: status)
    }

    /// `diligencectl status --json`, parsed; throws unless it exits 0.
    func ctlStatus() throws -> JSON {
        let r = try ctl("status", "--json")
        guard r.exitCode == 0 else { throw HarnessError("status --json failed: \(r)\n\(diagnostics)") }
        return try r.json()
    }

    // MARK: Database

    /// The `sqlite3` command-line tool (CI needs the `sqlite3` package).
    func sqliteTool() throws -> String {
        let paths = (environment["PATH"] ?? "").split(separator: ":").map { "\($0)/sqlite3" }
        guard let tool = paths.first(where: { access($0, X_OK) == 0 }) else {
            throw HarnessError("the sqlite3 command-line tool is needed to read the database: apt-get install -y sqlite3")
        }
        return tool
    }

    /// Another process holding the database's write lock for `seconds` (`sqlite3` in `BEGIN
    /// IMMEDIATE`), as a user's shell left in a transaction would; returns once it holds it.
    /// The test ends it (killAndReap, or its deinit) if it must not run its course.
    func holdWriteLock(for seconds: Double) throws -> ChildProcess {
        ctlRuns += 1
        let holder = try ChildProcess(
            executable: try sqliteTool(), arguments: [databasePath, "BEGIN IMMEDIATE;", ".shell sleep \(seconds)", "COMMIT;"],
            environment: environment, stdoutPath: root + "/sqlite-\(ctlRuns).stdout", stderrPath: root + "/sqlite-\(ctlRuns).stderr")
        sleepFor(0.3)
        return holder
    }

    /// Rows of `sql` run by the `sqlite3` command-line tool on the database file `path`.
    func sqliteRun(_ path: String, _ sql: String) throws -> [[String]] {
        ctlRuns += 1
        let out = root + "/sqlite-\(ctlRuns).stdout"
        let err = root + "/sqlite-\(ctlRuns).stderr"
        let command = asOwner([try sqliteTool(), "-batch", "-noheader", "-separator", "\t", "-cmd", ".timeout 3000", path, sql])
        let child = try ChildProcess(
            executable: command[0], arguments: Array(command.dropFirst()), environment: environment, stdoutPath: out, stderrPath: err)
        guard let status = child.wait(timeout: 10), status == .exited(0) else {
            child.killAndReap()
            throw HarnessError("sqlite3 \(path) \"\(sql)\" failed: \(readTextFile(err))\n\(diagnostics)")
        }
        return readTextFile(out).split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
    }

    /// Rows of `sql` run by the `sqlite3` command-line tool on the daemon's database
    /// (fields split on tabs). CI needs the `sqlite3` package.
    func sqlite(_ sql: String) throws -> [[String]] {
        try sqliteRun(databasePath, sql)
    }

    deinit {
        sharedConnection = nil
        process?.killAndReap()
        notify.stop()
        if ProcessInfo.processInfo.environment["DILIGENCE_E2E_KEEP"] == "1" {
            FileHandle.standardError.write(Data("diligence e2e: kept \(root)\n".utf8))
        } else {
            try? FileManager.default.removeItem(atPath: root)
        }
    }
}

// MARK: - Test-side conveniences

extension DaemonUnderTest {
    /// Adds a task through the protocol; `fields` are task fields as in docs/protocol.md.
    @discardableResult
    func addTask(_ name: String, _ fields: [(String, JSON)] = []) throws -> JSON {
        try call("task_add", [("name", .string(name))] + fields)
    }
}

/// Leaves a stale socket file at `path`: binds a stream socket there and closes it without
/// listening or unlinking, as a crashed daemon would. Makes the parent directory (0700).
func leaveStaleSocket(at path: String) throws {
    var parent = URL(fileURLWithPath: path)
    parent.deleteLastPathComponent()
    mkdir(parent.path, 0o700)
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw HarnessError("socket: \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count <= SocketPath.maxLength else { throw HarnessError("socket path too long: \(path)") }
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
    let rc = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard rc == 0 else { throw HarnessError("binding \(path): \(String(cString: strerror(errno)))") }
}

/// `lstat` of `path`, nil when it does not exist.
func fileStatus(_ path: String) -> stat? {
    var st = stat()
    return lstat(path, &st) == 0 ? st : nil
}

/// A number printed by sqlite3 (`2` or `2.0`).
func number(_ text: String?) -> Double? { text.flatMap { Double($0.trimmingWhitespace()) } }
