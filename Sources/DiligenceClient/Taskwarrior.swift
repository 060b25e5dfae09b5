import DiligenceCore
import DiligenceJSON
import DiligenceProtocol

#if canImport(Glibc)
    import Glibc
#endif

// `start --taskwarrior ID|UUID` and `start tw:ID`: the client runs as the person, with their
// Taskwarrior (TASKRC, TASKDATA), so it is the client that reads the task; the daemon gets its
// UUID and project, and maps the project with its [taskwarrior] settings.

/// A Taskwarrior task as `task export` shows it.
struct TaskwarriorTask: Equatable {
    var uuid: String
    var description: String
    var project: String?
}

enum Taskwarrior {
    /// What a task name beginning with it means: a Taskwarrior task (`tw:12`, `tw:UUID`).
    static let prefix = "tw:"

    /// `start`'s request with the Taskwarrior task it names resolved; `parsed.request` when it
    /// names none.
    static func request(for parsed: ParsedCommand, environment: [String: String]) throws(Failure) -> Request {
        guard parsed.command.wire == "start", let reference = try reference(in: parsed) else { return parsed.request }
        let task = try resolve(reference, environment: environment)
        var members: [(String, JSON)] = []
        if case .object(let given) = parsed.request.body {
            members = given.filter { key, value in
                key != "command" && key != "taskwarrior" && !(key == "task" && value.stringValue?.hasPrefix(prefix) == true)
            }
        }
        members.append(("taskwarrior", .string(task.uuid)))
        if let project = task.project { members.append(("taskwarrior_project", .string(project))) }
        if !members.contains(where: { $0.0 == "note" }), let note = note(from: task.description) {
            members.append(("note", .string(note)))
        }
        return Request(command: "start", arguments: members)
    }

    /// The ID or UUID named by `--taskwarrior` or a `tw:` task; a usage error when both are.
    static func reference(in parsed: ParsedCommand) throws(Failure) -> String? {
        let option = parsed.options["taskwarrior"]?.stringValue
        let named = parsed.arguments.first?.stringValue.flatMap { $0.hasPrefix(prefix) ? String($0.dropFirst(prefix.count)) : nil }
        if option != nil, named != nil {
            throw .usage(UsageError("name the Taskwarrior task once: --taskwarrior ID or tw:ID, not both.", command: "start"))
        }
        guard let reference = option ?? named else { return nil }
        let isID = !reference.isEmpty && reference.count <= 9 && reference.allSatisfy { $0.isASCII && $0.isNumber } && reference != "0"
        guard isID || UUIDText.parse(reference) != nil else {
            throw .usage(
                UsageError(
                    "a Taskwarrior task is named by its ID (12) or its UUID; got \(reference.debugDescription).", command: "start"))
        }
        return reference
    }

    /// The description as a session note: one line, at most `SessionNote.maxLength` characters.
    static func note(from description: String) -> String? {
        let line = String(description.map { $0.isNewline || $0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } == true ? " " : $0 })
            .trimmingWhitespace()
        guard !line.isEmpty else { return nil }
        return line.count <= SessionNote.maxLength ? line : String(line.prefix(SessionNote.maxLength - 1)) + "…"
    }

    /// Runs `task REFERENCE export` and reads the one task it lists.
    static func resolve(_ reference: String, environment: [String: String]) throws(Failure) -> TaskwarriorTask {
        let argv = ["task", "rc.hooks=off", "rc.confirmation=off", "rc.verbose=nothing", "rc.json.array=on", reference, "export"]
        let run = runTask(argv, environment: environment)
        guard let output = run.output else {
            throw .taskwarrior("could not run Taskwarrior's `task` (\(run.error)); is the taskwarrior package installed?")
        }
        guard run.status == 0 else {
            let said = run.error.trimmingWhitespace()
            throw .taskwarrior("`task \(reference) export` failed (exit \(run.status))\(said.isEmpty ? "" : ": " + said.prefix(300))")
        }
        return try parseExport(output, reference: reference)
    }

    /// The one task of `task export`'s JSON array, checked.
    static func parseExport(_ text: String, reference: String) throws(Failure) -> TaskwarriorTask {
        guard let json = try? JSON.parse(Array(text.utf8)), let tasks = json.arrayValue else {
            throw .taskwarrior("`task \(reference) export` printed no JSON array: \(text.prefix(200).debugDescription)")
        }
        guard let first = tasks.first else {
            throw .usage(UsageError("Taskwarrior has no task \(reference).", command: "start"))
        }
        guard tasks.count == 1 else {
            throw .usage(UsageError("Taskwarrior lists \(tasks.count) tasks for \(reference); name one.", command: "start"))
        }
        guard let uuid = first["uuid"]?.stringValue.flatMap(UUIDText.parse) else {
            throw .taskwarrior("`task \(reference) export` gave a task without a valid uuid.")
        }
        let project = first["project"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        return TaskwarriorTask(uuid: uuid, description: first["description"]?.stringValue ?? "", project: project)
    }

    /// `argv` with its stdout read whole (nil when it could not start) and its stderr.
    private static func runTask(_ argv: [String], environment: [String: String]) -> (output: String?, error: String, status: Int32) {
        var out: [Int32] = [0, 0]
        var err: [Int32] = [0, 0]
        guard pipe(&out) == 0 else { return (nil, String(cString: strerror(errno)), -1) }
        guard pipe(&err) == 0 else {
            close(out[0])
            close(out[1])
            return (nil, String(cString: strerror(errno)), -1)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, out[1], 1)
        posix_spawn_file_actions_adddup2(&actions, err[1], 2)
        for fd in out + err { posix_spawn_file_actions_addclose(&actions, fd) }
        let env = environment.map { "\($0.key)=\($0.value)" }
        var pid: pid_t = 0
        let spawned = withCStrings(argv) { cArgv in withCStrings(env) { cEnv in posix_spawnp(&pid, argv[0], &actions, nil, cArgv, cEnv) } }
        close(out[1])
        close(err[1])
        defer {
            close(out[0])
            close(err[0])
        }
        guard spawned == 0 else { return (nil, String(cString: strerror(spawned)), -1) }
        // stderr is a line or two; stdout is read first, whole.
        let output = readAll(out[0])
        let error = readAll(err[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let code = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return (output, error, code)
    }

    private static func readAll(_ fd: Int32) -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += buffer[..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        pointers.append(nil)
        defer { pointers.forEach { free($0) } }
        return body(pointers)
    }
}
