import DiligenceJSON
import DiligenceProtocol
import Testing

@testable import DiligenceClient

@Suite struct OutputTests {
    // MARK: Status line

    @Test func statusLineForEachState() {
        #expect(
            statusLine(status(state: "running", phase: "work", task: "Work", round: 2, remaining: 754))
                == "Work · work · 12:34 left · round 2/4")
        #expect(
            statusLine(status(state: "running", phase: "short_break", task: "Work", round: 2, remaining: 299))
                == "Work · short break · 4:59 left · round 2/4")
        #expect(
            statusLine(status(state: "running", phase: "long_break", task: "Work", round: 3, every: 0, remaining: 3723))
                == "Work · long break · 1:02:03 left · round 3")
        #expect(
            statusLine(status(state: "paused", phase: "work", task: "Work", remaining: 754))
                == "Work · paused · 12:34 left")
        #expect(
            statusLine(status(state: "paused", phase: "long_break", task: "Work", remaining: 60))
                == "Work · long break paused · 1:00 left")
        #expect(
            statusLine(status(state: "pending", phase: "short_break", task: "Work"))
                == "Work · short break ready — run: diligencectl start")
        #expect(
            statusLine(status(state: "pending", phase: "work", task: "Study"))
                == "Study · work ready — run: diligencectl start")
        #expect(statusLine(status(state: "idle", today: 3)) == "Idle · 3 completed today")
        #expect(statusLine(status(state: "idle", today: 3, goal: 8)) == "Idle · 3 of 8 completed today")
    }

    // MARK: Templates

    let running = status(
        state: "running", phase: "short_break", task: "Study", color: "blue", round: 2, every: 4,
        duration: 300, remaining: 200, elapsed: 100, today: 5, goal: 8)

    @Test func everyPlaceholder() throws {
        let cases: [(String, String)] = [
            ("{task}", "Study"), ("{phase}", "short break"), ("{remaining}", "3:20"), ("{elapsed}", "1:40"),
            ("{duration}", "5:00"), ("{percent}", "33"), ("{round}", "2"), ("{long_break_every}", "4"),
            ("{state}", "running"), ("{today}", "5"), ("{goal}", "8"), ("{color}", "blue"), ("{icon}", "☕"),
            ("{note}", ""),
            ("{presence}", "unknown"), ("{dnd}", ""), ("{clock}", "3:20"), ("{counts_up}", ""), ("{interruptions}", "0"),
        ]
        #expect(cases.count == templatePlaceholders.count)
        for (template, expected) in cases {
            #expect(try renderTemplate(template, status: running) == expected, "\(template)")
        }
        #expect(try renderTemplate("{icon} {task}: {remaining} ({percent}%)", status: running) == "☕ Study: 3:20 (33%)")
    }

    @Test func idleTemplate() throws {
        let idle = status(state: "idle", today: 2)
        #expect(
            try renderTemplate("[{task}|{phase}|{color}|{remaining}|{percent}|{icon}|{today}]", status: idle)
                == "[|||||⏹|2]")
    }

    @Test func iconPerState() throws {
        func icon(_ s: JSON) throws -> String { try renderTemplate("{icon}", status: s) }
        #expect(try icon(status(state: "running", phase: "work")) == "▶")
        #expect(try icon(status(state: "running", phase: "long_break")) == "☕")
        #expect(try icon(status(state: "paused", phase: "work")) == "⏸")
        #expect(try icon(status(state: "pending", phase: "work")) == "⏭")
        #expect(try icon(status(state: "idle")) == "⏹")
    }

    @Test func percentStaysInRange() throws {
        #expect(try renderTemplate("{percent}", status: status(state: "running", duration: 100, elapsed: 250)) == "100")
        #expect(try renderTemplate("{percent}", status: status(state: "running", duration: 1500, elapsed: 1499)) == "99")
    }

    @Test func braces() throws {
        #expect(try renderTemplate("{{task}} {{{task}}} }}", status: running) == "{task} {Study} }")
        #expect(try renderTemplate("no placeholders", status: running) == "no placeholders")
        #expect(try renderTemplate("", status: running) == "")
    }

    @Test(arguments: [
        ("{nope}", "unknown placeholder {nope}"),
        ("{}", "unknown placeholder {}"),
        ("{Task}", "unknown placeholder {Task}"),
        ("{task", "unmatched {"),
        ("{ta{sk}", "unmatched {"),
        ("task}", "unmatched }"),
    ])
    func badTemplates(template: String, message: String) {
        #expect {
            try renderTemplate(template, status: running)
        } throws: { error in
            (error as? UsageError)?.message.contains(message) == true
        }
    }

    // MARK: Tasks

    let read = JSON.object([
        ("id", .int(8)), ("name", .string("Reading")), ("description", .string("books")), ("color", .string("green")),
        ("work_seconds", .int(5400)), ("short_break_seconds", .int(90)), ("long_break_seconds", .int(900)),
        ("long_break_every", .int(0)), ("breaks", .bool(false)), ("autostart", .string("all")),
        ("focus_mode", .bool(true)), ("goal", .int(3)), ("reminder", .string("09:30")), ("sound", .null),
    ])

    @Test func taskTableIsAligned() {
        let work = JSON.object([
            ("name", .string("Work")), ("color", .string("purple")), ("work_seconds", .int(1500)),
            ("short_break_seconds", .int(300)), ("long_break_seconds", .int(900)), ("long_break_every", .int(4)),
            ("breaks", .bool(true)), ("autostart", .string("none")), ("goal", .int(0)),
        ])
        #expect(
            taskTable([work, read]) == """
                NAME     COLOR   WORK   SHORT  LONG  EVERY  BREAKS  AUTOSTART  GOAL
                Work     purple  25m    5m     15m   4      on      none       -
                Reading  green   1h30m  1m30s  15m   never  off     all        3

                """)
    }

    @Test func taskDetailsLines() {
        #expect(
            taskDetails(read) == """
                name: Reading
                description: books
                color: green
                work: 1h30m
                short-break: 1m30s
                long-break: 15m
                long-break-every: 0
                breaks: off
                autostart: all
                focus-mode: on
                goal: 3
                reminder: 09:30
                sound: off
                mode: pomodoro
                overtime: off

                """)
    }

    @Test func resultsForEachCommand() throws {
        #expect(show(read, for: try parse(["task", "add", "Reading"])).hasPrefix("Added task \"Reading\".\nname: Reading\n"))
        #expect(show(read, for: try parse(["task", "edit", "read", "--goal", "3"])).hasPrefix("Changed task \"Reading\".\n"))
        #expect(show(read, for: try parse(["task", "show", "read"])).hasPrefix("name: Reading\n"))
        #expect(show(read, for: try parse(["task", "show", "read", "--json"])) == read.serialized + "\n")
        let removed = JSON.object([("removed", .string("Reading")), ("sessions_removed", .int(1)), ("focused_seconds_removed", .int(1500))])
        #expect(
            show(removed, for: try parse(["task", "remove", "read", "--yes"]))
                == "Removed task \"Reading\" and erased its 1 recorded session (25m).\n")
        #expect(show(running, for: try parse(["skip"])) == "Study · short break · 3:20 left · round 2/4\n")
        #expect(show(running, for: try parse(["status", "--json"])) == running.serialized + "\n")
        #expect(show(running, for: try parse(["status", "--format", "{task}"])) == "Study\n")
        let version = JSON.object([("protocol", .int(1)), ("version", .string("0.1.0"))])
        #expect(show(version, for: try parse(["version"])) == "diligenced 0.1.0 (protocol 1)\n")
    }
}

@Suite struct ShortDurationTests {
    @Test("a session under a minute shows its seconds, not 0m; a minute and more rounds to the minute")
    func secondsBelowAMinute() throws {
        #expect(hoursMinutes(20) == "20s")
        #expect(hoursMinutes(59) == "59s")
        #expect(hoursMinutes(0) == "0m")
        #expect(hoursMinutes(60) == "1m")
        #expect(hoursMinutes(3900) == "1h05m")
        #expect(shortDuration(20) == "20s")
        let session = JSON.object([
            ("command", .string("history_edit")), ("id", .int(7)), ("task", .string("Study")),
            ("start", .string("2026-12-01T21:40:00+01:00")), ("end", .string("2026-12-01T21:40:20+01:00")),
            ("focused_seconds", .int(20)),
        ])
        let text = show(session, for: try parse(["history", "edit", "7", "--start", "21:40"]))
        #expect(text.contains("21:40–21:40 (20s)"), "\(text)")
    }
}

@Suite struct NotRecordedTests {
    @Test("skip or stop in the first minute says the work is not recorded, where the command answers")
    func notRecordedLine() throws {
        let idle = JSON.object([
            ("state", .string("idle")), ("today_completed", .int(0)),
            (
                "not_recorded",
                .object([
                    ("reason", .string("abandoned after 12s of focus, less than min_session (1m)")), ("focused_seconds", .int(12)),
                    ("min_session", .int(60)),
                ])
            ),
        ])
        let text = show(idle, for: try parse(["stop"]))
        #expect(text.hasSuffix("\nNot recorded: 12s of focus, shorter than min_session (1m).\n"), "\(text)")
    }
}

@Suite struct EmptyHistoryTests {
    @Test("history with a filter that matches nothing says so; without one, that nothing is recorded")
    func filterMatchingNothing() throws {
        let none = JSON.object([("sessions", .array([]))])
        #expect(show(none, for: try parse(["history"])) == "No sessions recorded.\n")
        #expect(
            show(none, for: try parse(["history", "--task", "Study", "--since", "monday"]))
                == "No sessions match --task Study --since monday.\n")
        #expect(show(none, for: try parse(["history", "--until", "last week"])) == "No sessions match --until 'last week'.\n")
    }
}

@Suite struct ReloadOutputTests {
    @Test("reload with no config file says so; with one, where it read it")
    func reloadWords() throws {
        let none = JSON.object([
            ("reloaded", .bool(true)), ("config", .string("/h/.config/diligence/diligenced.conf")), ("file", .bool(false)),
        ])
        #expect(
            show(none, for: try parse(["reload"]))
                == "No config file at /h/.config/diligence/diligenced.conf: running on the default settings.\n")
        let read = JSON.object([("reloaded", .bool(true)), ("config", .string("/c")), ("file", .bool(true))])
        #expect(show(read, for: try parse(["reload"])) == "Reloaded the configuration from /c.\n")
    }
}

/// Issue 32, item 7: `report year` on a terminal dumped 72 KB of HTML onto the screen. It is
/// refused there as a usage mistake, with the redirection to type; a file or a pipe gets the page.
@Suite struct ReportOnATerminalTests {
    @Test func refusedWithAHintBeforeAskingTheDaemon() {
        let terminal = Terminal(isInteractive: true, ask: { _ in nil }, outputIsTerminal: true, windowColumns: 100)
        for args in [["report", "year"], ["report", "--svg"]] {
            let result = run(args, terminal: terminal)
            #expect(result.code == 2 && result.stdout.isEmpty, "\(result)")
            #expect(result.stderr.hasPrefix("diligencectl: report writes a page, not text for the terminal"), "\(result)")
            #expect(
                result.stderr.contains("> report.") && result.stderr.contains("Run 'diligencectl report --help' for usage."), "\(result)")
        }
        // Not a terminal: it goes to the daemon (which is nowhere here).
        #expect(run(["report", "year"]).code == ExitCode.unreachable)
    }
}
