import DiligenceProtocol
import Testing

@testable import diligencectl

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
