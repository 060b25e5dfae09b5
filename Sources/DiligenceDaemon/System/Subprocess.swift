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
    /// `stdout`: a descriptor the child's stdout goes to instead (a file a caller reads whole
    /// afterwards); `onLine` then gets stderr alone.
    init(
        argv: [String], environment: [String]? = nil, input: [UInt8]? = nil, stdout: Int32? = nil, queue: DispatchQueue,
        onLine: ((String) -> Void)? = nil, onExit: @escaping (pid_t, Int32) -> Void
    ) throws(Errno) {
        name = argv.first ?? ""
        var toClose: [Int32] = []
        defer { toClose.forEach(Sys.close) }

        // The child's ends of the pipes block, as a program expects of its stdin and stdout
        // (a non-blocking stdin gives a hook that reads early EAGAIN instead of the event);
        // only the daemon's ends are non-blocking.
        var inputWriter: Int32 = -1
        var stdin = Sys.ChildStream.null
        if let input {
            let (reader, writer) = try Sys.pipe()
            toClose.append(reader)
            try Sys.setNonBlocking(reader, false)
            // Written before the child starts, so it is there whenever the child reads: a pipe
            // holds 64 KiB, the event JSON is far smaller, so one non-blocking write lands whole.
            var whole = false
            if case .done(let written)? = try? Sys.write(writer, input) { whole = written == input.count }
            if !whole { Log.warning("\(name): could not hand the event JSON to its stdin.") }
            stdin = .descriptor(reader)
            inputWriter = writer
        }
        var outputReader: Int32 = -1
        var output = Sys.ChildStream.null
        if onLine != nil {
            let (reader, writer) = try Sys.pipe()
            toClose.append(writer)
            try Sys.setNonBlocking(writer, false)
            output = .descriptor(writer)
            outputReader = reader
        }
        let child: pid_t
        do {
            child = try Sys.spawn(
                argv, environment: environment, input: stdin, output: stdout.map(Sys.ChildStream.descriptor) ?? output,
                errors: stdout == nil ? nil : output, resetSignals: Daemon.handledSignals + [SIGPIPE, SIGCHLD])
        } catch {
            if inputWriter >= 0 { Sys.close(inputWriter) }
            if outputReader >= 0 { Sys.close(outputReader) }
            throw error
        }
        pid = child

        // The child has its copy of the read end: closing ours is its end of file.
        if inputWriter >= 0 { Sys.close(inputWriter) }
        if let onLine, outputReader >= 0 {
            let source = DispatchSource.makeReadSource(fileDescriptor: outputReader, queue: queue)
            source.setEventHandler { [unowned self] in
                dispatchPrecondition(condition: .onQueue(queue))
                self.readOutput(outputReader, onLine: onLine)
            }
            self.onLine = onLine
            self.outputReader = outputReader
            source.setCancelHandler { Sys.close(outputReader) }
            source.activate()
            outputSource = source
        }
        guard let pidfd = Sys.pidDescriptor(child) else {
            // Without a pidfd (Linux < 5.3) poll for the exit; hooks are rare, so this is cheap.
            pollForExit(queue: queue, onExit: onExit)
            return
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: pidfd, queue: queue)
        source.setEventHandler { [unowned self] in
            dispatchPrecondition(condition: .onQueue(queue))
            self.reap(onExit: onExit)
        }
        source.setCancelHandler { Sys.close(pidfd) }
        source.activate()
        exitSource = source
    }

    /// Reads one chunk; false when there was nothing to read (for now, or ever again).
    @discardableResult
    private func readOutput(_ fd: Int32, onLine: (String) -> Void) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n: Int
        switch try? Sys.read(fd, into: &buffer) {
        case .wouldBlock: return false
        case .done(let count): n = count
        case nil: n = -1
        }
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
        guard let status = Sys.reap(pid) else { return }
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
            dispatchPrecondition(condition: .onQueue(queue))
            guard let status = Sys.reap(self.pid) else { return }
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
        Sys.kill(-pid, SIGTERM)
        guard killTimer == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [pid] in Sys.kill(-pid, SIGKILL) }
        timer.schedule(deadline: .now() + grace)
        timer.activate()
        killTimer = timer
    }

    /// Ends the child's group after `seconds` unless it exited first.
    func limit(to seconds: Double, queue: DispatchQueue, onTimeout: @escaping () -> Void) {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [unowned self] in
            dispatchPrecondition(condition: .onQueue(queue))
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
