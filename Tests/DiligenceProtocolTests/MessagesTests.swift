import DiligenceCore
import DiligenceJSON
import DiligenceTestSupport
import DiligenceTime
import Testing

@testable import DiligenceProtocol

@Suite("Requests and responses")
struct MessagesTests {
    // MARK: Request.parse

    func failure(_ line: String) -> ProtocolFailure? {
        if case .failure(let f) = Request.parse(line: Array(line.utf8)) { f } else { nil }
    }

    @Test func parsesCommandArgumentsAndID() throws {
        let r = try request(#"{"command":"start","task":"Writing","id":{"n":[1,"x"]}}"#)
        #expect(r.command == "start")
        #expect(r.id == .object([("n", .array([.int(1), .string("x")]))]))
        #expect(r.body["task"] == .string("Writing"))
        #expect(try request(#"{"command":"status"}"#).id == nil)
        #expect(try request(#"{"command":"status","id":null}"#).id == .null)
    }

    @Test(arguments: [#"[1]"#, #""status""#, "7", "null", "true"])
    func notAnObject(_ line: String) throws {
        let f = try #require(failure(line))
        #expect(f.error.code.rawValue == "not_an_object")
        #expect(f.id == nil)
    }

    @Test func missingCommandEchoesTheID() throws {
        let f = try #require(failure(#"{"id":7,"task":"x"}"#))
        #expect(f.error.code.rawValue == "missing_command")
        #expect(f.id == .int(7))
    }

    @Test(arguments: [#"{"command":5,"id":"a"}"#, #"{"command":null,"id":"a"}"#, #"{"command":["status"],"id":"a"}"#])
    func nonStringCommandIsInvalidArgument(_ line: String) throws {
        let f = try #require(failure(line))
        #expect(f.error.code.rawValue == "invalid_argument")
        #expect(f.id == .string("a"))
    }

    @Test func jsonErrorsPassThroughWithoutAnID() throws {
        let f = try #require(failure(#"{"command":"status","id":7"#))
        #expect(f.error.code.rawValue == "invalid_json")
        #expect(f.id == nil)
        #expect(try #require(failure("ÿ")).error.code.rawValue == "invalid_json")
        #expect(Request.parse(line: [0x7B, 0xFF, 0x7D]).failureCode == "invalid_utf8")
    }

    @Test func builtRequestLine() {
        let r = Request(command: "extend", id: .int(3), arguments: [("duration", .string("5m"))])
        #expect(r.line == #"{"command":"extend","duration":"5m","id":3}"# + "\n")
        #expect(Request(command: "status").line == #"{"command":"status"}"# + "\n")
    }

    // MARK: Response lines

    @Test func okLines() {
        #expect(Response.ok(.object([("state", .string("idle"))]), id: .int(7)) == #"{"ok":true,"result":{"state":"idle"},"id":7}"# + "\n")
        #expect(Response.ok(.null, id: nil) == #"{"ok":true,"result":null}"# + "\n")
        #expect(Response.ok(.object([]), id: .string("a\nb")) == #"{"ok":true,"result":{},"id":"a\nb"}"# + "\n")
    }

    @Test func errorLines() {
        let error = DiligenceError(.unknownTask, "No task named \"X\".\nTasks: Work")
        #expect(
            Response.error(error, id: .int(1))
                == #"{"ok":false,"error":{"code":"unknown_task","message":"No task named \"X\".\nTasks: Work"},"id":1}"# + "\n")
        #expect(Response.error(error, id: nil).filter { $0 == "\n" }.count == 1)
    }

    @Test func eventLines() {
        #expect(Response.event("tick", status: .object([])) == #"{"event":"tick","status":{}}"# + "\n")
        #expect(
            Response.event("session_recorded", status: .null, extra: [("session", .int(1))])
                == #"{"event":"session_recorded","session":1,"status":null}"# + "\n")
    }

    @Test func taskJSON() {
        let config = TaskConfig(
            id: 3, name: "T", color: .cyan, workSeconds: 60, reminderMinute: 545, uuid: "0b7e9a52-4c1d-4f0e-9a3b-5d6c7e8f9012")
        #expect(
            config.json.serialized
                == #"{"id":3,"uuid":"0b7e9a52-4c1d-4f0e-9a3b-5d6c7e8f9012","name":"T","description":"","color":"cyan","work_seconds":60,"short_break_seconds":300,"long_break_seconds":900,"long_break_every":4,"breaks":true,"autostart":"none","focus_mode":false,"goal":0,"reminder":"09:05","sound":null,"archived":false,"away":"default","dnd":"default","mode":"pomodoro","break_ratio":"1/5","min_break_seconds":60,"max_break_seconds":1800,"flow_nudge_seconds":null,"overtime":false,"void_on_interrupt":false}"#
        )
    }

    @Test(
        "a task object's member of the wrong type is refused, naming it (not read as the default)",
        arguments: [
            ("work_seconds", #""1500""#), ("goal", "1.5"), ("breaks", "1"), ("focus_mode", #""no""#), ("archived", #""yes""#),
            ("description", "7"), ("sound", "5"), ("color", "3"), ("autostart", "true"), ("reminder", "545"), ("away", #""sometimes""#),
            ("dnd", #""maybe""#), ("dnd", "true"),
        ])
    func exportedTaskMemberOfTheWrongType(member: String, value: String) throws {
        let json = try JSON.parse(Array(#"{"name":"Write","\#(member)":\#(value)}"#.utf8))
        guard case .failure(let error) = TaskConfig.exported(json) else {
            Issue.record("\(member): \(value) was taken")
            return
        }
        #expect(error.code.rawValue == "invalid_import")
        #expect(error.message.contains("\"\(member)\""), "\(error.message)")
    }

    @Test("a task object without a setting takes the default, unless every setting is required (a journal line)")
    func exportedTaskDefaultsAndCompleteness() throws {
        let short = try JSON.parse(Array(#"{"name":"Write","work_seconds":600,"away":"pause","dnd":"off"}"#.utf8))
        let task = try TaskConfig.exported(short).get()
        #expect(task.workSeconds == 600 && task.goal == TaskConfig(name: "x").goal && task.awayPolicy == .pause)
        #expect(task.doNotDisturb == false)
        guard case .failure(let error) = TaskConfig.exported(short, complete: true) else {
            Issue.record("a task object without its settings was taken as complete")
            return
        }
        #expect(error.message.contains("\"description\""), "\(error.message)")
        let whole = TaskConfig(name: "Write", workSeconds: 600)
        #expect(try TaskConfig.exported(whole.json, complete: true).get().workSeconds == 600)
    }

    @Test func idleStatusJSON() {
        let status = TimerMachine().status(at: Now(steady: 0, wall: 0))
        #expect(
            status.json(todayCompleted: 2).serialized
                == #"{"state":"idle","phase":null,"task":null,"color":null,"round":1,"long_break_every":0,"duration_seconds":0,"remaining_seconds":0,"elapsed_seconds":0,"ends_at":null,"pauses":0,"focus_mode":false,"today_completed":2,"goal":0,"note":null,"presence":"unknown","away_since":null,"away_offered":false,"interruptions":0}"#
        )
    }

    @Test func protocolVersion() {
        #expect(ProtocolInfo.version == 1)
        #expect(ProtocolInfo.maxLineBytes == 65_536)
    }

    @Test("a NUL escaped in a request's string reaches the command intact; a raw NUL byte is refused")
    func nulInRequests() throws {
        let request = try #require(try? Request.parse(line: Array(#"{"command":"task_show","task":"a\u0000b"}"#.utf8)).get())
        #expect(request.body["task"] == .string("a\u{0}b"))
        #expect(Request.parse(line: [0x7B, 0x22, 0x00, 0x22, 0x7D]).failureCode == "invalid_json")
    }
}

extension Result where Failure == ProtocolFailure {
    var failureCode: String? { if case .failure(let f) = self { f.error.code.rawValue } else { nil } }
}

/// Interruptions on the wire: the status counts them, a session lists them, an export's line
/// reads them back, a task says whether an external one voids its work.
@Suite("Messages: interruptions")
struct InterruptionMessagesTests {
    @Test func theStatusCountsThemAndASessionListsThem() throws {
        var machine = TimerMachine()
        let now = Now(steady: 100, wall: 1_795_973_400)
        _ = try machine.start(TaskConfig(name: "Writing"), at: now)
        _ = try machine.interrupt(.external, note: "phone", at: now.adding(60))
        #expect(machine.status(at: now.adding(61)).json(todayCompleted: 0)["interruptions"] == .int(1))
        let ended = try machine.stop(at: now.adding(120))
        guard case .sessionEnded(let session)? = ended.first else {
            Issue.record("no session: \(ended)")
            return
        }
        let list = try #require(session.json["interruptions"]?.arrayValue)
        #expect(list.count == 1)
        #expect(list[0]["kind"] == .string("external") && list[0]["note"] == .string("phone"))
        #expect(list[0]["at"]?.stringValue.flatMap(RFC3339.parse) == now.wall + 60)
        let back = try WorkSession.exported(session.json).get()
        #expect(back.interruptions == session.interruptions)
    }

    @Test func anExportWithoutThemHasNoneAndABadListIsRefused() throws {
        var json = WorkSession(
            taskID: 1, taskName: "W", start: 1_795_973_400, end: 1_795_974_900, plannedSeconds: 1500, focusedSeconds: 1500,
            pauses: 0, outcome: .completed
        ).json
        guard case .object(var members) = json else { return }
        members.removeAll { $0.0 == "interruptions" }
        #expect(try WorkSession.exported(.object(members)).get().interruptions.isEmpty)
        members.append(("interruptions", .array([.object([("kind", .string("lunch")), ("at", .string("x"))])])))
        json = .object(members)
        #expect(errorCode { try WorkSession.exported(json).get() } == "invalid_import")
    }

    @Test func aTaskSaysWhetherAnExternalOneVoidsItsWork() throws {
        let strict = TaskConfig(name: "Strict", voidOnInterrupt: true)
        #expect(strict.json["void_on_interrupt"] == .bool(true))
        #expect(try TaskConfig.exported(strict.json).get().voidOnInterrupt)
        guard case .object(var members) = strict.json else { return }
        // A journal's task line written before interruptions lacks the member: it is not damaged.
        members.removeAll { $0.0 == "void_on_interrupt" }
        #expect(try TaskConfig.exported(.object(members), complete: true).get().voidOnInterrupt == false)
    }
}
