import DiligenceJSON
import DiligenceProtocol
import Testing

@testable import DiligenceClient

/// Issue 13, finding 2, on the client: `task archive`/`unarchive`, `task list --all/--archived`,
/// and a removal prompt that says what it erases and offers archive instead.
@Suite struct ArchiveClientTests {
    @Test(arguments: [
        (["task", "archive", "Med"], #"{"command":"task_archive","task":"Med"}"#),
        (["task", "unarchive", "Meditate"], #"{"command":"task_unarchive","task":"Meditate"}"#),
        (["task", "list", "--all"], #"{"command":"task_list","archived":"included","recent_days":30}"#),
        (["task", "list", "--archived", "--names"], #"{"command":"task_list","archived":"only","recent_days":30}"#),
    ])
    func requests(args: [String], json: String) throws {
        #expect(try requestLine(args) == json)
        _ = try ControlCommand(try parse(args).request)
    }

    @Test func allAndArchivedCannotBeCombined() {
        let out = run(["task", "list", "--all", "--archived"])
        #expect(out.code == 2)
        #expect(out.stderr.contains("--all and --archived cannot be combined"), "\(out)")
    }

    @Test func removeSaysWhatItErasesAndSuggestsArchive() {
        let summary = #"{"ok":true,"result":{"task":"Meditate","sessions":37,"focused_seconds":33300,"removed":false}}"#
        let removed = #"{"ok":true,"result":{"removed":"Meditate","sessions_removed":37,"focused_seconds_removed":33300}}"#
        let daemon = FakeDaemon(responses: [summary, removed])
        let asked = Asked()
        let yes = Terminal(isInteractive: true) {
            asked.prompt = $0
            return "yes\n"
        }
        let out = run(["--socket", daemon.path, "task", "remove", "Meditate"], terminal: yes)
        #expect(
            daemon.requests() == [
                #"{"command":"task_remove","task":"Meditate","dry_run":true}"#,
                #"{"command":"task_remove","task":"Meditate","confirm":true}"#,
            ])
        #expect(
            asked.prompt
                == "Remove task \"Meditate\" and erase its 37 recorded sessions (9h15m)? "
                + "'diligencectl task archive Meditate' hides it and keeps them. [y/N] ")
        #expect(out == RunResult(stdout: "Removed task \"Meditate\" and erased its 37 recorded sessions (9h15m).\n"))
    }

    @Test func archivedTasksAreMarkedInTheTaskList() {
        let list =
            #"{"ok":true,"result":{"tasks":[{"name":"Work","color":"purple","archived":false},"#
            + #"{"name":"Meditate","color":"green","archived":true}]}}"#
        let daemon = FakeDaemon(responses: [list])
        let out = run(["--socket", daemon.path, "task", "list", "--all"])
        _ = daemon.requests()
        let lines = out.stdout.split(separator: "\n")
        #expect(lines.contains { $0.contains("Meditate") && $0.contains("(archived)") }, "\(out)")
        #expect(!lines.contains { $0.contains("Work") && $0.contains("(archived)") }, "\(out)")
    }
}

/// Issue 13, notes and history edit on the client.
@Suite struct NoteClientTests {
    @Test(arguments: [
        (["start", "Study", "--note", "chapter 3"], #"{"command":"start","task":"Study","note":"chapter 3"}"#),
        (["note", "chapter 3, exercises"], #"{"command":"note","text":"chapter 3, exercises"}"#),
        (["note", ""], #"{"command":"note","text":""}"#),
        (
            ["history", "edit", "42", "--start", "09:10", "--end", "yesterday 09:40", "--note", "x"],
            #"{"command":"history_edit","id":42,"start":"09:10","end":"yesterday 09:40","note":"x"}"#
        ),
    ])
    func requests(args: [String], json: String) throws {
        #expect(try requestLine(args) == json)
        _ = try ControlCommand(try parse(args).request)
    }

    @Test func aNoteIsOneLineCheckedBeforeSending() {
        let out = run(["note", "two\nlines"])
        #expect(out.code == 2 && out.stderr.contains("TEXT is one line"), "\(out)")
    }

    @Test func historyEditWithoutAChangeNamesItsOwnFlags() {
        let out = run(["history", "edit", "42"])
        #expect(out.code == 2)
        #expect(out.stderr.contains("--task, --start, --end, --note"), "\(out)")
        #expect(!out.stderr.contains("--work"), "\(out)")
    }

    @Test func theNoteShowsInStatusFormatAndHistory() throws {
        let status = JSON.object([("state", .string("running")), ("task", .string("Study")), ("note", .string("chapter 3"))])
        #expect(try renderTemplate("{task}: {note}", status: status) == "Study: chapter 3")
        let session = JSON.object([
            ("id", .int(7)), ("task", .string("Study")), ("start", .string("2026-03-01T09:00:00+00:00")),
            ("end", .string("2026-03-01T09:25:00+00:00")), ("focused_seconds", .int(1500)), ("pauses", .int(0)),
            ("outcome", .string("completed")), ("note", .string("chapter 3")),
        ])
        let table = show(.object([("sessions", .array([session]))]), for: try parse(["history"]))
        #expect(table.split(separator: "\n").first?.hasSuffix("NOTE") == true, "\(table)")
        #expect(table.contains("chapter 3"), "\(table)")
    }
}

/// Issue 13: `export --with-tasks`, `import --replace-tasks` on the client.
@Suite struct TaskBackupClientTests {
    @Test func exportWithTasksRequest() throws {
        #expect(try requestLine(["export", "--with-tasks"]) == #"{"command":"export","with_tasks":true}"#)
        _ = try ControlCommand(try parse(["export", "--with-tasks"]).request)
    }

    @Test func importSaysWhatItRestored() throws {
        let answer = JSON.object([
            ("imported", .int(3)), ("skipped", .int(0)), ("tasks_added", .int(2)), ("tasks_replaced", .int(0)), ("plans_set", .int(1)),
        ])
        #expect(
            show(answer, for: try parse(["import", "x.jsonl", "--replace-tasks"])) == "Imported 3 sessions; 2 tasks added, 1 plan set.\n")
    }
}
