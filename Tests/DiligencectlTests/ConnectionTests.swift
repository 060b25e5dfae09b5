import DiligenceProtocol
import Testing

@testable import DiligenceClient

/// The client against a socket: nobody there, or a fake daemon with canned answers.
@Suite struct ConnectionTests {
    @Test func unreachableSocketIsExit3AndNamesThePath() {
        let path = "/tmp/diligencectl-test-nobody-here/diligenced.sock"
        for args in [["status"], ["start", "Work"], ["task", "list"], ["task", "remove", "X", "--yes"]] {
            let out = run(["--socket", path] + args)
            #expect(out.code == 3, "\(args)")
            #expect(out.stdout.isEmpty)
            #expect(out.stderr.contains(path))
            #expect(out.stderr.contains("diligenced"))
            #expect(out.stderr.contains(StartHint.current().text))
        }
    }

    @Test func environmentChoosesTheSocket() {
        let out = runClient(["status"], environment: ["DILIGENCE_SOCKET": "/tmp/diligencectl-env/x.sock"], terminal: .none)
        #expect(out.code == 3)
        #expect(out.stderr.contains("/tmp/diligencectl-env/x.sock"))
    }

    @Test func versionPrintsTheClientLineEvenWhenUnreachable() {
        let out = run(["version"])
        #expect(out.code == 3)
        #expect(out.stdout == "diligencectl \(ProtocolInfo.release) (protocol 1)\n")
        #expect(out.stderr.contains(nowhere))
    }

    @Test func roundTrip() {
        let daemon = FakeDaemon(responses: [
            #"{"ok":true,"result":{"state":"running","phase":"work","task":"Work","round":1,"long_break_every":4,"duration_seconds":1500,"remaining_seconds":1500,"elapsed_seconds":0}}"#
        ])
        let out = run(["--socket", daemon.path, "start", "Work"])
        #expect(daemon.requests() == [#"{"command":"start","task":"Work"}"#])
        #expect(out == RunResult(stdout: "Work · work · 25:00 left · round 1/4\n"))
    }

    @Test func daemonErrorIsExit1WithItsMessage() {
        let daemon = FakeDaemon(responses: [
            #"{"ok":false,"error":{"code":"not_running","message":"Nothing is running."}}"#
        ])
        let out = run(["--socket=\(daemon.path)", "pause"])
        #expect(daemon.requests() == [#"{"command":"pause"}"#])
        #expect(out == RunResult(stderr: "diligencectl: Nothing is running.\n", code: 1))
    }

    @Test func brokenConnectionIsExit1() {
        let daemon = FakeDaemon(responses: []) // reads the request, then hangs up
        let out = run(["--socket", daemon.path, "status"])
        _ = daemon.requests()
        #expect(out.code == 1)
        #expect(out.stderr.hasPrefix("diligencectl: the daemon closed the connection"))
    }

    @Test func versionWithTheDaemon() {
        let daemon = FakeDaemon(responses: [#"{"ok":true,"result":{"protocol":1,"version":"0.1.0"}}"#])
        let out = run(["--socket", daemon.path, "version"])
        #expect(out == RunResult(stdout: "diligencectl \(ProtocolInfo.release) (protocol 1)\ndiligenced 0.1.0 (protocol 1)\n"))
    }

    @Test func removeAsksOnATerminal() {
        let summary = #"{"ok":true,"result":{"task":"Reading","sessions":2,"focused_seconds":3000,"removed":false}}"#
        let removed = #"{"ok":true,"result":{"removed":"Reading","sessions_removed":2,"focused_seconds_removed":3000}}"#
        let daemon = FakeDaemon(responses: [summary, removed])
        let asked = Asked()
        let yes = Terminal(isInteractive: true) {
            asked.prompt = $0
            return "y\n"
        }
        let out = run(["--socket", daemon.path, "task", "remove", "Reading"], terminal: yes)
        #expect(
            daemon.requests() == [
                #"{"command":"task_remove","task":"Reading","dry_run":true}"#,
                #"{"command":"task_remove","task":"Reading","confirm":true}"#,
            ])
        #expect(asked.prompt?.hasPrefix("Remove task \"Reading\" and erase its 2 recorded sessions (50m)? ") == true)
        #expect(out == RunResult(stdout: "Removed task \"Reading\" and erased its 2 recorded sessions (50m).\n"))
    }

    @Test func removeDeclined() {
        let daemon = FakeDaemon(responses: [#"{"ok":true,"result":{"task":"Reading","sessions":0,"focused_seconds":0,"removed":false}}"#])
        let no = Terminal(isInteractive: true) { _ in "" }
        let out = run(["--socket", daemon.path, "task", "remove", "Reading"], terminal: no)
        #expect(daemon.requests() == [#"{"command":"task_remove","task":"Reading","dry_run":true}"#])
        #expect(out == RunResult(stderr: "diligencectl: nothing removed.\n", code: 1))
    }

    @Test func removeWithoutATerminalNeedsYes() {
        let out = run(["task", "remove", "Reading"], terminal: .none)
        #expect(out.code == 2)
        #expect(out.stderr.contains("pass --yes"))
        #expect(!out.stderr.contains(nowhere))
    }
}

/// What the fake terminal was asked.
final class Asked: @unchecked Sendable {
    var prompt: String?
}
