import DiligenceCore
import Testing
import DiligenceTestSupport
@testable import DiligenceProtocol

@Suite("Requests and responses")
struct MessagesTests {
    // MARK: Request.parse

    func failure(_ line: String) -> ProtocolFailure? {
        if case let .failure(f) = Request.parse(line: Array(line.utf8)) { f } else { nil }
    }

    @Test func parsesCommandArgumentsAndID() throws {
        let r = try request(#"{"command":"start","task":"Writing","id":{"n":[1,"x"]}}"#)
        #expect(r.command == "start")
        #expect(r.id == .object([("n", .array([.int(1), .string("x")]))]))
        #expect(try r.string("task") == "Writing")
        #expect(try request(#"{"command":"status"}"#).id == nil)
        #expect(try request(#"{"command":"status","id":null}"#).id == .null)
    }

    @Test(arguments: [#"[1]"#, #""status""#, "7", "null", "true"])
    func notAnObject(_ line: String) throws {
        let f = try #require(failure(line))
        #expect(f.error.code == "not_an_object")
        #expect(f.id == nil)
    }

    @Test func missingCommandEchoesTheID() throws {
        let f = try #require(failure(#"{"id":7,"task":"x"}"#))
        #expect(f.error.code == "missing_command")
        #expect(f.id == .int(7))
    }

    @Test(arguments: [#"{"command":5,"id":"a"}"#, #"{"command":null,"id":"a"}"#, #"{"command":["status"],"id":"a"}"#])
    func nonStringCommandIsInvalidArgument(_ line: String) throws {
        let f = try #require(failure(line))
        #expect(f.error.code == "invalid_argument")
        #expect(f.id == .string("a"))
    }

    @Test func jsonErrorsPassThroughWithoutAnID() throws {
        let f = try #require(failure(#"{"command":"status","id":7"#))
        #expect(f.error.code == "invalid_json")
        #expect(f.id == nil)
        #expect(try #require(failure("ÿ")).error.code == "invalid_json")
        #expect(Request.parse(line: [0x7B, 0xFF, 0x7D]).failureCode == "invalid_utf8")
    }

    @Test func builtRequestLine() {
        let r = Request(command: "extend", id: .int(3), arguments: [("duration", .string("5m"))])
        #expect(r.line == #"{"command":"extend","duration":"5m","id":3}"# + "\n")
        #expect(Request(command: "status").line == #"{"command":"status"}"# + "\n")
    }

    // MARK: Typed arguments

    @Test func stringArguments() throws {
        let r = try request(#"{"command":"x","s":"v","n":null,"i":5}"#)
        #expect(try r.string("s") == "v")
        #expect(try r.string("n") == nil)
        #expect(try r.string("absent") == nil)
        #expect(errorCode { try r.string("i") } == "invalid_argument")
        #expect(try r.requiredString("s") == "v")
        #expect(errorCode { try r.requiredString("absent") } == "missing_argument")
        #expect(errorCode { try r.requiredString("n") } == "missing_argument")
        #expect(errorCode { try r.requiredString("i") } == "invalid_argument")
    }

    @Test func boolArguments() throws {
        let r = try request(#"{"command":"x","t":true,"f":false,"s":"true","i":1}"#)
        #expect(try r.bool("t") == true)
        #expect(try r.bool("f") == false)
        #expect(try r.bool("absent") == nil)
        #expect(errorCode { try r.bool("s") } == "invalid_argument")
        #expect(errorCode { try r.bool("i") } == "invalid_argument")
    }

    @Test func intArguments() throws {
        let r = try request(#"{"command":"x","i":5,"d":5.0,"h":5.5,"s":"5","big":2199023255553,"neg":-3}"#)
        #expect(try r.int("i") == 5)
        #expect(try r.int("d") == 5)
        #expect(try r.int("neg") == -3)
        #expect(try r.int("absent") == nil)
        for key in ["h", "s", "big"] {
            #expect(errorCode { try r.int(key) } == "invalid_argument", "\(key)")
        }
    }

    @Test func intArgumentsAtTheEdgesOfInt64() throws {
        // Int64.min has no positive counterpart: checking its size must not trap.
        let r = try request(#"{"command":"x","min":-9223372036854775808,"max":9223372036854775807,"edge":-1099511627776}"#)
        #expect(try r.int("edge") == -1_099_511_627_776)
        for key in ["min", "max"] {
            #expect(errorCode { try r.int(key) } == "invalid_argument", "\(key)")
        }
    }

    @Test(arguments: [
        (#"300"#, 300), (#""5m""#, 300), (#""25""#, 1500), (#""1h30m""#, 5400), (#""90s""#, 90), ("0", 0),
        ("604800", 604_800), ("60.0", 60),
    ])
    func durationArguments(_ value: String, _ seconds: Int) throws {
        let r = try request(#"{"command":"extend","duration":"# + value + "}")
        #expect(try r.duration("duration") == seconds)
    }

    @Test(arguments: [#""abc""#, #""5x""#, #""""#, #""-5m""#, "-1", "604801", "1.5", #""169h""#])
    func badDurations(_ value: String) throws {
        let r = try request(#"{"command":"extend","duration":"# + value + "}")
        #expect(errorCode { try r.duration("duration") } == "invalid_duration")
    }

    @Test func absentDurationIsNil() throws {
        let r = try request(#"{"command":"extend","duration":null}"#)
        #expect(try r.duration("duration") == nil)
        #expect(try r.duration("absent") == nil)
    }

    // MARK: TaskConfig.apply

    func applied(_ fields: String, to config: TaskConfig = TaskConfig(name: "T")) throws -> TaskConfig {
        var copy = config
        try copy.apply(try request(#"{"command":"task_edit","task":"T""# + (fields.isEmpty ? "" : "," + fields) + "}"))
        return copy
    }

    func applyError(_ fields: String) -> String? {
        errorCode { try applied(fields) }
    }

    @Test func applyWithoutFieldsChangesNothing() throws {
        let config = TaskConfig(name: "T", color: .red, workSeconds: 60, reminderMinute: 30, sound: "rain")
        #expect(try applied("", to: config) == config)
    }

    @Test func applyEachField() throws {
        #expect(try applied(#""description":"Deep work""#).description == "Deep work")
        #expect(try applied(#""color":"green""#).color == .green)
        #expect(try applied(#""work":"50m""#).workSeconds == 3000)
        #expect(try applied(#""work":600"#).workSeconds == 600)
        #expect(try applied(#""work_seconds":900"#).workSeconds == 900)
        #expect(try applied(#""short_break":"7""#).shortBreakSeconds == 420)
        #expect(try applied(#""short_break_seconds":240"#).shortBreakSeconds == 240)
        #expect(try applied(#""long_break":"20m""#).longBreakSeconds == 1200)
        #expect(try applied(#""long_break_seconds":1800"#).longBreakSeconds == 1800)
        #expect(try applied(#""long_break_every":2"#).longBreakEvery == 2)
        #expect(try applied(#""breaks":false"#).breaks == false)
        #expect(try applied(#""autostart":"all""#).autostart == .all)
        #expect(try applied(#""focus_mode":true"#).focusMode == true)
        #expect(try applied(#""goal":8"#).goal == 8)
        #expect(try applied(#""reminder":"07:30""#).reminderMinute == 450)
        #expect(try applied(#""sound":"rain""#).sound == "rain")
    }

    @Test(arguments: [#""reminder":"off""#, #""reminder":null"#])
    func reminderOff(_ field: String) throws {
        #expect(try applied(field, to: TaskConfig(name: "T", reminderMinute: 450)).reminderMinute == nil)
    }

    @Test(arguments: [#""sound":"off""#, #""sound":null"#])
    func soundOff(_ field: String) throws {
        #expect(try applied(field, to: TaskConfig(name: "T", sound: "rain")).sound == nil)
    }

    @Test(arguments: [
        (#""color":"pink""#, "invalid_value"), (#""color":3"#, "invalid_argument"),
        (#""autostart":"sometimes""#, "invalid_value"), (#""autostart":true"#, "invalid_argument"),
        (#""reminder":"7:30""#, "invalid_value"), (#""reminder":"25:00""#, "invalid_value"), (#""reminder":730"#, "invalid_argument"),
        (#""sound":5"#, "invalid_argument"), (#""description":["x"]"#, "invalid_argument"),
        (#""work":"soon""#, "invalid_duration"), (#""work_seconds":-5"#, "invalid_duration"),
        (#""long_break_every":"4""#, "invalid_argument"), (#""goal":1.5"#, "invalid_argument"),
        (#""breaks":"on""#, "invalid_argument"), (#""focus_mode":1"#, "invalid_argument"),
    ])
    func applyRefusesBadFields(_ field: String, _ code: String) {
        #expect(applyError(field) == code)
    }

    // MARK: Response lines

    @Test func okLines() {
        #expect(Response.ok(.object([("state", .string("idle"))]), id: .int(7)) == #"{"ok":true,"result":{"state":"idle"},"id":7}"# + "\n")
        #expect(Response.ok(.null, id: nil) == #"{"ok":true,"result":null}"# + "\n")
        #expect(Response.ok(.object([]), id: .string("a\nb")) == #"{"ok":true,"result":{},"id":"a\nb"}"# + "\n")
    }

    @Test func errorLines() {
        let error = DiligenceError("unknown_task", "No task named \"X\".\nTasks: Work")
        #expect(Response.error(error, id: .int(1)) ==
            #"{"ok":false,"error":{"code":"unknown_task","message":"No task named \"X\".\nTasks: Work"},"id":1}"# + "\n")
        #expect(Response.error(error, id: nil).filter { $0 == "\n" }.count == 1)
    }

    @Test func eventLines() {
        #expect(Response.event("tick", status: .object([])) == #"{"event":"tick","status":{}}"# + "\n")
        #expect(Response.event("session_recorded", status: .null, extra: [("session", .int(1))]) ==
            #"{"event":"session_recorded","session":1,"status":null}"# + "\n")
    }

    @Test func taskJSON() {
        let config = TaskConfig(id: 3, name: "T", color: .cyan, workSeconds: 60, reminderMinute: 545)
        #expect(config.json.serialized == #"{"id":3,"name":"T","description":"","color":"cyan","work_seconds":60,"short_break_seconds":300,"long_break_seconds":900,"long_break_every":4,"breaks":true,"autostart":"none","focus_mode":false,"goal":0,"reminder":"09:05","sound":null}"#)
    }

    @Test func idleStatusJSON() {
        let status = TimerMachine().status(at: Now(steady: 0, wall: 0))
        #expect(status.json(todayCompleted: 2).serialized == #"{"state":"idle","phase":null,"task":null,"color":null,"round":1,"long_break_every":0,"duration_seconds":0,"remaining_seconds":0,"elapsed_seconds":0,"ends_at":null,"pauses":0,"focus_mode":false,"today_completed":2,"goal":0}"#)
    }

    @Test func protocolVersion() {
        #expect(ProtocolInfo.version == 1)
        #expect(ProtocolInfo.maxLineBytes == 65_536)
    }
}

extension Result where Failure == ProtocolFailure {
    var failureCode: String? { if case let .failure(f) = self { f.error.code } else { nil } }
}
