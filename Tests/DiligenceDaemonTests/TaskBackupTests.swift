import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Testing

@testable import DiligenceDaemon

/// Issue 13, finding 8: task definitions (colours, goals) could not be exported at all.
/// `export --with-tasks` writes them and the plan before the sessions; `import` restores them:
/// a missing task is added with its settings, an existing one keeps its own unless
/// `replace_tasks`; importing twice adds nothing.
@Suite struct TaskBackupTests {
    func exportWithTasks(_ d: InProcessDaemon) throws -> String {
        try d.call("export", [("format", .string("jsonl")), ("with_tasks", .bool(true))])["content"]?.stringValue ?? ""
    }

    @Test func anImportRestoresTasksAndPlansAndIsIdempotent() throws {
        try withTimeZone("UTC") {
            let source = try InProcessDaemon()
            defer { source.stop() }
            _ = try source.call(
                "task_add",
                [("name", .string("Piano")), ("color", .string("green")), ("goal", .int(3)), ("reminder", .string("09:30"))])
            _ = try source.call("task_edit", [("task", .string("Study")), ("goal", .int(2))])
            _ = try source.call("task_archive", [("task", .string("Wish"))])
            _ = try source.call("plan_set", [("day", .string("2025-05-02")), ("task", .string("Piano"))])
            try source.addSession("Piano", "2025-05-01 09:00", "2025-05-01 09:25")
            let backup = try exportWithTasks(source)
            let firstLines = backup.split(separator: "\n").prefix(8)
            #expect(firstLines.allSatisfy { $0.hasPrefix(#"{"type":"task""#) }, "tasks first: \(backup)")
            #expect(backup.contains(#"{"type":"plan","day":"2025-05-02","task":"Piano"}"#), "\(backup)")
            #expect(try source.failure("export", [("format", .string("csv")), ("with_tasks", .bool(true))]).code == "invalid_argument")

            let target = try InProcessDaemon()
            defer { target.stop() }
            _ = try target.call("task_edit", [("task", .string("Study")), ("goal", .int(5))])
            let first = try target.call("import", [("content", .string(backup))])
            #expect(first["imported"]?.intValue == 1 && first["tasks_added"]?.intValue == 1, "\(first.serialized)")
            #expect(first["plans_set"]?.intValue == 1 && first["tasks_replaced"]?.intValue == 0, "\(first.serialized)")
            let piano = try target.call("task_show", [("task", .string("Piano"))])
            #expect(piano["color"]?.stringValue == "green" && piano["goal"]?.intValue == 3 && piano["reminder"]?.stringValue == "09:30")
            let sourcePiano = try source.call("task_show", [("task", .string("Piano"))])
            #expect(piano["uuid"] == sourcePiano["uuid"], "the task keeps its UUID")
            #expect(
                try target.call("task_show", [("task", .string("Study"))])["goal"]?.intValue == 5, "an existing task keeps its settings")
            #expect(try target.call("week", [("offset", .int(0))])["days"] != nil)

            let again = try target.call("import", [("content", .string(backup))])
            #expect(again["imported"]?.intValue == 0 && again["skipped"]?.intValue == 1, "\(again.serialized)")
            #expect(again["tasks_added"]?.intValue == 0 && again["plans_set"]?.intValue == 0, "idempotent: \(again.serialized)")
            #expect(try target.call("task_list", [("archived", .string("included"))])["tasks"]?.arrayValue?.count == 8)

            let replaced = try target.call("import", [("content", .string(backup)), ("replace_tasks", .bool(true))])
            #expect(replaced["tasks_replaced"]?.intValue == 8, "\(replaced.serialized)")
            #expect(try target.call("task_show", [("task", .string("Study"))])["goal"]?.intValue == 2)
            #expect(try target.call("task_show", [("task", .string("Wish"))])["archived"]?.boolValue == true)
        }
    }

    /// A replacing import changes the running task's settings as `task_edit` does: the timer's
    /// copy takes them (its colour and goal in `status` at once).
    @Test func aReplacingImportReachesTheRunningTimer() throws {
        let source = try InProcessDaemon()
        defer { source.stop() }
        _ = try source.call("task_edit", [("task", .string("Study")), ("goal", .int(4)), ("color", .string("green"))])
        let backup = try exportWithTasks(source)
        let target = try InProcessDaemon()
        defer { target.stop() }
        _ = try target.call("start", [("task", .string("Study"))])
        #expect(try target.call("status")["color"]?.stringValue != "green")
        let replaced = try target.call("import", [("content", .string(backup)), ("replace_tasks", .bool(true))])
        #expect(replaced["tasks_replaced"]?.intValue == 7, "\(replaced.serialized)")
        let status = try target.call("status")
        #expect(status["color"]?.stringValue == "green" && status["goal"]?.intValue == 4, "\(status.serialized)")
        #expect(status["task"]?.stringValue == "Study" && status["state"]?.stringValue == "running", "\(status.serialized)")
    }

    @Test func aBadTaskLineRefusesTheWholeImport() throws {
        let d = try InProcessDaemon()
        defer { d.stop() }
        let content =
            #"{"type":"task","task":{"name":"Piano","work_seconds":0}}"# + "\n"
            + #"{"type":"task","task":{"name":"Cello"}}"# + "\n"
        let refused = try d.failure("import", [("content", .string(content))])
        #expect(refused.code == "invalid_import" && refused.message.contains("line 1"), "\(refused)")
        #expect(try d.failure("task_show", [("task", .string("Cello"))]).code == "unknown_task", "nothing was imported")
    }
}
