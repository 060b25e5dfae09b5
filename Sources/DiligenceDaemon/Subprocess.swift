import CLinux
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// A child process of the daemon (a hook or a sound player), watched from `queue` without any
/// thread or signal of its own: its exit is read from a pidfd, its output from a pipe.
///
/// The child runs in a process group of its own (so a time limit ends whatever it started),
/// with the default signal dispositions and an empty signal mask: the daemon blocks SIGTERM,
/// SIGINT and SIGHUP and ignores SIGPIPE, and neither may leak into what it runs.
final class Subprocess {
    let pid: pid_t
    let name: String
    private var exitSource: DispatchSourceRead?
    private var outputSource: DispatchSourceRead?
    private var killTimer: DispatchSourceTimer?
    private var partialLine: [UInt8] = []
    private var onLine: ((String) -> Void)?
    private var outputReader: Int32 = -1
    private var loggedLines = 0
    /// Lines of output logged per run at most, so a chatty hook cannot flood the journal.
    static let maxLoggedLines = 200

    /// Starts `argv` (argv[0] looked up on the PATH). `environment` replaces the daemon's
    /// (nil: inherit); `input` is written to its stdin (which is /dev/null when nil) without
    /// ever blocking; each line of its stdout and stderr goes to `onLine` (output is discarded
    /// when nil); `onExit` gets the pid and wait status. Everything is called on `queue`.
    init(
        argv: [String], environment: [String]? = nil, input: [UInt8]? = nil, queue: DispatchQueue,
        onLine: ((String) -> Void)? = nil, onExit: @escaping (pid_t, Int32) -> Void
    ) throws(Errno) {
        name = argv.first ?? ""
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var toClose: [Int32] = []
        defer { toClose.forEach(Sys.close) }

        // The child's ends of the pipes block, as a program expects of its stdin and stdout
        // (a non-blocking stdin gives a hook that reads early EAGAIN instead of the event);
        // only the daemon's ends are non-blocking.
        var inputWriter: Int32 = -1
        if let input {
            let (reader, writer) = try Self.pipe()
            try Self.setBlocking(reader)
            // Written before the child starts, so it is there whenever the child reads: a pipe
            // holds 64 KiB, the event JSON is far smaller, so one non-blocking write lands whole.
            let written = input.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
            if written != input.count { Log.warning("\(name): could not hand the event JSON to its stdin.") }
            posix_spawn_file_actions_adddup2(&actions, reader, 0)
            toClose.append(reader)
            inputWriter = writer
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        var outputReader: Int32 = -1
        if onLine != nil {
            let (reader, writer) = try Self.pipe()
            try Self.setBlocking(writer)
            posix_spawn_file_actions_adddup2(&actions, writer, 1)
            posix_spawn_file_actions_adddup2(&actions, writer, 2)
            toClose.append(writer)
            outputReader = reader
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in Daemon.handledSignals + [SIGPIPE, SIGCHLD] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))

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
        guard rc == 0 else {
            if inputWriter >= 0 { Sys.close(inputWriter) }
            if outputReader >= 0 { Sys.close(outputReader) }
            throw Errno(code: rc, call: "posix_spawnp \(program)")
        }
        pid = child

        // The child has its copy of the read end: closing ours is its end of file.
        if inputWriter >= 0 { Sys.close(inputWriter) }
        if let onLine, outputReader >= 0 {
            let source = DispatchSource.makeReadSource(fileDescriptor: outputReader, queue: queue)
            source.setEventHandler { [unowned self] in self.readOutput(outputReader, onLine: onLine) }
            self.onLine = onLine
            self.outputReader = outputReader
            source.setCancelHandler { Sys.close(outputReader) }
            source.activate()
            outputSource = source
        }
        let pidfd = clinux_pidfd_open(child)
        guard pidfd >= 0 else {
            // Without a pidfd (Linux < 5.3) poll for the exit; hooks are rare, so this is cheap.
            pollForExit(queue: queue, onExit: onExit)
            return
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: pidfd, queue: queue)
        source.setEventHandler { [unowned self] in self.reap(onExit: onExit) }
        source.setCancelHandler { Sys.close(pidfd) }
        source.activate()
        exitSource = source
    }

    private static func setBlocking(_ fd: Int32) throws(Errno) {
        let flags = try Sys.retrying("fcntl") { fcntl(fd, F_GETFL) }
        try Sys.retrying("fcntl") { fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
    }

    private static func pipe() throws(Errno) -> (reader: Int32, writer: Int32) {
        var fds: [Int32] = [-1, -1]
        try Sys.retrying("pipe2") { clinux_pipe_cloexec_nonblock(&fds) }
        return (fds[0], fds[1])
    }

    /// Reads one chunk; false when there was nothing to read (for now, or ever again).
    @discardableResult
    private func readOutput(_ fd: Int32, onLine: (String) -> Void) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 && (errno == EAGAIN || errno == EINTR) { return false }
        if n <= 0 {
            if !partialLine.isEmpty { emit(partialLine, onLine) }
            partialLine = []
            outputSource?.cancel()
            outputSource = nil
            return false
        }
        partialLine += buffer[..<n]
        while let newline = partialLine.firstIndex(of: 10) {
            emit(Array(partialLine[..<newline]), onLine)
            partialLine.removeSubrange(...newline)
        }
        if partialLine.count > 4096 {
            emit(partialLine, onLine)
            partialLine = []
        }
        return true
    }

    private func emit(_ bytes: [UInt8], _ onLine: (String) -> Void) {
        loggedLines += 1
        if loggedLines <= Self.maxLoggedLines {
            onLine(String(decoding: bytes, as: UTF8.self))
        } else if loggedLines == Self.maxLoggedLines + 1 {
            onLine("(further output not logged)")
        }
    }

    private func reap(onExit: (pid_t, Int32) -> Void) {
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return }
        finishOutput()
        exitSource?.cancel()
        exitSource = nil
        killTimer?.cancel()
        killTimer = nil
        onExit(pid, status)
    }

    /// Logs what the child left in the pipe and stops reading: a grandchild that keeps the
    /// pipe open must not keep this object (or its log lines) alive.
    private func finishOutput() {
        guard let source = outputSource, let onLine else { return }
        while outputSource != nil && readOutput(outputReader, onLine: onLine) {}
        if !partialLine.isEmpty { emit(partialLine, onLine) }
        partialLine = []
        source.cancel()
        outputSource = nil
    }

    private func pollForExit(queue: DispatchQueue, onExit: @escaping (pid_t, Int32) -> Void) {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [unowned self] in
            var status: Int32 = 0
            guard waitpid(self.pid, &status, WNOHANG) == self.pid else { return }
            self.finishOutput()
            timer.cancel()
            self.killTimer?.cancel()
            onExit(pid, status)
        }
        timer.schedule(deadline: .now() + 0.1, repeating: 0.1)
        timer.activate()
        exitSource = nil
        pollTimer = timer
    }
    private var pollTimer: DispatchSourceTimer?

    /// SIGTERM to the child's process group now, SIGKILL `grace` seconds later if it still runs.
    func terminate(queue: DispatchQueue, grace: Double = 2) {
        kill(-pid, SIGTERM)
        guard killTimer == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [pid] in kill(-pid, SIGKILL) }
        timer.schedule(deadline: .now() + grace)
        timer.activate()
        killTimer = timer
    }

    /// Ends the child's group after `seconds` unless it exited first.
    func limit(to seconds: Double, queue: DispatchQueue, onTimeout: @escaping () -> Void) {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [unowned self] in
            self.killTimer = nil
            onTimeout()
            self.terminate(queue: queue)
        }
        timer.schedule(deadline: .now() + seconds)
        timer.activate()
        killTimer = timer
    }

    /// Wait-status text for the log: `exit status 1`, `killed by signal 15`.
    static func describe(_ status: Int32) -> String {
        status & 0x7f == 0 ? "exit status \((status >> 8) & 0xff)" : "killed by signal \(status & 0x7f)"
    }

    /// The daemon's environment with `overrides` set (replacing same-named variables).
    static func environment(with overrides: [(String, String)]) -> [String] {
        let names = Set(overrides.map { $0.0 + "=" })
        var result: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let eq = text.firstIndex(of: "="), !names.contains(String(text[...eq])) { result.append(text) }
            entry += 1
        }
        return result + overrides.map { "\($0.0)=\($0.1)" }
    }
}
