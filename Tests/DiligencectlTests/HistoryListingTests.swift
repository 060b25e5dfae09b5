import DiligenceJSON
import DiligenceProtocol
import Testing

@testable import DiligenceClient

/// `history` (issue 32 item 20, issue 28): a screenful on a terminal by default, with how to
/// see more; everything else (`--all`, a range, a pipe, `--json`) streamed, and `--json`
/// always whole.
@Suite struct HistoryListingTests {
    static func session(_ id: Int, task: String = "Work") -> JSON {
        let day = 10 + id % 18
        return .object([
            ("id", .int(Int64(id))), ("uuid", .string("u\(id)")), ("task", .string(task)),
            ("start", .string("2026-03-\(day)T09:00:00Z")), ("end", .string("2026-03-\(day)T09:25:00Z")),
            ("planned_seconds", .int(1500)), ("focused_seconds", .int(1500)), ("pauses", .int(0)),
            ("outcome", .string("completed")), ("note", .null), ("interruptions", .array([])), ("device", .null),
        ])
    }

    static func whole(_ ids: ClosedRange<Int>) -> String {
        JSON.object([("ok", .bool(true)), ("result", .object([("sessions", .array(ids.map { session($0) }))]))]).serialized
    }

    /// A streamed answer: a line per session, then the count.
    static func streamed(_ ids: ClosedRange<Int>) -> String {
        ids.map { JSON.object([("session", session($0))]).serialized }.joined(separator: "\n") + "\n"
            + #"{"ok":true,"result":{"count":\#(ids.count)}}"#
    }

    /// What `daemon` received; when the client never connected (a usage error), an empty
    /// connection of the test's own ends the fake's wait instead of hanging the test.
    static func requests(of daemon: FakeDaemon, after out: RunResult) -> [String] {
        if out.code == ExitCode.usage { _ = try? ControlConnection(path: daemon.path) }
        return daemon.requests()
    }

    static let terminal = Terminal(isInteractive: false, ask: { _ in nil }, outputIsTerminal: true, windowColumns: 80, windowRows: 10)

    @Test func onATerminalTheDefaultIsTheNewestScreenfulAndHowToSeeMore() throws {
        // 10 rows: the header, 7 sessions, the hint and the prompt's line; one more is asked
        // for to know whether older ones exist.
        let daemon = FakeDaemon(responses: [Self.whole(1...8)])
        let out = runClient(["history"], environment: ["DILIGENCE_SOCKET": daemon.path], terminal: Self.terminal)
        #expect(try daemon.requests() == [requestLine(["history", "--limit", "8"])])
        let lines = out.stdout.split(separator: "\n")
        #expect(out.code == 0 && lines.count == 9, "\(out)")
        #expect(lines.first?.hasPrefix("ID") == true && lines[1].hasPrefix(" 2  ") && lines[7].hasPrefix(" 8  "), "\(out.stdout)")
        #expect(lines.last == "Older sessions not shown: --all lists every one, or --limit N, --since DATE.")
        // All of them fit: no hint.
        let few = FakeDaemon(responses: [Self.whole(1...3)])
        let all = runClient(["history", "--task", "Work"], environment: ["DILIGENCE_SOCKET": few.path], terminal: Self.terminal)
        _ = few.requests()
        #expect(all.stdout.split(separator: "\n").count == 4 && !all.stdout.contains("not shown"), "\(all)")
        // LINES, as a shell exports it, counts before the window's size.
        let lined = FakeDaemon(responses: [Self.whole(1...3)])
        _ = runClient(["history"], environment: ["DILIGENCE_SOCKET": lined.path, "LINES": "40"], terminal: Self.terminal)
        #expect(try lined.requests() == [requestLine(["history", "--limit", "38"])])
    }

    @Test func allARangeAndAPipeAreStreamedWhole() throws {
        for (arguments, terminal) in [
            (["history", "--all"], Self.terminal), (["history", "--since", "monday"], Self.terminal), (["history"], .none),
        ] {
            let daemon = FakeDaemon(responses: [Self.streamed(1...3)])
            let out = runClient(arguments, environment: ["DILIGENCE_SOCKET": daemon.path], terminal: terminal)
            let sent = Self.requests(of: daemon, after: out)
            #expect(sent.count == 1 && sent[0].contains(#""stream":true"#) && !sent[0].contains("limit"), "\(arguments): \(sent)")
            let lines = out.stdout.split(separator: "\n")
            #expect(out.code == 0 && lines.count == 4 && lines[3].hasPrefix(" 3  ") && !out.stdout.contains("not shown"), "\(out)")
        }
        #expect(usageError(["history", "--all", "--limit", "5"]) != nil)
    }

    /// `--json` is a machine contract: every session, the same object as before, however many.
    @Test func jsonIsTheWholeObjectAsBeforeStreamedOrNot() throws {
        let object = JSON.object([("sessions", .array((1...3).map { Self.session($0) }))]).serialized + "\n"
        for terminal in [Self.terminal, .none] {
            let daemon = FakeDaemon(responses: [Self.streamed(1...3)])
            let out = runClient(["history", "--json"], environment: ["DILIGENCE_SOCKET": daemon.path], terminal: terminal)
            #expect(daemon.requests().first?.contains(#""stream":true"#) == true)
            #expect(out.stdout == object && out.code == 0, "\(out)")
        }
        // A daemon from before streams refuses the member: asked again the old way.
        let old = FakeDaemon(responses: [
            #"{"ok":false,"error":{"code":"invalid_argument","message":"history takes no \"stream\"; it takes task, since, until, limit, device"}}"#,
            Self.whole(1...3),
        ])
        let out = runClient(["history", "--json"], environment: ["DILIGENCE_SOCKET": old.path], terminal: .none)
        #expect(old.requests().count == 2 && out.stdout == object, "\(out)")
        // An error after some lines is the answer: no partial object is printed as whole.
        let broken = FakeDaemon(responses: [
            JSON.object([("session", Self.session(1))]).serialized + "\n"
                + #"{"ok":false,"error":{"code":"storage_error","message":"disk I/O error"}}"#
        ])
        let failed = runClient(["history", "--json"], environment: ["DILIGENCE_SOCKET": broken.path], terminal: .none)
        _ = broken.requests()
        #expect(failed.code == ExitCode.daemonError && failed.stderr.contains("disk I/O error"), "\(failed)")
    }

    /// Streamed, the table comes a block at a time: a later block widens a column but never
    /// repeats the header, unless it needs a column the earlier ones did not.
    @Test func aStreamedTableWidensAndAddsColumnsAsItGoes() {
        var table = HistoryTable()
        let first = table.rows([Self.session(7)]).split(separator: "\n")
        let wider = table.rows([Self.session(12345)]).split(separator: "\n")
        var other = Self.session(12346)
        if case .object(var members) = other {
            members = members.map { $0.0 == "device" ? ("device", .string("0123456789abcdef")) : $0 }
            other = .object(members)
        }
        let third = table.rows([other]).split(separator: "\n")
        #expect(first.count == 2 && first[0].hasPrefix("ID  DATE") && first[1].hasPrefix(" 7  "), "\(first)")
        #expect(wider.count == 1 && wider[0].hasPrefix("12345  2026-"), "\(wider)")
        #expect(
            third.count == 2 && third[0].hasPrefix("   ID  DATE") && third[0].contains("DEVICE") && third[1].contains("01234567"),
            "\(third)")
    }
}
