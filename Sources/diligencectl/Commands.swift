import DiligenceCore
import DiligenceProtocol
import DiligenceTime

// The one table of commands and options. Parsing, request building and help all read it.

/// What an option or argument takes, and how its text becomes the JSON the daemon receives.
enum ValueKind: Sendable {
    /// A switch such as `--json`: no value.
    case none
    /// Any text, sent as a string.
    case text
    /// `90s`, `25m`, `1h30m`, a bare number of minutes: sent as whole seconds.
    case duration
    /// A whole number ≥ 0.
    case count
    /// A whole number, negative allowed (`--offset -1`).
    case integer
    /// `on` or `off`: sent as a boolean.
    case onOff
    /// One of a fixed list of words.
    case choice([String])
    /// `HH:MM` or `off` (sent as null).
    case reminder
    /// A name or `off` (sent as null).
    case nameOrOff
    /// A `--format` template, checked before the daemon is asked.
    case template

    /// The JSON for `raw`, or a usage error naming `label` (the flag or argument) and what it expected.
    func parse(_ raw: String, label: String) throws(UsageError) -> JSON {
        func bad(_ expected: String) -> UsageError {
            UsageError("\(label) expects \(expected); got \(raw.debugDescription).")
        }
        switch self {
        case .none:
            return .bool(true)
        case .text:
            return .string(raw)
        case .duration:
            guard let seconds = DurationText.parse(raw) else { throw bad(DurationText.expected) }
            return .int(seconds)
        case .count:
            guard !raw.isEmpty, raw.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let n = Int(raw) else {
                throw bad("a whole number (0 or more)")
            }
            return .int(n)
        case .integer:
            let digits = raw.hasPrefix("-") || raw.hasPrefix("+") ? raw.dropFirst() : Substring(raw)
            guard !digits.isEmpty, digits.count < 10, digits.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let n = Int(digits) else {
                throw bad("a whole number such as -1 or 2")
            }
            return .int(raw.hasPrefix("-") ? -n : n)
        case .onOff:
            switch raw {
            case "on", "true", "yes": return .bool(true)
            case "off", "false", "no": return .bool(false)
            default: throw bad("on or off")
            }
        case let .choice(words):
            guard words.contains(raw) else { throw bad("one of " + words.joined(separator: ", ")) }
            return .string(raw)
        case .reminder:
            if raw == "off" { return .null }
            guard TimeOfDay.parse(raw) != nil else { throw bad("a time HH:MM (24-hour) or off") }
            return .string(raw)
        case .nameOrOff:
            guard !raw.isEmpty else { throw bad("a name or off") }
            return raw == "off" ? .null : .string(raw)
        case .template:
            _ = try renderTemplate(raw, status: .object([]))
            return .string(raw)
        }
    }
}

/// An option of a command: `--name VALUE` or `--name=VALUE` (a switch takes no value).
struct Option: Sendable {
    /// Without the dashes: `short-break`.
    var name: String
    var kind: ValueKind
    /// Shown in help: `--work D`.
    var placeholder: String
    /// The request member it sets; nil for options that only shape the output (`--json`).
    var key: String?
    var help: String

    init(_ name: String, _ kind: ValueKind, _ placeholder: String = "", key: String? = nil, _ help: String) {
        self.name = name
        self.kind = kind
        self.placeholder = placeholder
        self.key = key
        self.help = help
    }

    /// `--work D`, or `--json` for a switch.
    var synopsis: String { placeholder.isEmpty ? "--\(name)" : "--\(name) \(placeholder)" }
}

/// A positional argument.
struct Argument: Sendable {
    /// Shown in help: `TASK`.
    var name: String
    /// The request member it sets.
    var key: String
    var kind: ValueKind
    var required: Bool
    var help: String

    var synopsis: String { required ? name : "[\(name)]" }
}

/// How a command's result is shown to a person.
enum OutputKind: Sendable {
    /// The status line (or `--json` / `--format`).
    case status
    /// A `watch` stream: one status line per event, in the chosen format (StatusBar.swift).
    case stream
    case taskList
    /// A task's `key: value` lines, under `heading` (`Added task "X".`) when there is one.
    case task(heading: String?)
    case removed
    case version
    /// `Reloaded the configuration from PATH.`
    case reloaded
    /// Statistics, the week, the plan, history, export, import: Reports.swift, by wire command.
    case report
}

/// One command of `diligencectl`: its words, arguments, options, wire command and output.
struct Command: Sendable {
    /// `["task", "add"]`.
    var words: [String]
    var arguments: [Argument] = []
    var options: [Option] = []
    /// The protocol command (docs/protocol.md).
    var wire: String
    /// Request members the command always sends.
    var fixed: [(String, JSON)] = []
    var output: OutputKind = .status
    /// Options that cannot be combined.
    var exclusive: [String] = []
    /// At least one option with a request key must be given (`task edit`).
    var needsAChange = false
    /// One line for the command list.
    var summary: String
    /// Paragraphs after the options in the command's help.
    var notes: String = ""

    var name: String { words.joined(separator: " ") }

    /// `usage` without the program name: `task add NAME [OPTIONS]`.
    var shortUsage: String { String(usage.dropFirst("diligencectl ".count)) }

    /// `diligencectl task add NAME [OPTIONS]`.
    var usage: String {
        var parts = ["diligencectl"] + words + arguments.map(\.synopsis)
        if options.count > 3 {
            parts.append("[OPTIONS]")
        } else if !exclusive.isEmpty {
            parts.append("[" + options.map(\.synopsis).joined(separator: " | ") + "]")
        } else {
            parts += options.map { "[\($0.synopsis)]" }
        }
        return parts.joined(separator: " ")
    }
}

// MARK: The table

extension Command {
    static let json = Option("json", .none, "", "print the daemon's answer as one line of JSON")

    /// The output formats of `status` and `watch` (docs/status-bars.md).
    static let statusFormats: [Option] = [
        Option("json", .none, "", "print the status object as one line of JSON (watch: each event line)"),
        Option("waybar", .none, "", "print JSON for a waybar custom module (text, alt, tooltip, class, percentage)"),
        Option("format", .template, "TEMPLATE", "print TEMPLATE with the placeholders below filled in"),
    ]

    /// The fields of a task, shared by `task add` and `task edit`.
    static let taskFields: [Option] = [
        Option("work", .duration, "D", key: "work", "work phase length (default 25m)"),
        Option("short-break", .duration, "D", key: "short_break", "short break length (default 5m)"),
        Option("long-break", .duration, "D", key: "long_break", "long break length (default 15m)"),
        Option("long-break-every", .count, "N", key: "long_break_every", "work rounds before a long break; 0 = never (default 4)"),
        Option("breaks", .onOff, "on|off", key: "breaks", "off: work follows work (default on)"),
        Option("autostart", .choice(Autostart.allCases.map(\.rawValue)), "none|breaks|work|all", key: "autostart",
               "which phases start by themselves (default none)"),
        Option("focus-mode", .onOff, "on|off", key: "focus_mode", "strict: no pause during work (default off)"),
        Option("color", .choice(TaskColor.allCases.map(\.rawValue)), "C", key: "color",
               "one of " + TaskColor.allCases.map(\.rawValue).joined(separator: " ") + " (default blue)"),
        Option("goal", .count, "N", key: "goal", "completed work sessions per day; 0 = none"),
        Option("reminder", .reminder, "HH:MM|off", key: "reminder", "daily reminder time"),
        Option("sound", .nameOrOff, "NAME|off", key: "sound", "ambient sound"),
        Option("description", .text, "TEXT", key: "description", "free text"),
    ]

    static let task = Argument(name: "TASK", key: "task", kind: .text, required: true,
                               help: "a task name (exact, or a unique case-insensitive match)")

    static func simple(_ word: String, _ summary: String) -> Command {
        Command(words: [word], wire: word, summary: summary)
    }

    /// Every command, in the order help lists them.
    static let all: [Command] = [
        Command(words: ["start"],
                arguments: [Argument(name: "TASK", key: "task", kind: .text, required: false,
                                     help: "the task to work on (default: the pending phase, else the last task)")],
                wire: "start", summary: "start TASK's work phase, or the pending phase"),
        simple("pause", "pause the running phase"),
        simple("resume", "resume the paused phase"),
        simple("toggle", "pause when running, resume when paused, start otherwise"),
        simple("stop", "give up the current phase (work is recorded as abandoned)"),
        simple("skip", "end the phase now and move on (work is recorded as skipped)"),
        Command(words: ["extend"],
                arguments: [Argument(name: "DURATION", key: "duration", kind: .duration, required: false,
                                     help: "how much to add (default 5m)")],
                wire: "extend", summary: "add DURATION (default 5m) to the running or paused phase"),
        Command(words: ["status"], options: statusFormats, wire: "status", exclusive: ["json", "waybar", "format"],
                summary: "show what the timer is doing", notes: templateHelp),
        Command(words: ["watch"],
                options: statusFormats + [Option("no-reconnect", .none, "", "exit when the daemon goes away instead of reconnecting")],
                wire: "watch", output: .stream, exclusive: ["json", "waybar", "format"],
                summary: "print the status on every change, and each second while a phase runs",
                notes: watchHelp + "\n\n" + templateHelp),
        Command(words: ["task", "list"], options: [json, Option("names", .none, "", "print only the names, one a line")],
                wire: "task_list", output: .taskList, exclusive: ["json", "names"], summary: "list the tasks"),
        Command(words: ["task", "show"], arguments: [task], options: [json], wire: "task_show",
                output: .task(heading: nil), summary: "show one task's settings"),
        Command(words: ["task", "add"],
                arguments: [Argument(name: "NAME", key: "name", kind: .text, required: true, help: "the new task's name")],
                options: taskFields, wire: "task_add", output: .task(heading: "Added task"),
                summary: "add a task", notes: durationHelp),
        Command(words: ["task", "edit"], arguments: [task],
                options: taskFields + [Option("name", .text, "NEW", key: "new_name", "rename the task")],
                wire: "task_edit", output: .task(heading: "Changed task"), needsAChange: true,
                summary: "change a task's settings",
                notes: "A changed duration applies from the next phase, never to the running one.\n" + durationHelp),
        Command(words: ["task", "remove"], arguments: [task],
                options: [Option("yes", .none, "", "remove without asking")],
                wire: "task_remove", fixed: [("confirm", .bool(true))], output: .removed,
                summary: "remove a task and all its recorded sessions",
                notes: """
                    Without --yes, asks for confirmation when standard input is a terminal, and refuses
                    otherwise. Answering no exits with status 1. The last task cannot be removed.
                    """),
        Command(words: ["reload"], wire: "reload", output: .reloaded,
                summary: "make the daemon re-read its config file (as SIGHUP does)",
                notes: "A bad file is refused with its line and reason, and the daemon keeps the old settings.\nThe running phase is untouched."),
    ] + statsCommands + [
        Command(words: ["version"], wire: "version", output: .version,
                summary: "print the client's and the daemon's versions"),
    ]

    /// The command whose words begin `arguments`, with how many words it took.
    static func find(_ arguments: some Collection<String>) -> (Command, Int)? {
        all.filter { arguments.starts(with: $0.words) }.max { $0.words.count < $1.words.count }.map { ($0, $0.words.count) }
    }

    /// The words that begin a group of subcommands (`task`).
    static var groups: [String] { all.filter { $0.words.count > 1 }.map { $0.words[0] }.uniqued() }

    static func subcommands(of group: String) -> [Command] {
        all.filter { $0.words.count > 1 && $0.words[0] == group }
    }
}

extension Array where Element: Equatable {
    /// The elements in order, each once.
    func uniqued() -> [Element] {
        var out: [Element] = []
        for e in self where !out.contains(e) { out.append(e) }
        return out
    }
}

// MARK: Help

enum Help {
    /// Columns for the option and command lists.
    static func table(_ rows: [(String, String)]) -> String {
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { left, right in
            let pad = left.count < width ? String(repeating: " ", count: width - left.count) : ""
            return "  " + left + pad + "  " + right
        }.joined(separator: "\n")
    }

    static let exitCodes = "Exit status: 0 success, 1 the daemon answered with an error, 2 usage error, 3 daemon unreachable."

    /// `diligencectl --help`.
    static func program(socket: String) -> String {
        """
        diligencectl — control the diligence Pomodoro timer daemon (diligenced)

        Usage: diligencectl [--socket PATH] COMMAND [ARGUMENTS] [OPTIONS]

        Commands:
        \(table(Command.all.map { ($0.shortUsage, $0.summary) } + [("help [COMMAND]", "show help for a command")]))

        Global options (before the command):
        \(table([
            ("--socket PATH", "the daemon's control socket (now: \(socket))"),
            ("-h, --help", "show this help; COMMAND --help for one command"),
            ("--version", "print the client's version"),
        ]))

        Options take their value as --flag VALUE or --flag=VALUE; -- ends the options.
        \(durationHelp)
        The socket is $DILIGENCE_SOCKET, else $XDG_RUNTIME_DIR/diligence/diligenced.sock,
        else /tmp/diligence-<uid>/diligenced.sock.
        \(exitCodes)

        """
    }

    /// `diligencectl COMMAND --help`.
    static func command(_ c: Command) -> String {
        var out = "Usage: \(c.usage)\n\n\(c.summary.prefix(1).uppercased() + c.summary.dropFirst()).\n"
        if !c.arguments.isEmpty {
            out += "\nArguments:\n" + table(c.arguments.map { ($0.name, $0.help) }) + "\n"
        }
        out += "\nOptions:\n" + table(c.options.map { ($0.synopsis, $0.help) } + [("-h, --help", "show this help")]) + "\n"
        if !c.notes.isEmpty { out += "\n" + c.notes + "\n" }
        out += "\n" + exitCodes + "\n"
        return out
    }

    /// `diligencectl task --help`.
    static func group(_ group: String) -> String {
        let subs = Command.subcommands(of: group)
        return "Usage: diligencectl \(group) SUBCOMMAND ...\n\nSubcommands:\n"
            + table(subs.map { ($0.shortUsage, $0.summary) })
            + "\n\nRun 'diligencectl \(group) SUBCOMMAND --help' for one subcommand.\n"
    }
}

let durationHelp = "Durations: 90s, 25m, 1h, 1h30m; a bare number means minutes."

let templateHelp = """
    Placeholders for --format (write {{ and }} for literal braces):
    \(Help.table(templatePlaceholders.map { ("{\($0.name)}", $0.help) }))

    {icon} by state:
    \(Help.table(statusIcons.map { ($0.icon, $0.when) }))

    Example: diligencectl status --format '{icon} {task} {remaining}'
    """

let watchHelp = """
    A line is printed only when it differs from the previous one. When the daemon goes away,
    watch prints an offline line (waybar class "offline", {state} "offline") and reconnects,
    waiting 0.1 s, then twice as long each time up to 5 s; --no-reconnect exits instead.
    """
