import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// An errno value from a failed syscall, with the call's name for messages.
public struct Errno: Error, Equatable, CustomStringConvertible {
    public var code: Int32
    public var call: String
    /// Words that say more than `code` (a file that is not a regular file).
    public var detail: String?

    public init(code: Int32, call: String, detail: String? = nil) {
        self.code = code
        self.call = call
        self.detail = detail
    }

    /// The system's words for `code` ("Too many open files").
    public var reason: String { detail ?? String(cString: strerror(code)) }
    public var description: String { "\(call): \(reason)" }
}

/// What a call on a non-blocking descriptor did: its result, or nothing because it would have
/// had to wait (EAGAIN): call again once the descriptor is ready.
enum NonBlocking<Value> {
    case done(Value)
    case wouldBlock
}

/// Readiness of a descriptor in an epoll set (`ReadLoop`). A hang-up or an error counts as both:
/// the next read or write then says what happened.
struct Readiness: OptionSet, Hashable {
    let rawValue: UInt32
    static let readable = Readiness(rawValue: 1)
    static let writable = Readiness(rawValue: 2)
}

/// Every syscall the daemon makes goes through here, and only here (a test greps the sources
/// for raw calls elsewhere): EINTR is retried, -1 becomes `Errno`, EAGAIN becomes
/// `.wouldBlock`, and no pointer to a Swift value leaves the `with…` call that made it.
enum Sys {
    /// Calls `body` until it is not interrupted; a negative result throws its errno.
    @discardableResult
    private static func retrying<T: BinaryInteger>(_ call: @autoclosure () -> String, _ body: () -> T) throws(Errno) -> T {
        while true {
            let result = body()
            if result >= 0 { return result }
            let e = errno
            if e == EINTR { continue }
            // EBADF and EFAULT mean a bug in this program, not a condition to handle.
            precondition(e != EBADF && e != EFAULT, "\(call()): \(String(cString: strerror(e)))")
            throw Errno(code: e, call: call())
        }
    }

    /// `retrying` for a non-blocking descriptor: EAGAIN is `.wouldBlock`, not an error.
    private static func nonBlocking<T: BinaryInteger>(_ call: String, _ body: () -> T) throws(Errno) -> NonBlocking<T> {
        do {
            return .done(try retrying(call, body))
        } catch  where error.code == EAGAIN || error.code == EWOULDBLOCK {
            return .wouldBlock
        }
    }

    // MARK: Descriptors

    static func close(_ fd: Int32) {
        // close(2) must not be retried on EINTR on Linux: the descriptor is gone either way.
        _ = Glibc.close(fd)
    }

    static func setNonBlocking(_ fd: Int32, _ nonBlocking: Bool = true) throws(Errno) {
        let flags = try retrying("fcntl") { fcntl(fd, F_GETFL) }
        try retrying("fcntl") { fcntl(fd, F_SETFL, nonBlocking ? flags | O_NONBLOCK : flags & ~O_NONBLOCK) }
    }

    static func setCloseOnExec(_ fd: Int32) {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }

    /// read(2) into `buffer` from its start; `.done(0)` is the end of the stream.
    static func read(_ fd: Int32, into buffer: inout [UInt8]) throws(Errno) -> NonBlocking<Int> {
        try nonBlocking("read") { buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) } }
    }

    /// A fixed-size value read whole (an eventfd counter, a signalfd record); nil when nothing
    /// (or not all of it) was there.
    static func readValue<T>(_ fd: Int32, as type: T.Type, initial: T) -> T? {
        var value = initial
        let n = withUnsafeMutableBytes(of: &value) { Glibc.read(fd, $0.baseAddress, $0.count) }
        return n == MemoryLayout<T>.size ? value : nil
    }

    /// write(2) of `bytes[from...]`: how many were written.
    static func write(_ fd: Int32, _ bytes: [UInt8], from start: Int = 0) throws(Errno) -> NonBlocking<Int> {
        try nonBlocking("write") { bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + start, $0.count - start) } }
    }

    /// Writes all of `bytes` to a blocking descriptor (a file).
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], call: String = "write") throws(Errno) {
        var written = 0
        while written < bytes.count {
            written += try retrying(call) { bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) } }
        }
    }

    /// Writes what it can of `bytes` and ignores every error (a log line to a stderr that may
    /// be closed or full: nothing else could be told about it anyway).
    static func writeIgnoringErrors(_ fd: Int32, _ bytes: [UInt8]) {
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            written += n
        }
    }

    /// send(2) of `bytes[from...]` without SIGPIPE: how many were sent.
    static func send(_ fd: Int32, _ bytes: [UInt8], from start: Int = 0, flags: Int32 = 0) throws(Errno) -> NonBlocking<Int> {
        try nonBlocking("send") {
            bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + start, $0.count - start, Int32(MSG_NOSIGNAL) | flags) }
        }
    }

    /// Replaces the file's contents from offset 0 by `bytes` (the lock file's holder line).
    static func overwrite(_ fd: Int32, with bytes: [UInt8]) {
        guard ftruncate(fd, 0) == 0 else { return }
        _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    static func fsync(_ fd: Int32, call: String = "fsync") throws(Errno) {
        try retrying(call) { Glibc.fsync(fd) }
    }

    // MARK: Files

    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) throws(Errno) -> Int32 {
        try retrying("open \(path)") { Glibc.open(path, flags | O_CLOEXEC, mode) }
    }

    /// lstat(2): the file itself, not what a symlink points to; nil when it does not exist.
    static func fileStatus(_ path: String) -> Glibc.stat? {
        var st = Glibc.stat()
        return lstat(path, &st) == 0 ? st : nil
    }

    /// stat(2), following symlinks; nil when there is nothing there.
    static func status(following path: String) -> Glibc.stat? {
        var st = Glibc.stat()
        return stat(path, &st) == 0 ? st : nil
    }

    /// fstat(2); nil for a descriptor that is not open.
    static func status(of fd: Int32) -> Glibc.stat? {
        var st = Glibc.stat()
        return fstat(fd, &st) == 0 ? st : nil
    }

    static func isSocket(_ st: Glibc.stat) -> Bool { st.st_mode & S_IFMT == S_IFSOCK }
    static func isDirectory(_ st: Glibc.stat) -> Bool { st.st_mode & S_IFMT == S_IFDIR }

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// gethostname(2); nil when it fails.
    static func hostName() -> String? {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return nil }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    static func isReadable(_ path: String) -> Bool { access(path, R_OK) == 0 }
    static func isExecutable(_ path: String) -> Bool { access(path, X_OK) == 0 }

    static func makeDirectory(_ path: String, mode: mode_t) throws(Errno) {
        try retrying("mkdir \(path)") { mkdir(path, mode) }
    }

    /// realpath(3): `path` with every symbolic link and `.`/`..` resolved; it must exist.
    static func realPath(_ path: String) throws(Errno) -> String {
        guard let resolved = realpath(path, nil) else { throw Errno(code: errno, call: "realpath \(path)") }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    static func rename(_ from: String, to: String) throws(Errno) {
        try retrying("rename \(from)") { Glibc.rename(from, to) }
    }

    /// link(2): a second name that never replaces a file (EEXIST instead).
    static func link(_ from: String, to: String) throws(Errno) {
        try retrying("link \(to)") { Glibc.link(from, to) }
    }

    /// unlink(2); whether the name is gone because of this call.
    @discardableResult
    static func unlink(_ path: String) -> Bool { Glibc.unlink(path) == 0 }

    static func chmod(_ path: String, _ mode: mode_t) throws(Errno) {
        try retrying("chmod \(path)") { Glibc.chmod(path, mode) }
    }

    /// flock(LOCK_EX | LOCK_NB): `.wouldBlock` while another process holds the lock.
    static func lockExclusive(_ fd: Int32) throws(Errno) -> NonBlocking<Void> {
        switch try nonBlocking("flock", { flock(fd, LOCK_EX | LOCK_NB) }) {
        case .done: return .done(())
        case .wouldBlock: return .wouldBlock
        }
    }
}

// MARK: - Sockets

extension Sys {
    /// Fills a `sockaddr_un` for `path`; nil when the path does not fit `sun_path`.
    static func unixAddress(_ path: String) -> sockaddr_un? {
        let bytes = Array(path.utf8)
        var address = sockaddr_un()
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return address
    }

    static func withSockaddr<R>(_ address: sockaddr_un, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var address = address
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// A close-on-exec Unix stream socket.
    static func unixSocket(nonBlocking: Bool) throws(Errno) -> Int32 {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | (nonBlocking ? Int32(SOCK_NONBLOCK.rawValue) : 0)
        return try retrying("socket") { socket(AF_UNIX, type, 0) }
    }

    static func bind(_ fd: Int32, to address: sockaddr_un) throws(Errno) {
        try retrying("bind") { withSockaddr(address) { Glibc.bind(fd, $0, $1) } }
    }

    static func listen(_ fd: Int32, backlog: Int32) throws(Errno) {
        try retrying("listen") { Glibc.listen(fd, backlog) }
    }

    static func connect(_ fd: Int32, to address: sockaddr_un) throws(Errno) {
        try retrying("connect") { withSockaddr(address) { Glibc.connect(fd, $0, $1) } }
    }

    /// accept4(2): the next waiting client, non-blocking and close-on-exec.
    static func accept(_ listenFD: Int32) throws(Errno) -> NonBlocking<Int32> {
        try nonBlocking("accept") { clinux_accept_cloexec_nonblock(listenFD) }
    }
}

// MARK: - Limits, identity, processes

extension Sys {
    /// This process's RLIMIT_NOFILE (soft, hard); nil when it cannot be read.
    static func descriptorLimit() -> (soft: rlim_t, hard: rlim_t)? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        return (limit.rlim_cur, limit.rlim_max)
    }

    static func setDescriptorLimit(soft: rlim_t, hard: rlim_t) {
        var limit = rlimit(rlim_cur: soft, rlim_max: hard)
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    static var userID: uid_t { getuid() }
    static var processID: pid_t { getpid() }

    /// Sends `signal` to process `pid` (negative: its process group); whether it was delivered.
    @discardableResult
    static func kill(_ pid: pid_t, _ signal: Int32) -> Bool { Glibc.kill(pid, signal) == 0 }

    /// waitpid(WNOHANG): the wait status once `pid` has exited, nil while it runs.
    static func reap(_ pid: pid_t) -> Int32? {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == pid ? status : nil
    }

    /// A descriptor that turns readable when `pid` exits (Linux ≥ 5.3).
    static func pidDescriptor(_ pid: pid_t) -> Int32? {
        let fd = clinux_pidfd_open(pid)
        return fd >= 0 ? fd : nil
    }

    /// A non-blocking, close-on-exec pipe.
    static func pipe() throws(Errno) -> (reader: Int32, writer: Int32) {
        var fds: [Int32] = [-1, -1]
        try retrying("pipe2") { fds.withUnsafeMutableBufferPointer { clinux_pipe_cloexec_nonblock($0.baseAddress) } }
        return (fds[0], fds[1])
    }

    static func sleep(seconds: Double) {
        usleep(UInt32(max(0, seconds) * 1e6))
    }

    /// clock_gettime(2) in seconds.
    static func clock(_ clock: clockid_t) -> Double {
        var ts = timespec()
        clock_gettime(clock, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// A detached thread named `name` (at most 15 bytes) that runs `body`; nil when started,
    /// else pthread_create's error.
    static func startThread(name: String, _ body: @escaping () -> Void) -> Errno? {
        final class Start {
            let name: String
            let body: () -> Void
            init(_ name: String, _ body: @escaping () -> Void) {
                self.name = name
                self.body = body
            }
        }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Start(name, body)).toOpaque()
        let created = pthread_create(
            &thread, nil,
            { context in
                let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
                clinux_name_thread(start.name)
                start.body()
                return nil
            }, context)
        guard created == 0 else {
            Unmanaged<Start>.fromOpaque(context).release()
            return Errno(code: created, call: "pthread_create")
        }
        pthread_detach(thread)
        return nil
    }
}

// MARK: - Event descriptors

extension Sys {
    static func epollCreate() throws(Errno) -> Int32 {
        try retrying("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
    }

    /// Adds `fd` to the epoll set (or changes what it waits for: `adding` false), its events
    /// carrying `token`; level-triggered.
    static func epollWatch(_ epollFD: Int32, _ fd: Int32, token: UInt64, for interest: Readiness, adding: Bool) throws(Errno) {
        try retrying("epoll_ctl") { clinux_epoll_set(epollFD, fd, token, adding ? 1 : 0, interest.rawValue) }
    }

    static func epollRemove(_ epollFD: Int32, _ fd: Int32) {
        _ = clinux_epoll_remove(epollFD, fd)
    }

    /// Waits (without a timeout) until some descriptors are ready: their tokens and readiness.
    static func epollWait(_ epollFD: Int32, max: Int = 64) throws(Errno) -> [(token: UInt64, ready: Readiness)] {
        var tokens = [UInt64](repeating: 0, count: max)
        var ready = [UInt32](repeating: 0, count: max)
        let count = try retrying("epoll_wait") {
            tokens.withUnsafeMutableBufferPointer { t in
                ready.withUnsafeMutableBufferPointer { r in clinux_epoll_wait_events(epollFD, t.baseAddress, r.baseAddress, Int32(max)) }
            }
        }
        return (0..<Int(count)).map { (tokens[$0], Readiness(rawValue: ready[$0])) }
    }

    /// A non-blocking eventfd (a counter another thread wakes an epoll set with).
    static func eventDescriptor() throws(Errno) -> Int32 {
        try retrying("eventfd") { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) }
    }

    static func signalEvent(_ fd: Int32) {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { Glibc.write(fd, $0.baseAddress, $0.count) }
    }

    /// A non-blocking inotify descriptor watching `directory` for `mask`.
    static func inotifyWatch(_ directory: String, mask: UInt32) throws(Errno) -> Int32 {
        let fd = try retrying("inotify_init1") { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }
        do {
            try retrying("inotify_add_watch \(directory)") { inotify_add_watch(fd, directory, mask) }
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// The timerfd that turns readable when the wall clock jumps (`ClockJumpWatch`).
    static func clockJumpTimer() throws(Errno) -> Int32 {
        try retrying("timerfd_create") { clinux_clock_jump_timer() }
    }

    /// Takes the jump's word (ECANCELED, or an expiry) and arms the timer again.
    static func rearmClockJumpTimer(_ fd: Int32) {
        _ = readValue(fd, as: UInt64.self, initial: 0)
        _ = clinux_arm_clock_jump_timer(fd)
    }

    // MARK: Signals

    static func signalSet(_ signals: [Int32]) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for number in signals { sigaddset(&set, number) }
        return set
    }

    /// Blocks `signals` for this thread and the threads it starts; ignores SIGPIPE.
    static func blockSignals(_ signals: [Int32]) {
        var set = signalSet(signals)
        pthread_sigmask(SIG_BLOCK, &set, nil)
        signal(SIGPIPE, SIG_IGN)
    }

    /// A non-blocking signalfd for `signals` (which must be blocked).
    static func signalDescriptor(_ signals: [Int32]) throws(Errno) -> Int32 {
        var set = signalSet(signals)
        return try retrying("signalfd") { clinux_signalfd(&set) }
    }

    /// The next signal queued on a signalfd, nil when none is.
    static func nextSignal(_ fd: Int32) -> Int32? {
        readValue(fd, as: signalfd_siginfo.self, initial: signalfd_siginfo()).map { Int32($0.ssi_signo) }
    }
}

// MARK: - Child processes

extension Sys {
    /// Where a child's standard stream comes from or goes: /dev/null, or a descriptor of ours.
    enum ChildStream {
        case null
        case descriptor(Int32)
    }

    /// posix_spawnp(3) of `argv` (argv[0] looked up on the PATH) in a process group of its own,
    /// with `resetSignals` at their default disposition and nothing blocked. `environment`
    /// replaces ours (nil: inherit); stdout and stderr both go to `output` unless `errors`
    /// names stderr's own.
    static func spawn(
        _ argv: [String], environment: [String]?, input: ChildStream, output: ChildStream, errors: ChildStream? = nil,
        resetSignals: [Int32]
    ) throws(Errno) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (stream, target, mode) in [(input, Int32(0), O_RDONLY), (output, 1, O_WRONLY), (errors ?? output, 2, O_WRONLY)] {
            switch stream {
            case .null: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", mode, 0)
            case .descriptor(let fd): posix_spawn_file_actions_adddup2(&actions, fd, target)
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = signalSet(resetSignals)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = signalSet([])
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))

        // strdup'ed copies live until the call returns; posix_spawnp copies them into the child.
        let cArgv = argv.map { strdup($0) } + [nil]
        let cEnv = environment.map { $0.map { strdup($0) } + [nil] }
        defer {
            cArgv.forEach { free($0) }
            cEnv?.forEach { free($0) }
        }
        var child: pid_t = 0
        let program = argv.first ?? ""
        let rc: Int32
        if let cEnv {
            rc = posix_spawnp(&child, program, &actions, &attributes, cArgv, cEnv)
        } else {
            rc = posix_spawnp(&child, program, &actions, &attributes, cArgv, environ)
        }
        guard rc == 0 else { throw Errno(code: rc, call: "posix_spawnp \(program)") }
        return child
    }
}
