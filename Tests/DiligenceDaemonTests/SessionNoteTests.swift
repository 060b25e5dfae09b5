import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Testing

@testable import DiligenceDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 13, "Notes per session": `start --note`, `note` while work runs, kept per session and
/// shown in history, status, every export; an import keeps it. One line, at most 500 characters.
@Suite struct DaemonSessionNoteTests {
    @Test func aNoteGoesWithTheWorkSessionIntoHistoryStatusExportsAndImport() throws {
        let d = try InProcessDaemon(config: "[timer]\nmin_session = 0\n")
        defer { d.stop() }
        let started = try d.call("start", [("task", .string("Study")), ("note", .string("  chapter 3 "))])
        #expect(started["note"]?.stringValue == "chapter 3", "trimmed, in the status: \(started.serialized)")
        #expect(try d.call("note", [("text", .string("chapter 3, exercises"))])["note"]?.stringValue == "chapter 3, exercises")
        usleep(20_000)
        #expect(try d.call("stop")["note"]?.isNull == true, "the note went with the session")
        let sessions = try d.call("history")["sessions"]?.arrayValue ?? []
        #expect(sessions.map { $0["note"]?.stringValue } == ["chapter 3, exercises"], "\(sessions.map(\.serialized))")

        let jsonl = try d.call("export", [("format", .string("jsonl"))])["content"]?.stringValue ?? ""
        #expect(jsonl.contains(#""note":"chapter 3, exercises""#), "\(jsonl)")
        let csv = try d.call("export", [("format", .string("csv"))])["content"]?.stringValue ?? ""
        #expect(csv.contains(#","chapter 3, exercises""#), "\(csv)")
        let ics = try d.call("export", [("format", .string("ics"))])["content"]?.stringValue ?? ""
        #expect(ics.contains(#"DESCRIPTION:chapter 3\, exercises\n"#), "\(ics)")

        let other = try InProcessDaemon()
        defer { other.stop() }
        _ = try other.call("import", [("content", .string(jsonl))])
        #expect(try other.call("history")["sessions"]?.arrayValue?.first?["note"]?.stringValue == "chapter 3, exercises")
    }

    @Test func aNoteNeedsWorkAndIsOneBoundedLine() throws {
        let d = try InProcessDaemon()
        defer { d.stop() }
        #expect(try d.failure("note", [("text", .string("x"))]).code == "not_running")
        _ = try d.call("start", [("task", .string("Study"))])
        let control = try d.failure("note", [("text", .string("two\nlines"))])
        #expect(control.code == "invalid_value" && control.message.contains("control"), "\(control)")
        let long = try d.failure("note", [("text", .string(String(repeating: "é", count: 501)))])
        #expect(long.code == "out_of_range" && long.message.contains("500"), "\(long)")
        _ = try d.call("note", [("text", .string("kept"))])
        #expect(try d.call("note", [("text", .string(""))])["note"]?.isNull == true, "an empty note removes it")
    }

    @Test func historyEditChangesStartEndTaskAndNoteUnderTheRulesOfHistoryAdd() throws {
        try withTimeZone("UTC") {
            let d = try InProcessDaemon()
            defer { d.stop() }
            try d.addSession("Work", "2025-05-01 09:00", "2025-05-01 09:25")
            try d.addSession("Work", "2025-05-01 10:00", "2025-05-01 10:25")
            let sessions = try d.call("history")["sessions"]?.arrayValue ?? []
            let id = sessions[0]["id"]?.intValue ?? 0
            let uuid = sessions[0]["uuid"]?.stringValue

            func edit(_ changes: [(String, JSON)]) throws -> JSON { try d.call("history_edit", [("id", .int(id))] + changes) }
            func refused(_ changes: [(String, JSON)]) throws -> (code: String, message: String) {
                try d.failure("history_edit", [("id", .int(id))] + changes)
            }
            let moved = try edit([("start", .string("2025-05-01 09:10")), ("note", .string("warm-up"))])
            #expect(moved["start"]?.stringValue == "2025-05-01T09:10:00+00:00", "\(moved.serialized)")
            #expect(moved["focused_seconds"]?.intValue == 900, "a session entered by hand keeps filling its span")
            #expect(moved["note"]?.stringValue == "warm-up" && moved["id"]?.intValue == id && moved["uuid"]?.stringValue == uuid)
            #expect(try edit([("task", .string("stu"))])["task"]?.stringValue == "Study")

            let equal = try refused([("end", .string("2025-05-01 09:10"))])
            #expect(equal.code == "invalid_session" && equal.message.contains("lasts no time"), "\(equal)")
            #expect(!equal.message.contains("before it starts"))
            let backwards = try refused([("end", .string("2025-05-01 09:05"))])
            #expect(backwards.message.contains("before it starts"), "\(backwards)")
            let overlapping = try refused([("end", .string("2025-05-01 10:05"))])
            #expect(overlapping.code == "overlapping_session", "\(overlapping)")
            let future = try refused([("end", .string("2099-01-01 10:00"))])
            #expect(future.code == "invalid_session", "\(future)")
            let nothing = try refused([])
            #expect(nothing.code == "missing_argument" && nothing.message.contains("--start"), "\(nothing)")
            #expect(try d.failure("history_edit", [("id", .int(999)), ("note", .string("x"))]).code == "unknown_session")

            let after = try d.call("history")["sessions"]?.arrayValue ?? []
            #expect(after.count == 2)
            #expect(after[0]["end"]?.stringValue == "2025-05-01T09:25:00+00:00", "a refused edit changes nothing: \(after[0].serialized)")
            #expect(try edit([("note", .string(""))])["note"]?.isNull == true)
        }
    }
}
