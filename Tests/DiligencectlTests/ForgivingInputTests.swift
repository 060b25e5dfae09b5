import DiligenceCore
import DiligenceProtocol
import Testing

@testable import DiligenceClient

/// Issue 13, "forgiving input" and "errors are inconsistent": what a newcomer's mistakes get.
@Suite struct ForgivingInputTests {
    /// A mistyped command, subcommand, option, global option or help topic names the one meant.
    @Test(arguments: [
        (["strat"], "Did you mean start?"),
        (["stauts"], "Did you mean status or stats?"),
        (["task", "lst"], "Did you mean list?"),
        (["task", "add", "Read", "--wrok", "30m"], "Did you mean --work?"),
        (["history", "--sinse", "yesterday"], "Did you mean --since?"),
        (["--sockt", "/x", "status"], "Did you mean --socket?"),
        (["help", "strat"], "Did you mean start?"),
    ])
    func didYouMean(args: [String], hint: String) {
        let out = run(args)
        #expect(out.code == ExitCode.usage, "\(args)")
        #expect(out.stderr.contains(hint), "\(args): \(out.stderr)")
    }

    /// Nothing close: no guess.
    @Test func noSuggestionForSomethingElse() {
        let out = run(["xylophone"])
        #expect(out.code == ExitCode.usage && !out.stderr.contains("Did you mean"), "\(out)")
    }

    @Test func helpOfHelpIsHelp() {
        for args in [["help", "--help"], ["help", "-h"]] {
            let out = run(args)
            #expect(out.code == 0 && out.stdout.hasPrefix("diligencectl — "), "\(args): \(out)")
        }
    }

    /// `--work 169h` and `--work 0` are the same mistake: the same exit, the flag, the range, what was typed.
    @Test func aDurationOutOfRangeIsOneMistake() {
        let long = run(["task", "edit", "Study", "--work", "169h"])
        let zero = run(["task", "edit", "Study", "--work", "0"])
        for (out, typed) in [(long, "\"169h\""), (zero, "\"0\"")] {
            #expect(out.code == ExitCode.usage, "\(out)")
            #expect(out.stderr.hasPrefix("diligencectl: --work must be between 1s and 24h; got \(typed)."), "\(out.stderr)")
        }
    }

    /// `--limit 0` and `--limit -1` break the same rule and are told so alike.
    @Test func limitZeroAndMinusOneSayTheSameRule() {
        let zero = run(["history", "--limit", "0"])
        let negative = run(["history", "--limit", "-1"])
        #expect(zero.code == ExitCode.usage && negative.code == ExitCode.usage)
        #expect(zero.stderr.hasPrefix("diligencectl: --limit must be between 1 and "), "\(zero.stderr)")
        #expect(negative.stderr.hasPrefix("diligencectl: --limit must be between 1 and "), "\(negative.stderr)")
    }

    /// A command that needs a change suggests one of its own options, never another command's.
    @Test func nothingToChangeSuggestsTheCommandsOwnOption() {
        let edit = run(["history", "edit", "7"])
        #expect(edit.code == ExitCode.usage)
        #expect(edit.stderr.contains("--task") && !edit.stderr.contains("--work"), "\(edit.stderr)")
        let task = run(["task", "edit", "Study"])
        #expect(task.stderr.contains("--work 25m"), "\(task.stderr)")
    }

    /// `-3d` is a day, not an option: as an argument and as an option's value.
    @Test func relativeDaysAreValues() throws {
        #expect(try parse(["plan", "set", "-1d", "Study"]).arguments == [.string("-1d"), .string("Study")])
        #expect(try parse(["history", "--since", "-3d"]).options["since"] == .string("-3d"))
        #expect(try parse(["stats", "day", "-2d"]).arguments == [.string("day"), .string("-2d")])
    }

    /// Every command's help ends with an example, and the example is a command line that parses.
    @Test func everyHelpHasAnExampleThatParses() throws {
        for command in Command.all {
            let help = run(command.words + ["--help"]).stdout
            let line = try #require(help.split(separator: "\n").last { $0.hasPrefix("Example: ") }, "\(command.name)")
            let example = String(line.dropFirst("Example: ".count))
            #expect(example.hasPrefix("diligencectl \(command.name)"), "\(example)")
            let words = shellWords(String(example.dropFirst("diligencectl ".count)).split(separator: ">").first ?? "")
            do {
                guard case .run(let parsed, _) = try parseArguments(words, defaultSocket: nowhere) else {
                    Issue.record("\(example) is not a command")
                    continue
                }
                #expect(parsed.command.name == command.name, "\(example)")
            } catch {
                Issue.record("\(command.name): \(example): \(error.message)")
            }
        }
    }

    /// A mistake the daemon finds (a bad date, an unknown task) is named as typed and exits 2,
    /// like one the client finds; what the daemon cannot do exits 1.
    @Test func daemonFoundMistakesNameTheFlagAndExitTwo() {
        let date = FakeDaemon(responses: [
            #"{"ok":false,"error":{"code":"invalid_date","message":"\"since\": \"soon\" is not a day or a time."}}"#
        ])
        let out = runClient(["history", "--since", "soon"], environment: ["DILIGENCE_SOCKET": date.path], terminal: .none)
        #expect(out.code == ExitCode.usage, "\(out)")
        #expect(out.stderr.hasPrefix("diligencectl: --since: \"soon\" is not a day or a time."), "\(out.stderr)")
        _ = date.requests()

        let argument = FakeDaemon(responses: [
            #"{"ok":false,"error":{"code":"invalid_date","message":"\"start\": \"25:00\" is not a time."}}"#
        ])
        let added = runClient(
            ["history", "add", "Study", "25:00", "26:00"], environment: ["DILIGENCE_SOCKET": argument.path], terminal: .none)
        #expect(added.code == ExitCode.usage && added.stderr.hasPrefix("diligencectl: START: \"25:00\""), "\(added)")
        _ = argument.requests()

        let idle = FakeDaemon(responses: [#"{"ok":false,"error":{"code":"not_running","message":"Nothing is running."}}"#])
        let paused = runClient(["pause"], environment: ["DILIGENCE_SOCKET": idle.path], terminal: .none)
        #expect(paused.code == ExitCode.daemonError && paused.stderr == "diligencectl: Nothing is running.\n", "\(paused)")
        _ = idle.requests()
    }
}

/// `a 'b c' d` → [a, b c, d]: enough of the shell for the help examples.
func shellWords(_ text: Substring) -> [String] {
    var words: [String] = []
    var word = ""
    var quoted = false
    var inWord = false
    for ch in text {
        if ch == "'" {
            quoted.toggle()
            inWord = true
        } else if ch == " " && !quoted {
            if inWord { words.append(word) }
            word = ""
            inWord = false
        } else {
            word.append(ch)
            inWord = true
        }
    }
    if inWord { words.append(word) }
    return words
}
