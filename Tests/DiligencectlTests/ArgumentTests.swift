import DiligenceCore
import DiligenceProtocol
import Testing

@testable import DiligenceClient

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct ArgumentTests {
    @Test(arguments: [
        (["start"], "start"), (["start", "Work"], "start"), (["pause"], "pause"), (["resume"], "resume"),
        (["toggle"], "toggle"), (["stop"], "stop"), (["skip"], "skip"), (["extend"], "extend"),
        (["extend", "10m"], "extend"), (["status"], "status"), (["status", "--json"], "status"),
        (["status", "--format", "{task}"], "status"), (["task", "list"], "task_list"),
        (["task", "list", "--json"], "task_list"), (["task", "show", "Work"], "task_show"),
        (["task", "show", "Work", "--json"], "task_show"), (["task", "add", "Read"], "task_add"),
        (["task", "edit", "Read", "--goal", "3"], "task_edit"), (["task", "remove", "Read", "--yes"], "task_remove"),
        (["version"], "version"),
    ])
    func everyCommandParses(args: [String], wire: String) throws {
        #expect(try parse(args).command.wire == wire)
    }

    @Test func socketBeforeTheCommand() throws {
        guard case .run(_, let socket) = try parseArguments(["--socket", "/x/s.sock", "status"], defaultSocket: nowhere) else {
            Issue.record("not a run")
            return
        }
        #expect(socket == "/x/s.sock")
        guard case .run(_, let socket2) = try parseArguments(["--socket=/y.sock", "status"], defaultSocket: nowhere) else {
            Issue.record("not a run")
            return
        }
        #expect(socket2 == "/y.sock")
    }

    @Test func flagEqualsValueMeansTheSame() throws {
        let spaced = try requestLine(["task", "add", "Read", "--work", "30m", "--breaks", "off", "--color", "red"])
        let joined = try requestLine(["task", "add", "--work=30m", "Read", "--breaks=off", "--color=red"])
        #expect(spaced == joined)
        #expect(try parse(["status", "--format={icon} {task}"]).options["format"] == .string("{icon} {task}"))
        // A value may contain '=' and start with '-'.
        #expect(try parse(["task", "add", "X", "--description=a=b"]).options["description"] == .string("a=b"))
        #expect(try parse(["task", "add", "X", "--description", "-dash"]).options["description"] == .string("-dash"))
    }

    /// The daemon opens a backup's FILE from a working directory of its own: the client sends it whole.
    @Test func aRelativeBackupPathIsSentAbsolute() throws {
        let cwd = try #require(
            getcwd(nil, 0).map { pointer in
                defer { free(pointer) }
                return String(cString: pointer)
            })
        #expect(try parse(["backup", "copy.sqlite3"]).arguments == [.string(cwd + "/copy.sqlite3")])
        #expect(try parse(["backup", "./copy.sqlite3"]).arguments == [.string(cwd + "/copy.sqlite3")])
        #expect(try parse(["backup", "/srv/copy.sqlite3"]).arguments == [.string("/srv/copy.sqlite3")])
        #expect(usageError(["backup"])?.message.contains("needs FILE") == true)
    }

    @Test func doubleDashEndsOptions() throws {
        #expect(try parse(["task", "add", "--", "--weird"]).arguments == [.string("--weird")])
    }

    @Test func helpEverywhere() throws {
        for args in [["--help"], ["-h"], ["help"]] {
            let out = run(args)
            #expect(out.code == 0)
            #expect(out.stdout.hasPrefix("diligencectl — "))
            #expect(out.stdout.contains("task add NAME"))
        }
        for command in Command.all {
            for args in [command.words + ["--help"], command.words + ["-h"], ["help"] + command.words] {
                let out = run(args)
                #expect(out.code == 0, "\(args)")
                #expect(out.stdout.hasPrefix("Usage: diligencectl \(command.name)"), "\(args)")
                #expect(out.stderr.isEmpty)
            }
        }
        #expect(run(["task", "--help"]).stdout.contains("task remove TASK [--yes]"))
        #expect(run(["help", "task"]).stdout.contains("task list [OPTIONS]"))
        // --help wins over other mistakes in the same command line.
        #expect(run(["task", "add", "--work", "5m", "--help"]).code == 0)
        #expect(run(["status", "--help"]).stdout.contains("{long_break_every}"))
        #expect(run(["status", "--help"]).stdout.contains("⏸"))
    }

    @Test func clientVersion() {
        let out = run(["--version"])
        #expect(out == RunResult(stdout: "diligencectl \(ProtocolInfo.release) (protocol 1)\n"))
    }

    // MARK: Usage errors: exit 2, a message, a hint, and no daemon contacted

    @Test(arguments: [
        ([], "no command given"),
        (["frobnicate"], "unknown command \"frobnicate\""),
        (["--bogus", "status"], "unknown option --bogus"),
        (["--socket"], "--socket needs a path"),
        (["--socket="], "--socket needs a path"),
        (["status", "--socket", "/x"], "unknown option --socket for 'status'"),
        (["status", "--jsn"], "unknown option --jsn for 'status'"),
        (["status", "-x"], "unknown option -x"),
        (["status", "--json=yes"], "--json takes no value"),
        (["status", "--json", "--json"], "--json is given twice"),
        (["status", "--json", "--format", "{task}"], "--json and --format cannot be combined"),
        (["status", "--format"], "--format needs a value (TEMPLATE)"),
        (["status", "--format", "{bogus}"], "unknown placeholder {bogus}"),
        (["status", "extra"], "unexpected argument \"extra\""),
        (["pause", "now"], "unexpected argument \"now\""),
        (["start", "A", "B"], "unexpected argument \"B\""),
        (["extend", "5 minutes"], "DURATION expects a duration such as 90s, 25m, 1h or 1h30m"),
        (["extend", "-5m"], "DURATION expects a duration"),
        (["task"], "task needs a subcommand: list, show, add, edit, archive, unarchive, remove"),
        (["task", "delete", "X"], "unknown task subcommand \"delete\""),
        (["task", "show"], "'task show' needs TASK"),
        (["task", "add"], "'task add' needs NAME"),
        (["task", "add", "X", "--work", "25x"], "--work expects a duration"),
        (["task", "add", "X", "--short-break=1d"], "--short-break expects a duration"),
        (["task", "add", "X", "--long-break", ""], "--long-break expects a duration"),
        (["task", "add", "X", "--long-break-every", "-1"], "--long-break-every must be between 0 and 100; got -1"),
        (["task", "add", "X", "--long-break-every", "x"], "--long-break-every expects a whole number"),
        (["task", "add", "X", "--work", "25h"], "--work must be between 1s and 24h"),
        (["week", "--offset", "1099511627776"], "--offset must be between -100000 and 100000"),
        (["task", "add", "Work\u{200B}"], "cannot contain U+200B (ZERO WIDTH SPACE)"),
        (["task", "add", "X", "--goal", "many"], "--goal expects a whole number"),
        (["task", "add", "X", "--breaks", "maybe"], "--breaks expects on or off"),
        (["task", "add", "X", "--focus-mode=1"], "--focus-mode expects on or off"),
        (["task", "add", "X", "--autostart", "some"], "--autostart expects one of none, breaks, work, all"),
        (["task", "add", "X", "--color", "pink"], "--color expects one of red, orange"),
        (["task", "add", "X", "--reminder", "25:00"], "--reminder expects a time HH:MM"),
        (["task", "add", "X", "--sound="], "--sound expects a name or off"),
        (["task", "add", "X", "--name", "Y"], "unknown option --name for 'task add'"),
        (["task", "add", "X", "--work"], "--work needs a value (D)"),
        (["task", "edit", "X"], "nothing to change"),
        (["task", "remove"], "'task remove' needs TASK"),
        (["task", "remove", "X", "--yes=no"], "--yes takes no value"),
        (["help", "nothing"], "no help for \"nothing\""),
        (["version", "--json"], "unknown option --json for 'version'"),
    ])
    func usageErrors(args: [String], message: String) throws {
        let error = try #require(usageError(args), "\(args) parsed")
        #expect(error.message.contains(message), "\(error.message)")
        let out = run(args)
        #expect(out.code == 2)
        #expect(out.stdout.isEmpty)
        #expect(out.stderr.hasPrefix("diligencectl: "))
        #expect(out.stderr.contains("--help' for usage."))
        // Parse errors never get as far as the socket.
        #expect(!out.stderr.contains(nowhere))
    }

    @Test func usageHintNamesTheCommand() {
        #expect(run(["task", "add", "X", "--goal", "x"]).stderr.hasSuffix("Run 'diligencectl task add --help' for usage.\n"))
        #expect(run(["bogus"]).stderr.hasSuffix("Run 'diligencectl --help' for usage.\n"))
    }

    @Test func durationErrorSaysWhatWasExpected() {
        #expect(run(["extend", "soon"]).stderr.contains(DurationText.expected))
    }
}

/// Issue 32, item 16: examples that fail or do nothing, on|off options described as "false: …",
/// protocol names in help, option lines of ~200 columns.
@Suite struct HelpTextTests {
    func help(_ command: Command, columns: Int = 80) -> String {
        runClient(command.words + ["--help"], environment: ["DILIGENCE_SOCKET": nowhere, "COLUMNS": "\(columns)"], terminal: .none).stdout
    }

    @Test func theNamedExamplesDoSomething() throws {
        let examples = Dictionary(uniqueKeysWithValues: Command.all.map { ($0.name, $0.exampleLine) })
        #expect(examples["sync enable"] == "diligencectl sync enable ~/Sync/diligence --name laptop")
        #expect(examples["plan set"]?.contains("--offset 0") == false, "\(examples["plan set"] ?? "")")
        #expect(examples["week"]?.contains("--offset 0") == false, "\(examples["week"] ?? "")")
    }

    @Test func noProtocolWordsInHelp() {
        let wires = Set(Command.all.map(\.wire).filter { $0.contains("_") })
        for command in Command.all {
            let text = help(command)
            for wire in wires { #expect(!text.contains(wire), "\(command.name) --help names \(wire)") }
            for line in text.split(separator: "\n") where line.contains(" on|off ") {
                #expect(!line.contains(" true: ") && !line.contains(" false: ") && !line.contains("(new task: true)"), "\(line)")
            }
        }
    }

    @Test func noProtocolWordsInTheDaemonsMessages() throws {
        let start = try #require(Command.find(["start"])?.0)
        let said = start.namingFlags("Meditate is archived; bring it back with `diligencectl task unarchive Meditate` (task_unarchive).")
        #expect(said == "Meditate is archived; bring it back with `diligencectl task unarchive Meditate`.")
    }

    @Test(arguments: [80, 120])
    func optionLinesFitTheWidth(columns: Int) {
        for command in Command.all {
            let lines = help(command, columns: columns).split(separator: "\n", omittingEmptySubsequences: false)
            guard let start = lines.firstIndex(of: "Options:") else { continue }
            for line in lines[start...].prefix(while: { !$0.isEmpty }) {
                #expect(String(line).displayWidth <= columns, "\(command.name) at \(columns): \(line)")
            }
        }
    }
}
