import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Testing

@testable import DiligenceDaemon

/// Issue 13, finding 2: `task remove` erased a task's whole history behind a prompt that did not
/// say how much. A task can be archived instead (hidden from lists and `start`, its statistics
/// kept and marked), and a removal says what it erases before and after.
@Suite struct DaemonArchiveTests {
    /// The names `task_list` answers with `archived` (nil: the default).
    func listed(_ d: InProcessDaemon, _ archived: String? = nil) throws -> [String] {
        let arguments: [(String, JSON)] = archived.map { [("archived", .string($0))] } ?? []
        return try d.call("task_list", arguments)["tasks"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
    }

    @Test func anArchivedTaskIsHiddenRefusedByStartAndKeepsItsStatistics() throws {
        try withTimeZone("UTC") {
            let d = try InProcessDaemon()
            defer { d.stop() }
            try d.addSession("Meditate", "2025-05-01 09:00", "2025-05-01 09:25")
            let watcher = try d.connect()
            try watcher.write(#"{"command":"watch"}"# + "\n")
            _ = try watcher.readJSONLine()
            _ = try watcher.readJSONLine()

            let archived = try d.call("task_archive", [("task", .string("med"))])
            #expect(archived["name"]?.stringValue == "Meditate")
            #expect(archived["archived"]?.boolValue == true, "\(archived.serialized)")
            let event = try watcher.readJSONLine()
            #expect(event["event"]?.stringValue == "task_changed" && event["change"]?.stringValue == "archived", "\(event.serialized)")

            #expect(try !listed(d).contains("Meditate"))
            #expect(try listed(d, "included").contains("Meditate"))
            #expect(try listed(d, "only") == ["Meditate"])
            #expect(try d.call("task_show", [("task", .string("Meditate"))])["archived"]?.boolValue == true)

            let refused = try d.failure("start", [("task", .string("Meditate"))])
            #expect(refused.code == "task_archived", "\(refused)")
            #expect(refused.message.contains("task_unarchive"), "\(refused)")
            // A prefix that begins an archived and an active name means the active one.
            _ = try d.call("task_add", [("name", .string("Mend"))])
            #expect(try d.call("start", [("task", .string("Me"))])["task"]?.stringValue == "Mend")
            _ = try d.call("stop")
            #expect(try d.failure("plan_set", [("day", .string("2025-05-02")), ("task", .string("Meditate"))]).code == "task_archived")

            let all = try d.call("stats", [("period", .string("all"))])
            #expect(all["completed"]?.intValue == 1, "statistics are kept")
            let row = all["tasks"]?.arrayValue?.first { $0["task"]?.stringValue == "Meditate" }
            #expect(row?["archived"]?.boolValue == true, "\(all["tasks"]?.serialized ?? "")")
            #expect(row?["completed"]?.intValue == 1)
            #expect(try d.call("history", [("task", .string("Meditate"))])["sessions"]?.arrayValue?.count == 1)

            let back = try d.call("task_unarchive", [("task", .string("Meditate"))])
            #expect(back["archived"]?.boolValue == false)
            var changes: [String] = []
            while changes.last != "unarchived" && changes.count < 50 {
                let line = try watcher.readJSONLine()
                if line["event"]?.stringValue == "task_changed" { changes.append(line["change"]?.stringValue ?? "") }
            }
            #expect(changes == ["added", "unarchived"])
            #expect(try listed(d).contains("Meditate"))
            #expect(try d.call("start", [("task", .string("Meditate"))])["task"]?.stringValue == "Meditate")
        }
    }

    @Test func theLastActiveTaskCannotBeArchived() throws {
        let d = try InProcessDaemon()
        defer { d.stop() }
        for name in ["Work", "Study", "Exercise", "Meditate", "Wish", "Daily"] {
            _ = try d.call("task_archive", [("task", .string(name))])
        }
        #expect(try d.failure("task_archive", [("task", .string("Errands"))]).code == "last_task")
        #expect(try d.call("start")["task"]?.stringValue == "Errands", "start without a task skips archived ones")
    }

    @Test func removalSaysWhatItErasesAndSuggestsArchive() throws {
        try withTimeZone("UTC") {
            let d = try InProcessDaemon()
            defer { d.stop() }
            try d.addSession("Meditate", "2025-05-01 09:00", "2025-05-01 09:25")
            try d.addSession("Meditate", "2025-05-02 09:00", "2025-05-02 10:00")
            let refused = try d.failure("task_remove", [("task", .string("Meditate"))])
            #expect(refused.code == "confirmation_required")
            #expect(refused.message.contains("2 recorded sessions (1h25m)"), "\(refused)")
            #expect(refused.message.contains("task_archive"), "\(refused)")

            let summary = try d.call("task_remove", [("task", .string("Meditate")), ("dry_run", .bool(true))])
            #expect(summary["task"]?.stringValue == "Meditate", "\(summary.serialized)")
            #expect(summary["sessions"]?.intValue == 2)
            #expect(summary["focused_seconds"]?.intValue == 5100)
            #expect(summary["removed"]?.boolValue == false)
            #expect(try d.call("history")["sessions"]?.arrayValue?.count == 2, "a dry run removes nothing")

            let removed = try d.call("task_remove", [("task", .string("Meditate")), ("confirm", .bool(true))])
            #expect(removed["sessions_removed"]?.intValue == 2)
            #expect(removed["focused_seconds_removed"]?.intValue == 5100, "\(removed.serialized)")
        }
    }
}
