import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Testing

@testable import DiligenceClient

/// `--waybar`, the offline line, and the `watch` loop (StatusBar.swift).
@Suite struct StatusBarTests {
    // MARK: waybar

    @Test("waybar class and alt name the phase, -paused when paused, pending, idle, offline")
    func waybarClasses() {
        let cases: [(JSON, String)] = [
            (status(state: "running", phase: "work", task: "W"), "work"),
            (status(state: "running", phase: "short_break", task: "W"), "short-break"),
            (status(state: "running", phase: "long_break", task: "W"), "long-break"),
            (status(state: "paused", phase: "work", task: "W"), "work-paused"),
            (status(state: "paused", phase: "short_break", task: "W"), "short-break-paused"),
            (status(state: "pending", phase: "short_break", task: "W"), "pending"),
            (status(state: "idle"), "idle"),
            (offlineStatus, "offline"),
        ]
        for (json, expected) in cases {
            let line = try? JSON.parse(waybarLine(json))
            #expect(line?["class"]?.stringValue == expected, "\(json.serialized)")
            #expect(line?["alt"]?.stringValue == expected, "\(json.serialized)")
        }
    }

    @Test("away: the waybar class is away whatever the timer does; the status line says since when")
    func awayClass() throws {
        try withTimeZone("UTC0") { () throws -> Void in
            var away = status(state: "paused", phase: "work", task: "W", remaining: 600)
            guard case .object(var members) = away else {
                Issue.record("the status fixture is not an object: \(away.serialized)")
                return
            }
            members += [("presence", .string("away")), ("away_since", .string("2026-11-29T12:03:00+00:00"))]
            away = .object(members)
            #expect(waybarClass(StatusView(away)) == "away")
            #expect(statusLine(away) == "W · paused · 10:00 left · away since 12:03")
            #expect(try renderTemplate("{presence}", status: away) == "away")
            #expect(waybarClass(StatusView(status(state: "paused", phase: "work", task: "W"))) == "work-paused")
        }
    }

    @Test("waybar line: text with icon and countdown, tooltip with the status line and today's count, percentage")
    func waybarFields() throws {
        let running = status(
            state: "running", phase: "work", task: "Write", round: 2, duration: 1500,
            remaining: 1125, elapsed: 375, today: 3, goal: 8)
        let line = try JSON.parse(waybarLine(running))
        #expect(line["text"]?.stringValue == "▶ 18:45")
        #expect(line["tooltip"]?.stringValue == "Write · work · 18:45 left · round 2/4\n3 of 8 completed today")
        #expect(line["percentage"]?.intValue == 25)
        #expect(
            try JSON.parse(waybarLine(status(state: "pending", phase: "long_break", task: "W")))["text"]?.stringValue
                == "⏭ long break")
        #expect(try JSON.parse(waybarLine(status(state: "idle", today: 2)))["text"]?.stringValue == "⏹ 2")
        #expect(try JSON.parse(waybarLine(offlineStatus))["text"]?.stringValue == "⊘ offline")
    }

    @Test("idle, a template shows nothing meaningless: the timer's fields are empty and the spaces around them collapse")
    func idleTemplate() throws {
        let idle = status(state: "idle", today: 2)
        #expect(try renderTemplate("{icon} {task} {remaining}", status: idle) == "⏹")
        #expect(try renderTemplate("{icon} {task} {remaining} · {today} done", status: idle) == "⏹ · 2 done")
        #expect(try renderTemplate("{remaining} {elapsed} {duration} {percent} {round} {phase} {color}", status: idle) == "")
        #expect(try renderTemplate("[{task}]", status: idle) == "[]")
        let running = status(state: "running", phase: "work", task: "Study", remaining: 754)
        #expect(try renderTemplate("{icon} {task} {remaining}", status: running) == "▶ Study 12:34")
        #expect(try renderTemplate("{icon} {note} {task}", status: running) == "▶ Study")
    }

    @Test("offline: a template shows only {state} and {icon}; the plain line says the daemon is not running")
    func offlineRendering() throws {
        let format = try parse(["watch", "--format", "[{icon} {state} {task} {remaining}]"])
        #expect(offlineLine(for: format, socket: "/s") == "[⊘ offline]")
        #expect(offlineLine(for: try parse(["watch"]), socket: "/s") == "Offline · diligenced is not running")
        let json = try JSON.parse(offlineLine(for: try parse(["watch", "--json"]), socket: "/s"))
        #expect(json["event"]?.stringValue == "offline")
        #expect(json["socket"]?.stringValue == "/s")
        #expect(json["status"]?["state"]?.stringValue == "offline")
    }

    @Test("status --waybar is parsed; --json, --waybar and --format exclude each other on status and watch")
    func flags() throws {
        #expect(try parse(["status", "--waybar"]).has("waybar"))
        #expect(try requestLine(["watch", "--waybar"]) == #"{"command":"watch"}"#)
        #expect(usageError(["status", "--waybar", "--json"])?.message == "--json and --waybar cannot be combined.")
        #expect(usageError(["watch", "--waybar", "--format", "{task}"])?.message == "--waybar and --format cannot be combined.")
        #expect(usageError(["watch", "--format", "{nope}"]) != nil)
        #expect(usageError(["task", "list", "--names", "--json"])?.message == "--json and --names cannot be combined.")
    }

    // MARK: watch

    @Test("back-off: 0.1 s doubling to 5 s, reset to 0.1 s")
    func backoff() {
        var b = Backoff()
        let delays = (0..<8).map { _ in b.take() }
        #expect(delays == [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0])
        b.reset()
        #expect(b.take() == 0.1)
    }

    @Test("watch without a daemon: one offline line, then retries with growing delays")
    func reconnectsWithBackoff() throws {
        var lines: [String] = []
        var sleeps: [Double] = []
        let io = WatchIO(
            emit: {
                lines.append($0)
                return .delivered
            },
            sleep: {
                sleeps.append($0)
                return sleeps.count < 4
            })
        let outcome = watch(try parse(["watch", "--waybar"]), socket: nowhere, io: io)
        #expect(outcome.code == 0)
        #expect(sleeps == [0.1, 0.2, 0.4, 0.8])
        #expect(lines.count == 1, "the offline line is printed once, not once per attempt: \(lines)")
        #expect(try JSON.parse(lines.first ?? "")["class"]?.stringValue == "offline")
    }

    @Test("watch --no-reconnect without a daemon exits 3 and names the socket")
    func noReconnect() throws {
        let outcome = watch(
            try parse(["watch", "--no-reconnect"]), socket: nowhere,
            io: WatchIO(
                emit: { _ in .delivered },
                sleep: { _ in
                    Issue.record("slept")
                    return false
                }))
        #expect(outcome.code == ExitCode.unreachable)
        #expect(outcome.stderr.contains(nowhere))
    }

    @Test("watch prints each event in the chosen format and skips a line equal to the previous one")
    func streamsEvents() throws {
        let paused = status(state: "paused", phase: "work", task: "W", remaining: 60)
        let running = status(state: "running", phase: "work", task: "W", remaining: 59)
        let events = [("status", paused), ("tick", paused), ("resumed", running)]
            .map { Response.event($0.0, status: $0.1) }.joined()
        let daemon = FakeDaemon(responses: [#"{"ok":true,"result":{"watching":true}}"# + "\n" + events.dropLast()])
        var lines: [String] = []
        let io = WatchIO(
            emit: {
                lines.append($0)
                return lines.count < 2 ? .delivered : .readerGone
            }, sleep: { _ in false })
        _ = watch(try parse(["watch", "--format", "{state} {remaining}"]), socket: daemon.path, io: io)
        #expect(lines == ["paused 1:00\n", "running 0:59\n"])
        #expect(daemon.requests() == [#"{"command":"watch"}"#])
    }

    @Test("watch ends at the first line it cannot deliver: 0 when the reader is gone, 1 with the reason otherwise")
    func endsOnWriteErrors() throws {
        let event = Response.event("status", status: status(state: "idle"))
        for (delivery, expected) in [
            (Delivery.readerGone, RunResult()),
            (
                .failed("cannot write: No space left on device"),
                RunResult(stderr: "diligencectl: cannot write: No space left on device\n", code: 1)
            ),
        ] {
            let daemon = FakeDaemon(responses: [#"{"ok":true,"result":{"watching":true}}"# + "\n" + event + event])
            var attempts = 0
            let io = WatchIO(
                emit: { _ in
                    attempts += 1
                    return delivery
                },
                sleep: { _ in
                    Issue.record("slept")
                    return false
                })
            #expect(watch(try parse(["watch"]), socket: daemon.path, io: io) == expected)
            #expect(attempts == 1)
        }
    }
}

/// Issue 13: `watch` on a terminal rewrites one line with a progress bar; `--bell` rings at a phase end.
@Suite struct LiveWatchTests {
    @Test func theLiveLineHasABarAndFitsTheWidth() {
        let running = status(state: "running", phase: "work", task: "Study", duration: 1500, remaining: 754, elapsed: 746)
        let line = liveLine(running, screen: Screen(columns: 80, colors: .none))
        #expect(line == "\r\u{1B}[K▶ Study ━━━━━━━━━━━━━━━━━━━╸──────────────────── 12:34", "\(line.debugDescription)")
        for columns in [20, 24, 40, 80, 200] {
            let body = String(liveLine(running, screen: Screen(columns: columns, colors: .none)).dropFirst(4))
            #expect(body.displayWidth <= columns - 1, "\(columns): \(body)")
            #expect(body.hasSuffix("12:34"), "\(columns): \(body)")
        }
        // A wide name is cut in columns, not characters; the bar and the clock stay.
        let wide = status(state: "running", phase: "work", task: "数学の勉強をする時間です", duration: 100, remaining: 50, elapsed: 50)
        let body = String(liveLine(wide, screen: Screen(columns: 30, colors: .none)).dropFirst(4))
        #expect(body.displayWidth <= 29 && body.contains("…") && body.contains("━") && body.hasSuffix("0:50"), "\(body)")
        #expect(liveLine(status(state: "idle", today: 2), screen: .plain) == "\r\u{1B}[K⏹ Idle · 2 completed today")
        #expect(
            progressBar(1, of: 2, width: 4) == "━━──" && progressBar(3, of: 4, width: 2) == "━╸" && progressBar(9, of: 0, width: 3) == "───"
        )
    }

    @Test func liveWatchRewritesOneLineAndRingsAtAPhaseEnd() throws {
        let events = [
            ("tick", status(state: "running", phase: "work", task: "Study", duration: 60, remaining: 1, elapsed: 59)),
            ("phase_completed", status(state: "pending", phase: "short_break", task: "Study")),
        ].map { Response.event($0.0, status: $0.1) }.joined()
        let daemon = FakeDaemon(responses: [#"{"ok":true,"result":{"watching":true}}"# + "\n" + events.dropLast()])
        var printed: [String] = []
        var rings = 0
        // The bell after the phase end is the last thing: ending there stops the watch.
        let io = WatchIO(
            emit: {
                printed.append($0)
                return .delivered
            }, sleep: { _ in false },
            ring: {
                rings += 1
                return .readerGone
            })
        _ = watch(try parse(["watch", "--bell"]), socket: daemon.path, io: io, display: .live(Screen(columns: 40, colors: .none)))
        _ = daemon.requests()
        #expect(printed.count == 2 && printed.allSatisfy { $0.hasPrefix("\r\u{1B}[K") && !$0.contains("\n") }, "\(printed)")
        #expect(printed.first?.contains("━") == true, "\(printed)")
        #expect(rings == 1)

        // Not a terminal: lines as before, and no bell without --bell.
        let plainDaemon = FakeDaemon(responses: [#"{"ok":true,"result":{"watching":true}}"# + "\n" + events.dropLast()])
        var lines: [String] = []
        var plainRings = 0
        let plainIO = WatchIO(
            emit: {
                lines.append($0)
                return lines.count < 2 ? .delivered : .readerGone
            }, sleep: { _ in false },
            ring: {
                plainRings += 1
                return .delivered
            })
        _ = watch(try parse(["watch"]), socket: plainDaemon.path, io: plainIO)
        _ = plainDaemon.requests()
        #expect(lines == ["Study · work · 0:01 left · round 1/4\n", "Study · short break ready — run: diligencectl start\n"], "\(lines)")
        #expect(plainRings == 0)
    }

    /// Issue 13, finding 7: the daemon's `bell` event (`[notifications] bell = on`, no desktop
    /// showed the notification) rings the terminal's bell in a plain `watch`; with `--bell`,
    /// which rings at every phase end already, it does not ring twice.
    @Test func theDaemonsBellEventRingsOnceWhicheverWayItIsAsked() throws {
        let ended = status(state: "pending", phase: "short_break", task: "Study")
        let events = [
            Response.event("phase_completed", status: ended),
            Response.event("bell", status: ended, extra: [("summary", .string("Focus session complete"))]),
            Response.event("status", status: status(state: "running", phase: "short_break", task: "Study")),
        ].joined()
        for (args, expected) in [(["watch"], 1), (["watch", "--bell"], 1)] {
            let daemon = FakeDaemon(responses: [#"{"ok":true,"result":{"watching":true}}"# + "\n" + events.dropLast()])
            var rings = 0
            // The running break's line is the last event: ending there stops the watch.
            let io = WatchIO(
                emit: { $0.contains("left") ? .readerGone : .delivered }, sleep: { _ in false },
                ring: {
                    rings += 1
                    return .delivered
                })
            _ = watch(try parse(args), socket: daemon.path, io: io)
            _ = daemon.requests()
            #expect(rings == expected, "\(args)")
        }
    }
}
