import DiligenceCore
import DiligenceJSON
import DiligenceProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// A mistake on the command line: shown as `diligencectl: MESSAGE` plus where to find help; exit 2.
struct UsageError: Error, Equatable {
    var message: String
    /// The command whose help to point at; nil for the program's.
    var command: String?

    init(_ message: String, command: String? = nil) {
        self.message = message
        self.command = command
    }

    /// The text for stderr.
    var text: String {
        "diligencectl: \(message)\n" + helpPointer(command) + "\n"
    }
}

/// `Run 'diligencectl start --help' for usage.`: where the help of `command` (nil: the program's) is.
func helpPointer(_ command: String?) -> String {
    tr("Run '{help}' for usage.", ["help": "diligencectl \(command.map { $0 + " " } ?? "")--help"])
}

/// ` Did you mean --work?` (or `start or stop`) in the person's language, for a message's
/// `{suggestion}`: its leading space is the translation's to keep (German) or drop (Chinese).
func didYouMean(_ typed: String, _ candidates: [String]) -> String {
    let close = Suggestion.meant(typed, candidates)
    guard let last = close.last else { return "" }
    let list = close.count == 1 ? last : tr("{choices} or {last}", ["choices": close.dropLast().joined(separator: ", "), "last": last])
    return tr(" Did you mean {choice}?", ["choice": list])
}

/// A command with its arguments checked and turned into JSON.
struct ParsedCommand {
    var command: Command
    /// One value per given positional argument, in order.
    var arguments: [JSON] = []
    /// By option name (without dashes).
    var options: [String: JSON] = [:]

    /// The request line for the daemon: arguments, then options in table order, then fixed members.
    var request: Request { request(adding: []) }

    /// The request with `extra` members the client adds itself (`history`'s screenful, stream).
    func request(adding extra: [(String, JSON)]) -> Request {
        var members = zip(command.arguments, arguments).compactMap { argument, value in argument.key.map { ($0, value) } }
        for option in command.options {
            if let key = option.key, let value = options[option.name] { members.append((key, value)) }
        }
        return Request(command: command.wire, arguments: members + extra + command.fixed)
    }

    func has(_ option: String) -> Bool { options[option] != nil }
}

/// What the command line asks for.
enum Invocation {
    /// Print this help text and exit 0.
    case help(String)
    /// `--version`: the client's version, without asking the daemon.
    case clientVersion
    /// Talk to the daemon; `socket` is `--socket`'s value when given.
    case run(ParsedCommand, socket: String?)
}

/// Parses `diligencectl`'s arguments (without the program name). `socket` is only for the help
/// text, whose tables wrap at `width` columns (nil: not at all).
func parseArguments(_ args: [String], defaultSocket: String, width: Int? = nil) throws(UsageError) -> Invocation {
    var socket: String?
    var i = 0
    // Global options, before the command.
    while i < args.count, args[i].hasPrefix("-") {
        let arg = args[i]
        i += 1
        switch arg {
        case "-h", "--help":
            return .help(Help.program(socket: socket ?? defaultSocket, width: width))
        case "--version":
            return .clientVersion
        case "--socket":
            guard i < args.count else { throw UsageError(tr("--socket needs a path.")) }
            socket = args[i]
            i += 1
        case _ where arg.hasPrefix("--socket="):
            socket = String(arg.dropFirst("--socket=".count))
        default:
            let name = arg.split(separator: "=", maxSplits: 1).first.map(String.init) ?? arg
            throw UsageError(
                tr(
                    "unknown option {option}.{suggestion} Global options: --socket PATH, --help, --version; the command's own options come after it.",
                    ["option": name, "suggestion": didYouMean(name, ["--socket", "--help", "--version"])]))
        }
        if socket?.isEmpty == true { throw UsageError(tr("--socket needs a path.")) }
    }
    let rest = args[i...]
    guard let first = rest.first else {
        throw UsageError(tr("no command given."))
    }
    if first == "help" {
        return .help(try helpText(for: Array(rest.dropFirst()), defaultSocket: socket ?? defaultSocket, width: width))
    }
    guard let (command, used) = Command.find(rest) else {
        if Command.groups.contains(first) {
            let next = rest.dropFirst().first
            if next == "-h" || next == "--help" { return .help(Help.group(first, width: width)) }
            let words = Command.subcommands(of: first).map { $0.words[1] }
            let choices = words.joined(separator: ", ")
            throw UsageError(
                next.map {
                    tr(
                        "unknown {group} subcommand {typed}.{suggestion} Subcommands: {choices}.",
                        ["group": first, "typed": $0.debugDescription, "suggestion": didYouMean($0, words), "choices": choices])
                }
                    ?? tr("{group} needs a subcommand: {choices}.", ["group": first, "choices": choices]), command: first)
        }
        throw UsageError(
            tr(
                "unknown command {typed}.{suggestion}",
                ["typed": first.debugDescription, "suggestion": didYouMean(first, Command.firstWords)]))
    }
    let parsed = try parseCommand(command, Array(rest.dropFirst(used)))
    guard let parsed else { return .help(Help.command(command, width: width)) }
    return .run(parsed, socket: socket)
}

/// `help`, `help start`, `help task add`.
private func helpText(for words: [String], defaultSocket: String, width: Int?) throws(UsageError) -> String {
    // `help --help` is help too.
    let words = words.filter { $0 != "-h" && $0 != "--help" }
    if words.isEmpty { return Help.program(socket: defaultSocket, width: width) }
    if let (command, used) = Command.find(words), used == words.count { return Help.command(command, width: width) }
    if words.count == 1, Command.groups.contains(words[0]) { return Help.group(words[0], width: width) }
    let typed = words.joined(separator: " ")
    throw UsageError(
        tr(
            "no help for {typed}: not a command.{suggestion}",
            ["typed": typed.debugDescription, "suggestion": didYouMean(typed, Command.all.map(\.name))]))
}

/// The arguments after the command's words; nil when they ask for the command's help.
func parseCommand(_ command: Command, _ args: [String]) throws(UsageError) -> ParsedCommand? {
    var parsed = ParsedCommand(command: command)
    var positionals: [String] = []
    var optionsEnded = false
    var i = 0
    while i < args.count {
        let arg = args[i]
        i += 1
        // `-3d` (three days ago) and `-1` are values, not options.
        if optionsEnded || !arg.hasPrefix("-") || arg == "-" || arg.dropFirst().first?.isNumber == true {
            positionals.append(arg)
            continue
        }
        if arg == "--" {
            optionsEnded = true
            continue
        }
        if arg == "-h" || arg == "--help" { return nil }
        try parseOption(arg, of: command, values: args, next: &i, into: &parsed)
    }
    try parsePositionals(positionals, of: command, into: &parsed)
    try checkCombinations(parsed, of: command)
    return parsed
}

extension Command {
    /// A mistake in what was typed for this command.
    func usageError(_ message: String) -> UsageError { UsageError(message, command: name) }
}

/// One `--name`, `--name=value` or `--name value` (then `values[next]`, and `next` moves past it).
private func parseOption(
    _ arg: String, of command: Command, values args: [String], next i: inout Int, into parsed: inout ParsedCommand
) throws(UsageError) {
    let fail = command.usageError
    guard arg.hasPrefix("--") else {
        throw fail(
            tr(
                "unknown option {option} for '{command}'.{suggestion}",
                ["option": arg, "command": command.name, "suggestion": command.suggestOption(arg)]))
    }
    let body = arg.dropFirst(2)
    let equals = body.firstIndex(of: "=")
    let name = String(body[..<(equals ?? body.endIndex)])
    let inline = equals.map { String(body[body.index(after: $0)...]) }
    guard let option = command.options.first(where: { $0.name == name }) else {
        throw fail(
            tr(
                "unknown option {option} for '{command}'.{suggestion}",
                ["option": "--" + name, "command": command.name, "suggestion": command.suggestOption("--" + name)]))
    }
    guard !parsed.has(name) else { throw fail(tr("{option} is given twice.", ["option": "--" + name])) }
    let raw: String
    if option.isSwitch {
        guard inline == nil else { throw fail(tr("{option} takes no value.", ["option": "--" + name])) }
        raw = option.switchValue ?? ""
    } else if let inline {
        raw = inline
    } else {
        guard i < args.count else {
            throw fail(tr("{option} needs a value ({placeholder}).", ["option": "--" + name, "placeholder": option.valuePlaceholder]))
        }
        raw = args[i]
        i += 1
    }
    do {
        parsed.options[name] = try option.kind.parse(raw, label: "--\(name)")
    } catch {
        throw fail(error.message)
    }
}

/// The command's arguments, in order, from the words that are not options.
private func parsePositionals(_ positionals: [String], of command: Command, into parsed: inout ParsedCommand) throws(UsageError) {
    let fail = command.usageError
    if positionals.count > command.arguments.count {
        throw fail(
            tr(
                "unexpected argument {typed} for '{command}'.",
                ["typed": positionals[command.arguments.count].debugDescription, "command": command.name]))
    }
    for (index, argument) in command.arguments.enumerated() {
        guard index < positionals.count else {
            if argument.required { throw fail(tr("'{command}' needs {argument}.", ["command": command.name, "argument": argument.name])) }
            break
        }
        do {
            let raw = argument.isPath ? absolutePath(positionals[index]) : positionals[index]
            parsed.arguments.append(try argument.kind.parse(raw, label: argument.name))
        } catch {
            throw fail(error.message)
        }
    }
}

/// `path` against this process's working directory: the daemon, which opens it, has its own.
func absolutePath(_ path: String) -> String {
    guard !path.hasPrefix("/"), !path.isEmpty, let cwd = getcwd(nil, 0) else { return path }
    defer { free(cwd) }
    let directory = String(cString: cwd)
    return (directory == "/" ? "" : directory) + "/" + (path.hasPrefix("./") ? String(path.dropFirst(2)) : path)
}

/// Options that exclude each other, and a change command given nothing to change.
private func checkCombinations(_ parsed: ParsedCommand, of command: Command) throws(UsageError) {
    let fail = command.usageError
    for group in command.exclusive {
        let clashing = group.filter(parsed.has)
        if clashing.count > 1 {
            throw fail(
                tr("{options} cannot be combined.", ["options": clashing.map { "--\($0)" }.joined(separator: " " + tr("and") + " ")]))
        }
    }
    if command.needsAChange, !command.options.contains(where: { $0.key != nil && parsed.has($0.name) }) {
        let changes = command.options.filter { $0.key != nil }
        let example = changes.first.map { " " + tr("e.g. {example}", ["example": $0.example]) } ?? ""
        let flags = changes.prefix(6).map { "--\($0.name)" }.joined(separator: ", ") + (changes.count > 6 ? ", …" : "")
        let give =
            changes.count == 1
            ? tr("nothing to change: give {flags};", ["flags": flags])
            : tr("nothing to change: give at least one of {flags};", ["flags": flags])
        throw fail(give + example + ".")
    }
}
