import DiligenceProtocol
import Testing

@testable import DiligenceClient

@Suite struct RequestTests {
    @Test(arguments: [
        (["start"], #"{"command":"start"}"#),
        (["start", "Deep work"], #"{"command":"start","task":"Deep work"}"#),
        (["pause"], #"{"command":"pause"}"#),
        (["resume"], #"{"command":"resume"}"#),
        (["toggle"], #"{"command":"toggle"}"#),
        (["stop"], #"{"command":"stop"}"#),
        (["skip"], #"{"command":"skip"}"#),
        (["extend"], #"{"command":"extend"}"#),
        (["extend", "90s"], #"{"command":"extend","duration":90}"#),
        (["extend", "10"], #"{"command":"extend","duration":600}"#),
        (["extend", "1h30m"], #"{"command":"extend","duration":5400}"#),
        (["status"], #"{"command":"status"}"#),
        (["status", "--json"], #"{"command":"status"}"#),
        (["status", "--format", "{task}"], #"{"command":"status"}"#),
        (["version"], #"{"command":"version"}"#),
        (["task", "list", "--json"], #"{"command":"task_list","recent_days":30}"#),
        (["task", "show", "work", "--json"], #"{"command":"task_show","task":"work"}"#),
        (["task", "add", "Read"], #"{"command":"task_add","name":"Read"}"#),
        (["task", "remove", "Read", "--yes"], #"{"command":"task_remove","task":"Read","confirm":true}"#),
        (["task", "edit", "Read", "--name", "Reading"], #"{"command":"task_edit","task":"Read","new_name":"Reading"}"#),
        (
            ["task", "edit", "Read", "--reminder", "off", "--sound=off"],
            #"{"command":"task_edit","task":"Read","reminder":null,"sound":null}"#
        ),
    ])
    func exactJSON(args: [String], json: String) throws {
        #expect(try requestLine(args) == json)
    }

    @Test func everyTaskFieldInTableOrder() throws {
        let args = [
            "--description", "Books \"and\" papers", "--goal=4", "--sound", "rain", "--reminder", "09:30",
            "--color", "green", "--focus-mode", "on", "--autostart", "breaks", "--breaks", "off",
            "--long-break-every", "0", "--long-break", "20m", "--short-break", "90s", "--work", "1h",
        ]
        let fields =
            #""work":3600,"short_break":90,"long_break":1200,"long_break_every":0,"breaks":false,"#
            + #""autostart":"breaks","focus_mode":true,"color":"green","goal":4,"reminder":"09:30","sound":"rain","#
            + #""description":"Books \"and\" papers""#
        #expect(try requestLine(["task", "add", "Read"] + args) == #"{"command":"task_add","name":"Read","# + fields + "}")
        #expect(
            try requestLine(["task", "edit", "Read"] + args + ["--name", "Study"])
                == #"{"command":"task_edit","task":"Read","# + fields + #","new_name":"Study"}"#)
    }

    @Test func requestIsOneLine() throws {
        let line = try parse(["task", "add", "X", "--description", "two\nlines"]).request.line
        #expect(line.filter { $0 == "\n" }.count == 1)
        #expect(line.hasSuffix("\n"))
    }
}

/// The client's command table takes every value-carrying option and argument from the
/// protocol's schema: its type, range and help are the daemon's, and what it sends passes the
/// daemon's check.
@Suite struct SchemaLinkTests {
    @Test func everyOptionAndArgumentWithAKeyIsAFieldOfItsWireCommand() throws {
        for command in Command.all {
            let spec = try #require(CommandSpec.named(command.wire), "\(command.name): no protocol command \(command.wire)")
            for option in command.options {
                guard let key = option.key else { continue }
                guard case .field(let field) = option.kind else {
                    Issue.record("\(command.name) --\(option.name): \(key) is not a field of \(command.wire)")
                    continue
                }
                #expect(field == spec.field(key), "\(command.name) --\(option.name)")
            }
            for argument in command.arguments {
                guard let key = argument.key else { continue }
                guard case .field(let field) = argument.kind else {
                    Issue.record("\(command.name) \(argument.name): \(key) is not a field of \(command.wire)")
                    continue
                }
                #expect(field == spec.field(key), "\(command.name) \(argument.name)")
                #expect(argument.required == field.isRequired, "\(command.name) \(argument.name)")
            }
            for (key, _) in command.fixed { #expect(spec.field(key) != nil, "\(command.name): fixed \(key)") }
            // Every required field of the wire command is given by an argument or a fixed member.
            for field in spec.fields where field.isRequired {
                let given =
                    command.arguments.contains { $0.key == field.name } || command.fixed.contains { $0.0 == field.name }
                    || command.wire == "import"
                    // `history edit ID --task T`: the one change it can make must be given.
                    || (command.needsAChange && command.options.compactMap(\.key) == [field.name])
                #expect(given, "\(command.name) never sends the required \(field.name)")
            }
        }
    }

    @Test(arguments: [
        ["stats", "week", "--offset", "-3", "--task", "Work"], ["week", "--offset", "2"], ["plan", "set", "mon", "Work", "--offset", "1"],
        ["history", "--since", "2026-01-01", "--limit", "5"], ["history", "add", "Work", "09:00", "09:25", "--pauses", "2"],
        ["history", "remove", "3"], ["history", "edit", "3", "--task", "Study"], ["export", "--format", "csv"],
        ["task", "edit", "Work", "--reminder", "off", "--sound", "rain", "--work", "1h", "--name", "Deep"], ["extend", "90s"],
    ])
    func requestsPassTheDaemonsCheck(args: [String]) throws {
        let request = try parse(args).request
        _ = try ControlCommand(request)
    }

    @Test func helpComesFromTheSchema() {
        let help = run(["task", "add", "--help"]).stdout
        #expect(help.contains("work phase length (new task: 25m)"), "\(help)")
        // Wrapped at the width (80 for a pipe): compared as words.
        let stats = run(["stats", "--help"]).stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(stats.contains("periods from this one: -1 the previous, 1 the next (default 0)"), "\(stats)")
    }
}
