import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceTime

// The one table of commands and options. Parsing, request building and help all read it.

/// What an option or argument takes, and how its text becomes the JSON the daemon receives.
enum ValueKind: Sendable {
    /// A switch such as `--json`: no value.
    case none
    /// Text the client keeps for itself (`import FILE`).
    case localText
    /// A `--format` template, checked before the daemon is asked.
    case template
    /// A field of the wire command: its type, range, default and doc come from the protocol's
    /// schema (DiligenceProtocol's `CommandSpec`), and its value is checked against it here,
    /// before the daemon is asked, with the daemon's own rule.
    case field(FieldSpec)

    /// The JSON for `raw`, or a usage error naming `label` (the flag or argument) and what it expected.
    func parse(_ raw: String, label: String) throws(UsageError) -> JSON {
        switch self {
        case .none:
            return .bool(true)
        case .localText:
            return .string(raw)
        case .template:
            _ = try renderTemplate(raw, status: .object([]))
            return .string(raw)
        case .field(let spec):
            let value = try commandLineValue(raw, of: spec.type, label: label)
            do {
                return try spec.check(value, label: label)
            } catch {
                throw UsageError(error.message)
            }
        }
    }

    /// The JSON a person means by `raw` for a field of `type` (`on` for true, `25m` for 1500
    /// seconds, `off` for null); its range is the schema's to check.
    private func commandLineValue(_ raw: String, of type: FieldType, label: String) throws(UsageError) -> JSON {
        func bad(_ expected: String) -> UsageError {
            UsageError(
                tr("{label} expects {expected}; got {typed}.", ["label": label, "expected": expected, "typed": raw.debugDescription]))
        }
        switch type {
        case .text, .taskName, .deviceName, .note:
            return .string(raw)
        case .integer:
            let digits = raw.hasPrefix("-") || raw.hasPrefix("+") ? raw.dropFirst() : Substring(raw)
            guard !digits.isEmpty, digits.count <= 18, digits.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let n = Int64(digits) else {
                throw bad(tr("a whole number such as 3"))
            }
            return .int(raw.hasPrefix("-") ? -n : n)
        case .boolean:
            switch raw {
            case "on", "true", "yes": return .bool(true)
            case "off", "false", "no": return .bool(false)
            default: throw bad(tr("on or off"))
            }
        case .duration:
            // As text: the range check then quotes what was typed ("169h", not 608400).
            guard DurationText.parse(raw) != nil else { throw bad(DurationText.expected) }
            return .string(raw)
        case .choice(let words, _):
            guard words.contains(raw) else { throw bad(tr("one of {choices}", ["choices": words.joined(separator: ", ")])) }
            return .string(raw)
        case .timeOfDay:
            if raw == "off" { return .null }
            guard TimeOfDay.parse(raw) != nil else { throw bad(tr("a time HH:MM (24-hour) or off")) }
            return .string(raw)
        case .nameOrOff:
            guard !raw.isEmpty else { throw bad(tr("a name or off")) }
            return raw == "off" ? .null : .string(raw)
        case .breakRule:
            return .string(raw)
        case .durationOrOff:
            if raw == "off" { return .null }
            guard DurationText.parse(raw) != nil else { throw bad(tr("{durations}, or off", ["durations": DurationText.expected])) }
            return .string(raw)
        }
    }

    /// What help shows after the flag when the table gives no placeholder.
    var placeholder: String {
        guard case .field(let spec) = self else { return "" }
        switch spec.type {
        case .text, .taskName, .deviceName, .note: return "TEXT"
        case .integer: return "N"
        case .boolean: return "on|off"
        case .duration: return "D"
        case .choice(let words, _): return words.joined(separator: "|")
        case .timeOfDay: return "HH:MM|off"
        case .nameOrOff: return "NAME|off"
        case .breakRule: return "RULE"
        case .durationOrOff: return "D|off"
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
    /// nil: the field's doc line from the schema.
    var ownHelp: String?
    /// For a switch that sets a field (`--all`): the value it sends, as if typed after the flag.
    var switchValue: String?

    /// An option the client handles itself (`--json`, `--format`, `--yes`).
    init(_ name: String, _ kind: ValueKind, _ placeholder: String = "", _ help: String) {
        self.name = name
        self.kind = kind
        self.placeholder = placeholder
        self.key = nil
        self.ownHelp = help
    }

    /// An option that sets the wire command's field `key` (`Command` looks it up in the schema).
    init(_ name: String, key: String, _ placeholder: String = "", help: String? = nil) {
        self.name = name
        self.kind = .localText
        self.placeholder = placeholder
        self.key = key
        self.ownHelp = help
    }

    /// A switch (no value typed) that sets the wire command's field `key` to `value`.
    init(_ name: String, key: String, sends value: String, help: String) {
        self.init(name, key: key, help: help)
        self.switchValue = value
    }

    /// Whether it takes no value on the command line.
    var isSwitch: Bool {
        if case .none = kind { return true }
        return switchValue != nil
    }

    /// What help shows for the value: the table's placeholder, else one for the field's type.
    var valuePlaceholder: String { isSwitch ? "" : placeholder.isEmpty ? kind.placeholder : placeholder }

    /// `--work D`, or `--json` for a switch.
    var synopsis: String { valuePlaceholder.isEmpty ? "--\(name)" : "--\(name) \(valuePlaceholder)" }

    /// The help line: the table's own, else the field's doc with its default.
    var help: String { ownHelp.map(translated) ?? kind.fieldHelp }

    /// `--work 25m`: the option with a value it takes (`example(for:)`), for help and hints.
    var example: String {
        guard case .field = kind, !isSwitch else {
            return valuePlaceholder.isEmpty ? "--\(name)" : "--\(name) \(exampleValue(valuePlaceholder))"
        }
        return "--\(name) \(kind.example(placeholder: valuePlaceholder))"
    }
}

/// A positional argument.
struct Argument: Sendable {
    /// Shown in help: `TASK`.
    var name: String
    /// The request member it sets; nil for one the client keeps (`import FILE`).
    var key: String?
    var kind: ValueKind
    var required: Bool
    /// nil: the field's doc line from the schema.
    var ownHelp: String?
    /// A file the daemon opens: a relative path is made absolute here (`absolutePath`).
    var isPath = false

    /// An argument that sets the wire command's field `key`; required when the field is.
    init(_ name: String, key: String, help: String? = nil, isPath: Bool = false) {
        self.name = name
        self.key = key
        self.kind = .localText
        self.required = false
        self.ownHelp = help
        self.isPath = isPath
    }

    /// An argument the client keeps for itself.
    init(local name: String, required: Bool, help: String) {
        self.name = name
        self.key = nil
        self.kind = .localText
        self.required = required
        self.ownHelp = help
    }

    var synopsis: String { required ? name : "[\(name)]" }
    var help: String { ownHelp.map(translated) ?? kind.fieldHelp }
}

extension ValueKind {
    /// A value this kind takes, as a person would type it: the field's default when it has one,
    /// else one by its type, else one for the placeholder (`TASK` → Study).
    func example(placeholder: String) -> String {
        guard case .field(let spec) = self else { return exampleValue(placeholder) }
        switch spec.type {
        case .duration: return spec.defaultText ?? "25m"
        case .integer(let range): return spec.defaultText ?? String(max(range.lowerBound, min(range.upperBound, 10)))
        case .boolean: return "on"
        case .choice(let words, _): return spec.defaultText.flatMap { words.contains($0) ? $0 : nil } ?? words[0]
        case .timeOfDay: return "09:00"
        case .nameOrOff, .durationOrOff: return "off"
        case .breakRule: return "1/5"
        case .text, .taskName, .deviceName, .note: return exampleValue(placeholder)
        }
    }

    /// The schema's doc line, with the default when there is one, in the words typed: a
    /// command as its words (`history add`, not `history_add`), a boolean as on and off.
    var fieldHelp: String {
        guard case .field(let spec) = self else { return "" }
        var doc = translated(spec.doc)
        for command in Command.all where command.wire.contains("_") {
            doc = doc.replacing(command.wire, with: command.words.joined(separator: " "))
        }
        if case .boolean = spec.type {
            for (wire, typed) in [("true", "on"), ("false", "off")] {
                if doc.hasPrefix(wire + ": ") { doc = typed + doc.dropFirst(wire.count) }
                doc = doc.replacing("(new task: \(wire))", with: "(new task: \(typed))")
            }
        }
        return doc + (spec.defaultText.map { " " + tr("(default {value})", ["value": $0]) } ?? "")
    }
}

/// How a command's result is shown to a person.
enum OutputKind: Sendable {
    /// The status line (or `--json` / `--format`).
    case status
    /// A `watch` stream: one status line per event, in the chosen format.
    case stream
    case taskList
    /// A task's `key: value` lines, under `heading` (`Added task "{task}".`) when there is one.
    case task(heading: String?)
    case removed
    case version
    /// `Reloaded the configuration from PATH.`
    case reloaded
    /// Statistics, the week, the plan, history, export, import, by wire command.
    case report
    /// The report page or its heat-map, from `stats` and `week`.
    case page
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
    /// Groups of options that cannot be combined (one of each group at most).
    var exclusive: [[String]] = []
    /// At least one option with a request key must be given (`task edit`).
    var needsAChange = false
    /// One line for the command list.
    var summary: String
    /// Paragraphs after the options in the command's help.
    var notes: String = ""
    /// The example in its help, without `diligencectl `; nil: one made from the table (`exampleLine`).
    var ownExample: String?

    init(
        words: [String], arguments: [Argument] = [], options: [Option] = [], wire: String, fixed: [(String, JSON)] = [],
        output: OutputKind = .status, exclusive: [[String]] = [], needsAChange: Bool = false, summary: String, notes: String = "",
        example: String? = nil
    ) {
        let schema = CommandSpec.named(wire)
        self.words = words
        self.arguments = arguments.map { argument in
            guard let key = argument.key, let field = schema?.field(key) else { return argument }
            var resolved = argument
            resolved.kind = .field(field)
            resolved.required = field.isRequired
            return resolved
        }
        self.options = options.map { option in
            guard let key = option.key, let field = schema?.field(key) else { return option }
            var resolved = option
            resolved.kind = .field(field)
            return resolved
        }
        self.wire = wire
        self.fixed = fixed
        self.output = output
        self.exclusive = exclusive
        self.needsAChange = needsAChange
        self.summary = summary
        self.notes = notes
        self.ownExample = example
    }

    var name: String { words.joined(separator: " ") }

    /// `usage` without the program name: `task add NAME [OPTIONS]`.
    var shortUsage: String { String(usage.dropFirst("diligencectl ".count)) }

    /// `diligencectl task add NAME [OPTIONS]`.
    var usage: String {
        var parts = ["diligencectl"] + words + arguments.map(\.synopsis)
        if options.count > 3 {
            parts.append("[OPTIONS]")
        } else if exclusive.count == 1 {
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
    static let plain = Option("plain", .none, "", "no colours: glyphs only, as when standard output is not a terminal")

    /// The output formats of `status` and `watch` (docs/status-bars.md).
    static let statusFormats: [Option] = [
        Option("json", .none, "", trNoop("print the status object as one line of JSON (watch: each event line)")),
        Option("waybar", .none, "", trNoop("print JSON for a waybar custom module (text, alt, tooltip, class, percentage)")),
        Option("format", .template, "TEMPLATE", trNoop("print TEMPLATE with the placeholders below filled in")),
    ]

    /// The fields of a task, shared by `task add` and `task edit`; type, range and help come
    /// from the protocol's schema.
    static let taskFields: [Option] = [
        Option("work", key: "work"), Option("short-break", key: "short_break"), Option("long-break", key: "long_break"),
        Option("long-break-every", key: "long_break_every"), Option("breaks", key: "breaks"),
        Option("autostart", key: "autostart"), Option("focus-mode", key: "focus_mode"),
        Option(
            "color", key: "color", "C", help: "one of " + TaskColor.allCases.map(\.rawValue).joined(separator: " ") + " (new task: blue)"),
        Option("goal", key: "goal"), Option("reminder", key: "reminder"), Option("sound", key: "sound"),
        Option("description", key: "description"), Option("away", key: "away"), Option("dnd", key: "dnd"),
        Option("mode", key: "mode"), Option("break-ratio", key: "break_ratio"), Option("min-break", key: "min_break"),
        Option("max-break", key: "max_break"), Option("flow-nudge", key: "flow_nudge"), Option("overtime", key: "overtime"),
        Option("void-on-interrupt", key: "void_on_interrupt"),
    ]

    static let task = Argument("TASK", key: "task")

    static func simple(_ word: String, _ summary: String) -> Command {
        Command(words: [word], wire: word, summary: summary)
    }

    /// Every command, in the order help lists them.
    static let all: [Command] =
        [
            Command(
                words: ["start"], arguments: [task],
                options: [
                    Option("note", key: "note", "TEXT"),
                    Option(
                        "taskwarrior", key: "taskwarrior", "ID",
                        help: trNoop(
                            "follow Taskwarrior task ID or UUID (also TASK tw:ID): its project picks TASK, its description the note")),
                ],
                wire: "start", summary: trNoop("start TASK's work phase, or the pending phase"),
                notes: trNoop(
                    "With --taskwarrior ID (or TASK tw:ID), diligencectl reads the task with `task ID export`;\n"
                        + "[taskwarrior] map (else default) in diligenced.conf turns its project into a diligence task."),
                example: "start Study --note 'chapter 3'"),
            simple("pause", trNoop("pause the running phase")),
            simple("resume", trNoop("resume the paused phase")),
            simple("toggle", trNoop("pause when running, resume when paused, start otherwise")),
            simple("stop", trNoop("give up the current phase (work is recorded as abandoned)")),
            simple("skip", trNoop("end the phase now and move on (work is recorded as skipped)")),
            Command(
                words: ["extend"], arguments: [Argument("DURATION", key: "duration")], wire: "extend",
                summary: trNoop("add DURATION (default 5m) to the running or paused phase")),
            simple("away", trNoop("say you left the computer (swayidle, xss-lock, scripts)")),
            simple("back", trNoop("say you are back: work paused by leaving resumes")),
            Command(
                words: ["discard-away"], wire: "discard_away",
                summary: trNoop("take the time away that work counted (on_away = continue) out of it")),
            Command(
                words: ["note"], arguments: [Argument("TEXT", key: "text")], wire: "note",
                summary: trNoop("note the running work phase (recorded with its session; '' removes it)"),
                example: "note 'chapter 3, exercises'"),
            Command(
                words: ["interrupt"], arguments: [Argument("TEXT", key: "note")],
                options: [
                    Option("internal", key: "kind", sends: "internal", help: "your own thought broke in (the default; marked ')"),
                    Option("external", key: "kind", sends: "external", help: "someone or something else did (marked -)"),
                ],
                wire: "interrupt", exclusive: [["internal", "external"]],
                summary: trNoop("mark the running work with an interruption; it goes on (its deadline stays)"),
                notes: "A task with --void-on-interrupt on ends its work as abandoned at an external one.",
                example: "interrupt --external 'phone call'"),
            Command(
                words: ["status"], options: statusFormats, wire: "status", exclusive: [["json", "waybar", "format"]],
                summary: trNoop("show what the timer is doing"), notes: templateHelp(localized: false)),
            Command(
                words: ["watch"],
                options: statusFormats + [
                    Option("no-reconnect", .none, "", "exit when the daemon goes away instead of reconnecting"),
                    Option("bell", .none, "", "ring the terminal's bell when a phase ends (without it: when the daemon's bell = on)"),
                ],
                wire: "watch", output: .stream, exclusive: [["json", "waybar", "format"]],
                summary: trNoop("print the status on every change, and each second while a phase runs"),
                notes: watchHelp + "\n\n" + templateHelp(localized: false)),
            Command(
                words: ["task", "list"],
                options: [
                    json, Option("names", .none, "", "print only the names, one a line"),
                    Option("all", key: "archived", sends: "included", help: "archived tasks too, marked (archived)"),
                    Option("archived", key: "archived", sends: "only", help: "only the archived tasks"), plain,
                ],
                wire: "task_list", fixed: [("recent_days", .int(Int64(sparklineDays)))], output: .taskList,
                exclusive: [["json", "names"], ["all", "archived"]],
                summary: trNoop("list the tasks (not the archived ones), each with a sparkline of its last 30 days"),
                notes: "The sparkline shows each day's focused time, today last: ▁ none, ▂▃▅▇ quarters of the task's busiest day."),
            Command(
                words: ["task", "show"], arguments: [task], options: [json], wire: "task_show",
                output: .task(heading: nil), summary: trNoop("show one task's settings")),
            Command(
                words: ["task", "add"],
                arguments: [Argument("NAME", key: "name")],
                options: taskFields, wire: "task_add", output: .task(heading: trNoop("Added task \"{task}\".")),
                summary: trNoop("add a task"), notes: durationHelp),
            Command(
                words: ["task", "edit"], arguments: [task],
                options: taskFields + [Option("name", key: "new_name", "NEW")],
                wire: "task_edit", output: .task(heading: trNoop("Changed task \"{task}\".")), needsAChange: true,
                summary: trNoop("change a task's settings"),
                notes: "A changed duration applies from the next phase, never to the running one.\n" + durationHelp),
            Command(
                words: ["task", "archive"], arguments: [task], options: [json], wire: "task_archive",
                output: .task(heading: trNoop("Archived task \"{task}\".")),
                summary: trNoop("hide a task from lists, completion and start, keeping its history"),
                notes: """
                    Its sessions stay in history, statistics and exports (reports mark it archived);
                    its reminder stops. 'task unarchive' brings it back. The last task not archived stays.
                    """),
            Command(
                words: ["task", "unarchive"], arguments: [task], options: [json], wire: "task_unarchive",
                output: .task(heading: trNoop("Unarchived task \"{task}\".")), summary: trNoop("bring an archived task back")),
            Command(
                words: ["task", "remove"], arguments: [task],
                options: [Option("yes", .none, "", "remove without asking")],
                wire: "task_remove", fixed: [("confirm", .bool(true))], output: .removed,
                summary: trNoop("remove a task and erase all its recorded sessions (see task archive)"),
                notes: """
                    Without --yes, says how many sessions and how much focused time it erases and asks
                    when standard input is a terminal, and refuses otherwise. Answering no exits with
                    status 1. 'task archive' hides a task and keeps its history instead.
                    The last task not archived cannot be removed.
                    """),
            Command(
                words: ["reload"], wire: "reload", output: .reloaded,
                summary: trNoop("make the daemon re-read its config file (as SIGHUP does)"),
                notes:
                    "A bad file is refused with its line and reason, and the daemon keeps the old settings.\nThe running phase is untouched."
            ),
        ] + statsCommands + syncCommands + [
            Command(
                words: ["version"], wire: "version", output: .version,
                summary: trNoop("print the client's and the daemon's versions")),
            Command(
                words: ["doctor"], wire: "doctor", output: .report,
                summary: trNoop("say what works for the running daemon: notifications, sound, presence, sync, hooks"),
                notes:
                    "Each part as the daemon sees it (its environment, config and PATH), and what to install or change where one does not work."
            ),
            Command(
                words: ["backup"], arguments: [Argument("FILE", key: "path", isPath: true)], options: [json],
                wire: "backup", output: .report,
                summary: trNoop("copy the database, whole and consistent, to FILE while the daemon runs"),
                notes: """
                    FILE must not exist yet; a relative path is taken from the current directory. The copy is one
                    SQLite file (no -wal), made with SQLite's online backup and checked before it is reported; a
                    running phase goes on meanwhile. To restore it, stop the daemon and put it in place of the
                    database (/usr/share/doc/diligence/docs/backup.md).
                    """,
                example: "backup diligence-backup.sqlite3"),
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

    /// The words a command line may begin with: each command's first word, and `help`.
    static var firstWords: [String] { (all.map { $0.words[0] } + ["help"]).uniqued() }

    /// The daemon's message with the request member it begins with (`"since": …`, `"offset" must
    /// be …`, `long_break_every must be …`) named as the person typed it: `--since`, `DATE`.
    func namingFlags(_ message: String) -> String {
        // The wire name a message gives protocol clients, after the command typed, is noise here.
        var message = message
        for command in Command.all where command.wire.contains("_") { message = message.replacing(" (\(command.wire))", with: "") }
        let names =
            options.compactMap { option in option.key.map { ($0, "--" + option.name) } }
            + arguments.compactMap { argument in argument.key.map { ($0, argument.name) } }
        for (key, typed) in names {
            for form in ["\"\(key)\"", key + " must "] where message.hasPrefix(form) {
                return typed + (form.hasSuffix(" must ") ? " must " : "") + message.dropFirst(form.count)
            }
        }
        return message
    }

    /// ` Did you mean --work?` for a mistyped option of this command; empty when none is close.
    func suggestOption(_ typed: String) -> String {
        didYouMean(typed, options.map { "--" + $0.name } + ["--help"])
    }

    /// One command line that uses it: the table's own, else its words, a value for each required
    /// argument (and for TASK), and its first option that sends something.
    var exampleLine: String {
        if let ownExample { return "diligencectl " + ownExample }
        var parts = ["diligencectl"] + words
        for argument in arguments where argument.required || argument.name == "TASK" {
            parts.append(argument.kind.example(placeholder: argument.name))
        }
        if let option = options.first(where: { $0.key != nil }) { parts.append(option.example) }
        return parts.joined(separator: " ")
    }
}

/// A value for a placeholder of the help text (`TASK`, `DATE`), for examples.
func exampleValue(_ placeholder: String) -> String {
    switch placeholder {
    case "TASK", "NAME": "Study"
    case "NEW": "Reading"
    case "DATE", "DAY": "yesterday"
    case "START": "09:00"
    case "END": "09:50"
    case "ID": "42"
    case "PERIOD": "week"
    case "FILE": "sessions.jsonl"
    case "TEMPLATE": "'{icon} {task} {remaining}'"
    case "DURATION", "D": "10m"
    case "C": "green"
    default: "'chapter 3'"
    }
}

// MARK: Help

enum Help {
    /// Columns for the option and command lists, the descriptions wrapped at `width`.
    static func table(_ rows: [(String, String)], width: Int? = nil) -> String {
        guard let width else { return columns(rows.map { [$0.0, $0.1] }).dropLast().description }
        // A name wider than two fifths of the line stands on a line of its own with its text
        // below, so that one long usage does not squeeze every other text into a narrow column.
        let fit = rows.map(\.0.displayWidth).filter { $0 <= width * 2 / 5 }.max() ?? 0
        let lead = String(repeating: " ", count: 2 + fit + 2)
        let room = max(20, width - lead.count)
        return rows.flatMap { name, text -> [String] in
            let parts = wrapped(text, width: room)
            guard name.displayWidth <= fit else { return ["  " + name] + parts.map { lead + $0 } }
            return ["  " + name.padded(toWidth: fit) + "  " + parts[0]] + parts.dropFirst().map { lead + $0 }
        }.joined(separator: "\n")
    }

    static var exitCodes: String {
        tr(
            "Exit status: 0 success, 1 the daemon could not do it (nothing running, a name taken, an overlap),\n"
                + "2 a mistake in what was typed (command, option, value, task name, date), 3 daemon unreachable,\n"
                + "4 nothing sent: the socket's directory or its listener is another user's.")
    }

    /// `diligencectl --help`.
    static func program(socket: String, width: Int? = nil) -> String {
        let commands = Command.all.map { ($0.shortUsage, translated($0.summary)) } + [("help [COMMAND]", tr("show help for a command"))]
        let global = [
            ("--socket PATH", tr("the daemon's control socket (now: {socket})", ["socket": socket])),
            ("-h, --help", tr("show this help; COMMAND --help for one command")),
            ("--version", tr("print the client's version")),
        ]
        return tr("diligencectl — control the diligence Pomodoro timer daemon (diligenced)") + "\n\n"
            + tr("Usage: {usage}", ["usage": "diligencectl [--socket PATH] COMMAND [ARGUMENTS] [OPTIONS]"]) + "\n\n"
            + tr("Commands:") + "\n" + table(commands, width: width) + "\n\n"
            + tr("Global options (before the command):") + "\n" + table(global, width: width) + "\n\n"
            + tr("Options take their value as --flag VALUE or --flag=VALUE; -- ends the options.") + "\n"
            + translated(durationHelp) + "\n"
            + tr(
                "The socket is $DILIGENCE_SOCKET, else $XDG_RUNTIME_DIR/diligence/diligenced.sock,\n"
                    + "else /tmp/diligence-<uid>/diligenced.sock.") + "\n"
            + exitCodes + "\n"
    }

    /// `diligencectl COMMAND --help`.
    static func command(_ c: Command, width: Int? = nil) -> String {
        let summary = translated(c.summary)
        let sentence = tr("{summary}.", ["summary": summary.prefix(1).uppercased() + summary.dropFirst()])
        var out = tr("Usage: {usage}", ["usage": c.usage]) + "\n\n\(sentence)\n"
        if !c.arguments.isEmpty {
            out += "\n" + tr("Arguments:") + "\n" + table(c.arguments.map { ($0.name, $0.help) }, width: width) + "\n"
        }
        out +=
            "\n" + tr("Options:") + "\n"
            + table(c.options.map { ($0.synopsis, $0.help) } + [("-h, --help", tr("show this help"))], width: width) + "\n"
        if !c.notes.isEmpty { out += "\n" + notes(c) + "\n" }
        out += "\n" + tr("Example: {example}", ["example": c.exampleLine]) + "\n"
        out += "\n" + exitCodes + "\n"
        return out
    }

    /// The command's notes in the person's language; --format's help (`status`, `watch`) is made
    /// anew from its translated parts.
    private static func notes(_ c: Command) -> String {
        let template = templateHelp(localized: false)
        guard c.notes.hasSuffix(template) else { return translated(c.notes) }
        let before = String(c.notes.dropLast(template.count))
        return (before.isEmpty ? "" : translated(String(before.dropLast(2))) + "\n\n") + templateHelp(localized: true)
    }

    /// `diligencectl task --help`.
    static func group(_ group: String, width: Int? = nil) -> String {
        let subs = Command.subcommands(of: group)
        return tr("Usage: {usage}", ["usage": "diligencectl \(group) SUBCOMMAND ..."]) + "\n\n" + tr("Subcommands:") + "\n"
            + table(subs.map { ($0.shortUsage, translated($0.summary)) }, width: width) + "\n\n"
            + tr("Run '{help}' for one subcommand.", ["help": "diligencectl \(group) SUBCOMMAND --help"]) + "\n"
    }
}

/// Marked, not translated: the command table's notes use it, and building the table opens no catalog.
let durationHelp = trNoop("Durations: 90s, 25m, 1h, 1h30m; a bare number means minutes.")

/// --format's placeholders and icons, in English for the table (`localized: false`: no catalog
/// is opened to build it) or in the person's language for help.
func templateHelp(localized: Bool) -> String {
    func t(_ text: String) -> String { localized ? translated(text) : text }
    return t(trNoop("Placeholders for --format (write {{ and }} for literal braces):")) + "\n"
        + Help.table(templatePlaceholders.map { ("{\($0.name)}", t($0.help)) }) + "\n\n"
        + t(trNoop("{icon} by state:")) + "\n"
        + Help.table(statusIcons.map { ($0.icon, t($0.when)) }) + "\n\n"
        + fill(t(trNoop("Example: {example}")), ["example": "diligencectl status --format '{icon} {task} {remaining}'"])
}

let watchHelp = """
    On a terminal (without --json, --waybar, --format) one line is rewritten in place, with a
    progress bar: ▶ Study ━━━━━━━━━╸──── 12:34. Otherwise a line is printed per change, and only
    when it differs from the previous one. When the daemon goes away,
    watch prints an offline line (waybar class "offline", {state} "offline") and reconnects,
    waiting 0.1 s, then twice as long each time up to 5 s; --no-reconnect exits instead.
    """
