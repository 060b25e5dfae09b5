import DiligenceCore
import DiligenceJSON
import DiligenceProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// What a run of `diligencectl` produced: the texts for stdout and stderr, and the exit code.
struct RunResult: Equatable {
    var stdout = ""
    var stderr = ""
    var code: Int32 = 0

    static func usage(_ error: UsageError) -> RunResult { RunResult(stderr: error.text, code: 2) }
}

/// Exit codes (docs/diligencectl.md): the same kind of mistake always exits the same way,
/// whether the client or the daemon found it.
enum ExitCode {
    static let success: Int32 = 0
    /// The daemon could not do it: nothing to pause, a name taken, an overlapping session,
    /// storage; or the connection broke, or a removal was declined.
    static let daemonError: Int32 = 1
    /// A mistake in what was typed: an unknown command or option, a value of the wrong form or
    /// out of range, an unknown task, a malformed or impossible date.
    static let usage: Int32 = 2
    static let unreachable: Int32 = 3
    /// Nothing was sent: the socket's fallback directory is not this user's private one, or
    /// the process listening runs as another user.
    static let untrusted: Int32 = 4

    /// The daemon's error codes that mean a mistake in what was typed (exit 2, like the client's
    /// own checks); every other code is exit 1.
    static let mistakesInWhatWasTyped: Set<DiligenceError.Code> = [
        .invalidArgument, .missingArgument, .outOfRange, .unknownTask, .ambiguousTask, .invalidName,
        .invalidDuration, .invalidValue, .invalidPeriod, .invalidDate, .invertedRange, .nonexistentTime, .ambiguousTime,
        .invalidSession, .unknownSession, .unknownFormat, .unknownDevice, .ambiguousDevice,
    ]
}

/// How `task remove` asks for confirmation; tests pass their own.
struct Terminal: Sendable {
    /// Whether standard input is a terminal a person can answer on.
    var isInteractive: Bool
    /// Shows the prompt and reads the answer; nil at end of input.
    var ask: @Sendable (String) -> String?
    /// Whether standard output is a terminal (reports may use colours there).
    var outputIsTerminal = false
    /// The width of the terminal standard output shows on (TIOCGWINSZ), nil when it is none.
    var windowColumns: Int?
    /// Its height in lines (TIOCGWINSZ), nil when it is none: `history`'s screenful.
    var windowRows: Int?
    /// Where output streamed as it comes goes (`history`): nil keeps it for the result's stdout.
    var output: (@Sendable (String) -> Int32)?

    /// Standard input, output and error of this process.
    static var standard: Terminal {
        Terminal(
            isInteractive: isatty(0) != 0,
            ask: { prompt in
                writeAll(prompt, to: 2)
                return readLine()
            }, outputIsTerminal: isatty(1) != 0, windowColumns: Screen.windowColumns(fd: 1), windowRows: Screen.windowRows(fd: 1),
            output: { writeAll($0, to: 1) })
    }

    /// A terminal nobody sits at.
    static let none = Terminal(isInteractive: false) { _ in nil }
}

/// Writes `text` whole to file descriptor `fd` (1 stdout, 2 stderr), retrying short writes and
/// EINTR. Returns 0, or the errno of the write that failed (EPIPE: the reader is gone, as the
/// client ignores SIGPIPE).
@discardableResult
func writeAll(_ text: String, to fd: Int32) -> Int32 {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        if n < 0 { return errno }
        if n == 0 { return EIO }
        bytes = bytes.dropFirst(n)
    }
    return 0
}

/// The whole client, as a function: arguments in, texts and exit code out.
func runClient(_ args: [String], environment: [String: String], terminal: Terminal) -> RunResult {
    let defaultSocket = SocketPath.resolve(environment: environment)
    let invocation: Invocation
    // Help wraps at the terminal's width (COLUMNS, else the window's; 80 for a file or pipe).
    let width = Screen.detect(environment: environment, isTerminal: terminal.outputIsTerminal, windowColumns: terminal.windowColumns)
        .columns
    do {
        invocation = try parseArguments(args, defaultSocket: defaultSocket, width: width)
    } catch {
        return .usage(error)
    }
    switch invocation {
    case .help(let text):
        return RunResult(stdout: text)
    case .clientVersion:
        return RunResult(stdout: clientVersionLine)
    case .run(let parsed, let socket):
        var screen = Screen.detect(environment: environment, isTerminal: terminal.outputIsTerminal, windowColumns: terminal.windowColumns)
        if parsed.has("plain") { screen.colors = .none }
        return execute(parsed, socket: socket ?? defaultSocket, terminal: terminal, screen: screen, environment: environment)
    }
}

// untranslated: scripts read the version line.
let clientVersionLine = "diligencectl \(ProtocolInfo.release) (protocol \(ProtocolInfo.version))\n"

/// Why a command did not get a result.
enum Failure: Error {
    case connection(ConnectionError)
    /// The daemon answered `ok: false` with this code (nil: something that is not a response).
    /// Kept as sent: a newer daemon may send a code this client does not know.
    case daemon(code: String?, message: String)
    case usage(UsageError)
    /// The person answered no.
    case declined(String)
    /// Taskwarrior could not say which task was meant (not installed, failed, no JSON).
    case taskwarrior(String)
}

/// What is refused before the daemon is asked; true when `task remove` is to be confirmed.
private func refusalBeforeSending(_ parsed: ParsedCommand, terminal: Terminal) throws(Failure) -> Bool {
    // A page of HTML (72 KB for a year) is of no use on a terminal: it says where to put it.
    if case .page = parsed.command.output, terminal.outputIsTerminal {
        let file = parsed.has("svg") ? "report.svg" : "report.html"
        throw .usage(
            UsageError(
                tr(
                    "report writes a page, not text for the terminal: redirect it to a file, as in '{example}', or pipe it on.",
                    ["example": "diligencectl \(parsed.command.name) ... > \(file)"]),
                command: parsed.command.name))
    }
    let confirm = parsed.command.wire == "task_remove" && !parsed.has("yes")
    if confirm, !terminal.isInteractive {
        throw .usage(
            UsageError(
                tr("'task remove' deletes the task's recorded sessions too; pass --yes to confirm."), command: parsed.command.name))
    }
    return confirm
}

/// Sends `parsed`'s request (after asking, for `task remove`) and shows the answer.
func execute(
    _ parsed: ParsedCommand, socket: String, terminal: Terminal, screen: Screen = .plain,
    environment: [String: String] = ProcessEnvironment.current
) -> RunResult {
    // `version` prints the client's line whatever happens next.
    let prefix = if case .version = parsed.command.output { clientVersionLine } else { "" }
    if case .stream = parsed.command.output {
        // On a terminal, the plain format becomes one line rewritten in place.
        let plain = !parsed.has("json") && !parsed.has("waybar") && !parsed.has("format")
        let live = plain && terminal.outputIsTerminal
        if live { endLiveLineOnInterrupt() }
        return watch(parsed, socket: socket, display: live ? .live(screen) : .lines)
    }
    var run: RunResult
    do throws(Failure) {
        let confirm = try refusalBeforeSending(parsed, terminal: terminal)
        let connection: ControlConnection
        do {
            connection = try ControlConnection(path: socket)
        } catch {
            throw .connection(error)
        }
        func send(_ request: Request) throws(Failure) -> JSON {
            let response: JSON
            do {
                response = try connection.send(request)
            } catch {
                throw .connection(error)
            }
            return try result(of: response)
        }
        if confirm {
            try confirmRemoval(parsed, terminal: terminal, send: send)
        }
        if case .page = parsed.command.output {
            run = RunResult(stdout: try reportPage(parsed, send: send))
        } else {
            if parsed.command.wire == "history" {
                run = try history(parsed, on: connection, terminal: terminal, environment: environment, send: send)
                run.stdout = prefix + run.stdout
                return run
            }
            let answer =
                parsed.command.wire == "import"
                ? try importFile(parsed, send: send)
                : try send(Taskwarrior.request(for: parsed, environment: environment))
            run = RunResult(stdout: show(answer, for: parsed, screen: screen))
            if case .status = parsed.command.output { run.stderr = configWarnings(answer) }
        }
    } catch {
        run = .failed(error, of: parsed, environment: environment)
    }
    run.stdout = prefix + run.stdout
    return run
}

extension RunResult {
    /// What a person sees when `parsed` got no result, and the exit code (docs/diligencectl.md).
    static func failed(_ error: Failure, of parsed: ParsedCommand, environment: [String: String]) -> RunResult {
        switch error {
        case .connection(.unreachable(let path, let reason)):
            return RunResult(stderr: unreachableMessage(path: path, reason: reason, environment: environment), code: ExitCode.unreachable)
        case .connection(.broken(let reason)):
            return RunResult(stderr: "diligencectl: \(reason)\n", code: ExitCode.daemonError)
        case .connection(.untrusted(let path, let reason)):
            return .untrusted(path: path, reason: reason)
        case .daemon(let code, let message):
            let typed = code.flatMap(DiligenceError.Code.init(rawValue:)).map(ExitCode.mistakesInWhatWasTyped.contains) ?? false
            return RunResult(
                stderr: "diligencectl: \(parsed.command.namingFlags(message))\n"
                    + (typed ? helpPointer(parsed.command.name) + "\n" : ""),
                code: typed ? ExitCode.usage : ExitCode.daemonError)
        case .usage(let usage):
            return .usage(usage)
        case .declined(let message), .taskwarrior(let message):
            return RunResult(stderr: "diligencectl: \(message)\n", code: ExitCode.daemonError)
        }
    }
}

/// Ctrl-C during a live `watch` leaves the shell's prompt on a line of its own.
private func endLiveLineOnInterrupt() {
    signal(SIGINT) { _ in
        var newline: UInt8 = 0x0A
        _ = write(1, &newline, 1)
        _exit(130)
    }
}

/// `status` warns on stderr (stdout stays what scripts and bars read) while the daemon runs
/// without its config file: one short line pointing to `doctor`, which says it in full — the
/// whole text on every `status` drowned the status (issue 32).
func configWarnings(_ status: JSON) -> String {
    let problems = status["config_problems"]?.arrayValue?.count ?? 0
    guard problems > 0 else { return "" }
    return "diligencectl: "
        + trPlural(
            "warning: the daemon's configuration has a problem; 'diligencectl doctor' shows it.",
            "warning: the daemon's configuration has {count} problems; 'diligencectl doctor' shows them.", count: problems) + "\n"
}

/// The result of an `ok: true` response; the error message otherwise.
func result(of response: JSON) throws(Failure) -> JSON {
    if response["ok"]?.boolValue == true { return response["result"] ?? .null }
    if let message = response["error"]?["message"]?.stringValue {
        throw .daemon(code: response["error"]?["code"]?.stringValue, message: message)
    }
    throw .daemon(
        code: nil, message: tr("the daemon sent an answer this client does not understand: {answer}", ["answer": response.serialized]))
}

/// Asks on the terminal before `task remove` (without `--yes`), saying what it erases.
private func confirmRemoval(
    _ parsed: ParsedCommand, terminal: Terminal, send: (Request) throws(Failure) -> JSON
) throws(Failure) {
    // The daemon's own summary (`dry_run`): the task's stored name, and an unknown or merely
    // begun name fails before anything is asked.
    let typed = parsed.arguments.first?.stringValue ?? ""
    let summary = try send(Request(command: "task_remove", arguments: [("task", .string(typed)), ("dry_run", .bool(true))]))
    let name = summary["task"]?.stringValue ?? typed
    let erased = erasedSessions(summary["sessions"], summary["focused_seconds"])
    // The answer stays y or yes in every language (the prompt shows it).
    let answer = terminal.ask(
        tr(
            "Remove task \"{task}\" and erase {erased}? 'diligencectl task archive {task}' hides it and keeps them. [y/N] ",
            ["task": name, "erased": erased])
    )?
    .trimmingWhitespace().lowercased()
    guard answer == "y" || answer == "yes" else { throw .declined(tr("nothing removed.")) }
}

/// `its 37 recorded sessions (9h15m)`: what a removal erases.
func erasedSessions(_ sessions: JSON?, _ focusedSeconds: JSON?) -> String {
    let n = Int(sessions?.intValue ?? 0)
    return trPlural(
        "its {count} recorded session ({time})", "its {count} recorded sessions ({time})", count: n,
        ["time": hoursMinutes(Int(focusedSeconds?.intValue ?? 0))])
}

/// Exit 3's message: where the client looked, and then — only when no daemon runs — how to
/// start one. A daemon that runs with its socket elsewhere (a shell without XDG_RUNTIME_DIR
/// looks in /tmp) is named with its socket: starting a second one is never the advice then.
func unreachableMessage(path: String, reason: String, environment: [String: String] = ProcessEnvironment.current) -> String {
    let head = "diligencectl: " + tr("cannot reach the daemon at {path} ({reason}).", ["path": path, "reason": reason]) + "\n"
    if let running = DatabaseLock.holder(ofDatabase: DataPath.database(environment: environment)), !running.socket.isEmpty {
        let values = ["pid": String(running.pid), "path": path, "socket": running.socket]
        if running.socket == path {
            return head
                + tr(
                    "diligenced (pid {pid}) is running, but its socket {path} is gone; restart it (`systemctl --user restart diligenced`, or stop and start it).",
                    values) + "\n"
        }
        let shell = environment["XDG_RUNTIME_DIR"] == nil ? " " + tr("(this shell has no XDG_RUNTIME_DIR)") : ""
        return head
            + tr(
                "diligenced (pid {pid}) is running and listens on {socket}: use --socket {socket}, or export DILIGENCE_SOCKET={socket}{shell}.",
                values.merging(["shell": shell]) { $1 }) + " "
            + tr("Do not start a second diligenced on the same database.") + "\n"
    }
    let service = "/run/user/\(getuid())/diligence/diligenced.sock"
    var status = stat()
    if service != path, environment["XDG_RUNTIME_DIR"] == nil, stat(service, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK {
        return head
            + tr(
                "The service's socket is {service}, where this shell (without XDG_RUNTIME_DIR) does not look: use --socket {service}, or export XDG_RUNTIME_DIR=/run/user/{uid}.",
                ["service": service, "uid": String(getuid())]) + "\n"
    }
    return head + tr("Is diligenced running? {hint}", ["hint": StartHint.current(environment: environment).text]) + "\n"
        + tr("Or point --socket / $DILIGENCE_SOCKET at its socket.") + "\n"
}

extension RunResult {
    /// Exit 4: why the socket was not trusted, that nothing was sent, what to do.
    static func untrusted(path: String, reason: String) -> RunResult {
        let head = "diligencectl: " + tr("refused to talk to {path}: {reason}; nothing was sent.", ["path": path, "reason": reason]) + "\n"
        guard path == SocketPath.fallback else {
            return RunResult(
                stderr: head + tr("Point --socket / $DILIGENCE_SOCKET at your own daemon's socket.") + "\n", code: ExitCode.untrusted)
        }
        return RunResult(
            stderr: head
                + tr(
                    "Another user may be listening in your daemon's place. Log in a session that sets XDG_RUNTIME_DIR (/run/user/{uid}), or pass --socket / $DILIGENCE_SOCKET; have {directory} removed (or, if it is yours, chmod 700 it).",
                    ["uid": String(getuid()), "directory": SocketPath.fallbackDirectory]) + "\n", code: ExitCode.untrusted)
    }
}

/// `Not recorded: 12s of focus, shorter than min_session (1m).` after the status, when the
/// work that `stop` or `skip` ended is too short to be a session.
func notRecordedLine(_ result: JSON) -> String {
    guard let dropped = result["not_recorded"] else { return "" }
    let focused = DurationText.format(Int(dropped["focused_seconds"]?.intValue ?? 0))
    let minimum = DurationText.format(Int(dropped["min_session"]?.intValue ?? 0))
    return tr("Not recorded: {focused} of focus, shorter than min_session ({minimum}).", ["focused": focused, "minimum": minimum]) + "\n"
}

/// The text for a person (or the JSON for a script) of a command's result.
func show(_ result: JSON, for parsed: ParsedCommand, screen: Screen = .plain) -> String {
    if parsed.has("json") { return result.serialized + "\n" }
    switch parsed.command.output {
    case .status, .stream:
        return formatStatus(result, for: parsed) + "\n" + notRecordedLine(result)
    case .taskList:
        let tasks = result["tasks"]?.arrayValue ?? []
        if parsed.has("names") { return tasks.map { ($0["name"]?.stringValue ?? "") + "\n" }.joined() }
        return taskTable(tasks, screen: screen)
    case .task(let heading):
        let name = result["name"]?.stringValue ?? ""
        return (heading.map { fill(translated($0), ["task": name]) + "\n" } ?? "") + taskDetails(result)
    case .removed:
        let name = result["removed"]?.stringValue ?? ""
        let erased = erasedSessions(result["sessions_removed"], result["focused_seconds_removed"])
        return tr("Removed task \"{task}\" and erased {erased}.", ["task": name, "erased": erased]) + "\n"
    case .report, .page:
        return report(result, for: parsed, screen: screen)
    case .version:
        let version = result["version"]?.stringValue ?? "?"
        let proto = result["protocol"]?.intValue ?? 0
        let note =
            proto == ProtocolInfo.version
            ? "" : " — " + tr("this client speaks protocol {version}", ["version": String(ProtocolInfo.version)])
        // untranslated: scripts read the version line; only the mismatch note is for a person.
        return "diligenced \(version) (protocol \(proto))\(note)\n"
    case .reloaded:
        let path = result["config"]?.stringValue ?? tr("the config file")
        if result["file"]?.boolValue == false {
            return tr("No config file at {path}: running on the default settings.", ["path": path]) + "\n"
        }
        let problems = result["problems"]?.arrayValue?.compactMap(\.stringValue) ?? []
        guard !problems.isEmpty else { return tr("Reloaded the configuration from {path}.", ["path": path]) + "\n" }
        return tr("Reloaded the configuration from {path}, with the default for each bad line:", ["path": path]) + "\n"
            + problems.map { "  \($0)\n" }.joined()
    }
}
