import DiligenceCore
import DiligenceJSON
import DiligenceTestSupport
import Testing

@testable import DiligenceProtocol

/// The command schema: every request is checked against it before a handler runs, and what a
/// handler receives is the typed `ControlCommand` built from it.
@Suite("Command schema")
struct SchemaTests {
    func command(_ line: String) throws -> ControlCommand {
        try ControlCommand(try request(line))
    }

    func code(_ line: String) -> String? {
        errorCode { try command(line) }
    }

    // MARK: The table

    @Test func namesAreUniqueAndFieldsAreUniquePerCommand() {
        let names = CommandSpec.all.map(\.name)
        #expect(Set(names).count == names.count)
        for spec in CommandSpec.all {
            let fields = spec.fields.map(\.name)
            #expect(Set(fields).count == fields.count, "\(spec.name): \(fields)")
            #expect(!fields.contains("command"), "\(spec.name)")
            // `id` is the request id everywhere else; only these read it as a session id.
            #expect(!fields.contains("id") || ["history_remove", "history_edit"].contains(spec.name), "\(spec.name)")
            #expect(!spec.summary.isEmpty && !spec.result.isEmpty, "\(spec.name)")
            for field in spec.fields { #expect(!field.doc.isEmpty, "\(spec.name).\(field.name)") }
        }
    }

    /// Two values of a field's type that pass its check, neither of them its default.
    static func samples(_ field: FieldSpec) -> (JSON, JSON) {
        switch field.type {
        case .text, .note: return (.string("x"), .string("y"))
        case .taskName, .deviceName: return (.string("Name A"), .string("Name B"))
        case .integer(let range):
            let low = range.lowerBound == 0 ? 1 : range.lowerBound
            return (.int(low == -100_000 ? 3 : low), .int(low == -100_000 ? 4 : low + 1))
        case .boolean:
            let fallback = field.presence == .defaulted(.bool(true))
            return (.bool(!fallback), .bool(!fallback))
        case .duration: return (.int(60), .int(120))
        case .choice(let words, _):
            let others = words.filter { field.presence != .defaulted(.string($0)) }
            // Two words, one the default (`interrupt`'s kind): the other one twice.
            return (.string(others[0]), .string(others[min(1, others.count - 1)]))
        case .timeOfDay: return (.string("07:30"), .string("08:45"))
        case .nameOrOff: return (.string("rain"), .string("waves"))
        case .breakRule: return (.string("1/4"), .string("<25m=5m,else=15m"))
        case .durationOrOff: return (.int(600), .int(900))
        }
    }

    /// Every declared field reaches the typed command: setting it (or changing it) changes what
    /// the handler gets. A field declared but never read would fail here.
    @Test func everyFieldChangesTheTypedCommand() throws {
        for spec in CommandSpec.all {
            var base: [(String, JSON)] = []
            for field in spec.fields where field.isRequired { base.append((field.name, Self.samples(field).0)) }
            let plain = try spec.command(Request(command: spec.name, arguments: base).body)
            for field in spec.fields {
                let (first, second) = Self.samples(field)
                var members = base.filter { $0.0 != field.name }
                if field.isRequired {
                    members.append((field.name, second))
                } else {
                    members.append((field.name, first))
                }
                let changed = try spec.command(Request(command: spec.name, arguments: members).body)
                #expect(changed != plain, "\(spec.name).\(field.name) does not reach the typed command")
            }
        }
    }

    @Test func commandsWithoutFieldsTakeNone() throws {
        #expect(try command(#"{"command":"status"}"#) == .status)
        #expect(code(#"{"command":"status","task":"Work"}"#) == "invalid_argument")
        #expect(try command(#"{"command":"status","id":5}"#) == .status)
    }

    @Test func unknownCommandListsTheCommands() throws {
        let error = try #require(throwing { try command(#"{"command":"stauts"}"#) })
        #expect(error.code.rawValue == "unknown_command")
        #expect(error.message.contains("status, start, pause"))
    }

    @Test func unknownMemberIsRefusedNamingIt() throws {
        let error = try #require(throwing { try command(#"{"command":"task_add","name":"X","wrok":30}"#) })
        #expect(error.code.rawValue == "invalid_argument")
        #expect(error.message.contains("\"wrok\""))
        #expect(error.message.contains("\"work\""))
    }

    @Test func missingRequiredFieldAndNullAreTheSame() {
        #expect(code(#"{"command":"task_show"}"#) == "missing_argument")
        #expect(code(#"{"command":"task_show","task":null}"#) == "missing_argument")
    }

    @Test func defaultsApplyWhenAbsentOrNull() throws {
        #expect(try command(#"{"command":"stats"}"#) == .stats(period: .today, offset: 0, task: nil, date: nil, device: nil))
        #expect(
            try command(#"{"command":"stats","offset":null,"period":null}"#)
                == .stats(period: .today, offset: 0, task: nil, date: nil, device: nil))
        #expect(try command(#"{"command":"extend"}"#) == .extend(seconds: 300))
        #expect(
            try command(#"{"command":"export"}"#)
                == .export(format: .jsonl, task: nil, since: nil, until: nil, withTasks: false, device: nil))
    }

    // MARK: Integers

    @Test(arguments: [
        ("5", 5), ("5.0", 5), ("-0", 0), ("-0.0", 0), ("-1", -1), ("100000", 100_000), ("-100000", -100_000), ("1e3", 1000),
    ])
    func integersInRange(_ value: String, _ expected: Int) throws {
        #expect(try command(#"{"command":"week","offset":"# + value + "}") == .week(offset: expected, device: nil))
    }

    /// Every boundary the fuzzer uses: each is refused with `out_of_range` naming the field and range.
    @Test(arguments: [
        "100001", "-100001", "1099511627776", "-1099511627776", "2147483648", "-2147483649", "9007199254740993",
        "9223372036854775807", "-9223372036854775808", "9223372036854775808.0", "1e308", "-1e308", "1e19",
    ])
    func integersOutOfRange(_ value: String) throws {
        let error = try #require(throwing { try command(#"{"command":"week","offset":"# + value + "}") })
        #expect(error.code.rawValue == "out_of_range", "\(value): \(error)")
        #expect(error.message.contains("\"offset\""), "\(error.message)")
        #expect(error.message.contains("-100000 and 100000"), "\(error.message)")
    }

    @Test(arguments: ["1.5", "\"5\"", "true", "[1]", "{}", "-0.5"])
    func nonIntegersAreInvalidArguments(_ value: String) throws {
        let error = try #require(throwing { try command(#"{"command":"week","offset":"# + value + "}") })
        #expect(error.code.rawValue == "invalid_argument", "\(value): \(error)")
        #expect(error.message.contains("\"offset\""))
    }

    @Test func sessionIDsTakeTheWholePositiveInt64Range() throws {
        #expect(try command(#"{"command":"history_remove","id":9223372036854775807}"#) == .historyRemove(id: .max))
        #expect(code(#"{"command":"history_remove","id":0}"#) == "out_of_range")
        #expect(code(#"{"command":"history_remove","id":-1}"#) == "out_of_range")
    }

    // MARK: Durations

    @Test(arguments: [
        (#"300"#, 300), (#""5m""#, 300), (#""25""#, 1500), (#""1h30m""#, 5400), (#""90s""#, 90), ("1", 1),
        ("86400", 86_400), ("60.0", 60), (#""24h""#, 86_400),
    ])
    func durations(_ value: String, _ seconds: Int) throws {
        #expect(try command(#"{"command":"extend","duration":"# + value + "}") == .extend(seconds: seconds))
    }

    @Test(arguments: [#""abc""#, #""5x""#, #""""#, #""-5m""#])
    func malformedDurations(_ value: String) {
        #expect(code(#"{"command":"extend","duration":"# + value + "}") == "invalid_duration")
    }

    @Test(arguments: ["0", "-1", "86401", #""25h""#, #""0s""#, "1e308", "9223372036854775807"])
    func durationsOutOfRange(_ value: String) throws {
        let error = try #require(throwing { try command(#"{"command":"extend","duration":"# + value + "}") })
        #expect(error.code.rawValue == "out_of_range", "\(value): \(error)")
        #expect(error.message.contains("1s and 24h"), "\(error.message)")
    }

    @Test(arguments: ["1.5", "true", "[]"])
    func durationsOfTheWrongType(_ value: String) {
        #expect(code(#"{"command":"extend","duration":"# + value + "}") == "invalid_argument")
    }

    // MARK: Text, names, choices, settings

    @Test func textLengthIsBounded() throws {
        let long = String(repeating: "d", count: 1001)
        let error = try #require(throwing { try command(#"{"command":"task_edit","task":"T","description":""# + long + #""}"#) })
        #expect(error.code.rawValue == "out_of_range")
        #expect(error.message.contains("\"description\" holds at most 1000 characters"))
        let fits = String(repeating: "d", count: 1000)
        guard case .taskEdit(_, _, let changes) = try command(#"{"command":"task_edit","task":"T","description":""# + fits + #""}"#) else {
            Issue.record("not task_edit")
            return
        }
        #expect(changes.description == fits)
    }

    @Test func newNamesAreNormalizedBeforeTheHandlerSeesThem() throws {
        #expect(try command(#"{"command":"task_add","name":"  Cafe\u0301 "}"#) == .taskAdd(name: "Café", changes: TaskChanges()))
        #expect(code(#"{"command":"task_add","name":"Work\u200b"}"#) == "invalid_name")
        #expect(code(#"{"command":"task_edit","task":"Work","new_name":"\u202eWork"}"#) == "invalid_name")
        // A reference to an existing task is not a new name: it is looked up as given.
        #expect(try command(#"{"command":"task_show","task":"Work\u200b"}"#) == .taskShow(task: "Work\u{200B}"))
    }

    @Test(arguments: [
        (#"{"command":"stats","period":"decade"}"#, "invalid_period"),
        (#"{"command":"export","format":"xml"}"#, "unknown_format"),
        (#"{"command":"task_add","name":"X","color":"pink"}"#, "invalid_value"),
        (#"{"command":"task_add","name":"X","autostart":"sometimes"}"#, "invalid_value"),
        (#"{"command":"task_add","name":"X","color":3}"#, "invalid_argument"),
        (#"{"command":"task_add","name":"X","reminder":"7:30"}"#, "invalid_value"),
        (#"{"command":"task_add","name":"X","reminder":"25:00"}"#, "invalid_value"),
        (#"{"command":"task_add","name":"X","reminder":730}"#, "invalid_argument"),
        (#"{"command":"task_add","name":"X","sound":5}"#, "invalid_argument"),
        (#"{"command":"task_add","name":"X","sound":""}"#, "invalid_value"),
        (#"{"command":"task_add","name":"X","description":["x"]}"#, "invalid_argument"),
        (#"{"command":"task_add","name":"X","long_break_every":"4"}"#, "invalid_argument"),
        (#"{"command":"task_add","name":"X","long_break_every":101}"#, "out_of_range"),
        (#"{"command":"task_add","name":"X","goal":1.5}"#, "invalid_argument"),
        (#"{"command":"task_add","name":"X","goal":1001}"#, "out_of_range"),
        (#"{"command":"task_add","name":"X","breaks":"on"}"#, "invalid_argument"),
        (#"{"command":"task_add","name":"X","focus_mode":1}"#, "invalid_argument"),
        (#"{"command":"task_add","name":"X","work_seconds":-5}"#, "out_of_range"),
        (#"{"command":"task_add","name":"X","work":"soon"}"#, "invalid_duration"),
        (#"{"command":"history","limit":0}"#, "out_of_range"),
        (#"{"command":"history_add","task":"W","start":"09:00","end":"10:00","pauses":-1}"#, "out_of_range"),
        (#"{"command":"import","content":"","import_id":0}"#, "out_of_range"),
    ])
    func badFields(_ line: String, _ expected: String) {
        #expect(code(line) == expected, "\(line)")
    }

    @Test func taskChangesCarryEveryField() throws {
        let line =
            #"{"command":"task_edit","task":"T","description":"Deep","color":"green","work":"50m","short_break":"7","#
            + #""long_break":1200,"long_break_every":2,"breaks":false,"autostart":"all","focus_mode":true,"goal":8,"#
            + #""reminder":"07:30","sound":"rain"}"#
        guard case .taskEdit(let task, let newName, let changes) = try command(line) else {
            Issue.record("not task_edit")
            return
        }
        #expect(task == "T" && newName == nil)
        var config = TaskConfig(name: "T")
        changes.apply(to: &config)
        #expect(
            config
                == TaskConfig(
                    name: "T", description: "Deep", color: .green, workSeconds: 3000, shortBreakSeconds: 420,
                    longBreakSeconds: 1200, longBreakEvery: 2, breaks: false, autostart: .all, focusMode: true,
                    goal: 8, reminderMinute: 450, sound: "rain"))
    }

    @Test func secondsSpellingWinsOverTheShortOne() throws {
        guard case .taskAdd(_, let changes) = try command(#"{"command":"task_add","name":"T","work_seconds":900,"work":"50m"}"#) else {
            Issue.record("not task_add")
            return
        }
        #expect(changes.workSeconds == 900)
    }

    @Test(arguments: [#""reminder":"off""#, #""reminder":null"#])
    func reminderOff(_ field: String) throws {
        guard case .taskEdit(_, _, let changes) = try command(#"{"command":"task_edit","task":"T","# + field + "}") else {
            Issue.record("not task_edit")
            return
        }
        var config = TaskConfig(name: "T", reminderMinute: 450)
        changes.apply(to: &config)
        #expect(config.reminderMinute == nil)
    }

    @Test(arguments: [#""sound":"off""#, #""sound":null"#])
    func soundOff(_ field: String) throws {
        guard case .taskEdit(_, _, let changes) = try command(#"{"command":"task_edit","task":"T","# + field + "}") else {
            Issue.record("not task_edit")
            return
        }
        var config = TaskConfig(name: "T", sound: "rain")
        changes.apply(to: &config)
        #expect(config.sound == nil)
    }

    @Test(arguments: [("on", true), ("off", false), ("default", nil)] as [(String, Bool?)])
    func dndOnOffOrDefault(_ word: String, _ expected: Bool?) throws {
        guard case .taskEdit(_, _, let changes) = try command(#"{"command":"task_edit","task":"T","dnd":"\#(word)"}"#) else {
            Issue.record("not task_edit")
            return
        }
        var config = TaskConfig(name: "T", doNotDisturb: !(expected ?? true))
        changes.apply(to: &config)
        #expect(config.doNotDisturb == expected)
    }

    @Test func noTaskFieldsChangeNothing() throws {
        guard case .taskEdit(_, _, let changes) = try command(#"{"command":"task_edit","task":"T"}"#) else {
            Issue.record("not task_edit")
            return
        }
        let config = TaskConfig(name: "T", color: .red, workSeconds: 60, reminderMinute: 30, sound: "rain")
        var copy = config
        changes.apply(to: &copy)
        #expect(copy == config)
    }
}

/// The DiligenceError `body` throws, nil when it does not throw.
func throwing<T>(_ body: () throws -> T) -> DiligenceError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error as? DiligenceError
    }
}
