import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the contrib/ configurations' commands the way each bar runs them (`sh -c` with the
/// programs on PATH), against a real daemon.
struct BarHarness {
    let d: DaemonUnderTest

    /// The test's environment with the built programs first on PATH, as an installed copy would be.
    var environment: [String: String] {
        var env = d.environment
        env["PATH"] = Binaries.directory + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        env["TERM"] = "xterm-256color"
        return env
    }

    /// `contrib/<path>`'s text.
    static func contrib(_ path: String) -> String { readTextFile(Binaries.packageRoot + "/contrib/" + path) }

    /// The value of the first `key = value` (or `key=value`) line in an INI/TOML-like text, unquoted.
    static func value(of key: String, in text: String) -> String? {
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, String(parts[0]).trimmingWhitespace() == key else { continue }
            var v = String(parts[1]).trimmingWhitespace()
            if v.hasPrefix("\""), v.hasSuffix("\""), v.count >= 2 { v = String(v.dropFirst().dropLast()) }
            return v
        }
        return nil
    }

    /// Starts `sh -c command` in the background; its stdout goes to a file read by `lines`.
    func spawn(_ command: String, name: String) throws -> (ChildProcess, () -> [String]) {
        let out = d.root + "/\(name).out"
        let child = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", command], environment: environment,
            stdoutPath: out, stderrPath: d.root + "/\(name).err")
        return (child, { readTextFile(out).split(separator: "\n").map(String.init) })
    }

    /// Runs `sh -c command` to its end and returns its stdout.
    @discardableResult
    func run(_ command: String) throws -> String {
        let (child, lines) = try spawn(command, name: "run-\(UInt32.random(in: 0...UInt32.max))")
        guard let status = child.wait(timeout: 10) else {
            child.killAndReap()
            throw HarnessError("`\(command)` did not finish")
        }
        guard status == .exited(0) else { throw HarnessError("`\(command)` → \(status): \(lines())") }
        return lines().joined(separator: "\n")
    }

    /// Waits until `lines()` has a line satisfying `matches`.
    static func waitForLine(_ lines: @escaping () -> [String], timeout: Double = 5, _ matches: (String) -> Bool) -> String? {
        let deadline = monotonicNow() + timeout
        repeat {
            if let line = lines().first(where: matches) { return line }
            sleepFor(0.02)
        } while monotonicNow() < deadline
        return nil
    }
}

extension EndToEnd {
    @Suite("contrib/: each status-bar configuration, run as its bar runs it")
    struct StatusBars {
        @Test("waybar: exec prints one JSON object per line with the documented fields; clicks toggle and skip")
        func waybar() throws {
            let bar = BarHarness(d: try DaemonUnderTest())
            let source = BarHarness.contrib("waybar/config.jsonc").split(separator: "\n")
                .filter { !String($0).trimmingWhitespace().hasPrefix("//") }.joined(separator: "\n")
            let config = try JSON.parse(source)
            guard let module = config["custom/diligence"] else {
                Issue.record("contrib/waybar/config.jsonc has no custom/diligence module")
                return
            }
            #expect(module["return-type"]?.stringValue == "json")
            let exec = module["exec"]?.stringValue ?? "false"
            let (watcher, lines) = try bar.spawn(exec, name: "waybar")
            defer { watcher.killAndReap() }

            func object(withClass kind: String) -> JSON? {
                BarHarness.waitForLine(lines) { (try? JSON.parse($0))?["class"]?.stringValue == kind }
                    .flatMap { try? JSON.parse($0) }
            }
            #expect(object(withClass: "idle") != nil, "\(lines())")
            try bar.run(module["on-click"]?.stringValue ?? "false")
            let work = object(withClass: "work") ?? .null
            #expect(work != .null, "\(lines())")
            #expect(work["alt"]?.stringValue == "work")
            let text = work["text"]?.stringValue ?? ""
            let tooltip = work["tooltip"]?.stringValue ?? ""
            #expect(text.hasPrefix("▶ 2"), "\(work.serialized)")
            #expect(tooltip.contains("Work · work"), "\(work.serialized)")
            #expect(work["percentage"]?.intValue != nil)
            try bar.run(module["on-click"]?.stringValue ?? "false")
            #expect(object(withClass: "work-paused") != nil, "\(lines())")
            try bar.run(module["on-click-right"]?.stringValue ?? "false")
            #expect(object(withClass: "pending") != nil, "\(lines())")
            // Every line waybar reads parses, with all five fields.
            for line in lines() {
                let json = try JSON.parse(line)
                for key in ["text", "alt", "tooltip", "class", "percentage"] { #expect(json[key] != nil, "\(key) in \(line)") }
            }
            // The stylesheet styles every class the module can have.
            let css = BarHarness.contrib("waybar/style.css")
            for kind in ["work", "short-break", "long-break", "work-paused", "pending", "idle", "offline"] {
                #expect(css.contains("#custom-diligence.\(kind)"), "style.css lacks .\(kind)")
            }
        }

        @Test("polybar (tail = true), i3blocks (persist), i3status-rust (persistent): a plain line per change")
        func lineBars() throws {
            let bar = BarHarness(d: try DaemonUnderTest())
            let polybar = BarHarness.contrib("polybar/config.ini")
            let i3blocks = BarHarness.contrib("i3blocks/config")
            let i3rs = BarHarness.contrib("i3status-rust/config.toml")
            #expect(BarHarness.value(of: "tail", in: polybar) == "true")
            #expect(BarHarness.value(of: "interval", in: i3blocks) == "persist")
            #expect(BarHarness.value(of: "persistent", in: i3rs) == "true")
            let commands = [
                ("polybar", try #require(BarHarness.value(of: "exec", in: polybar))),
                ("i3blocks", try #require(BarHarness.value(of: "command", in: i3blocks))),
                ("i3status-rust", try #require(BarHarness.value(of: "command", in: i3rs))),
            ]
            let running = try commands.map { name, command in (name, try bar.spawn(command, name: name)) }
            defer { for (_, (child, _)) in running { child.killAndReap() } }
            for (name, (_, lines)) in running {
                #expect(BarHarness.waitForLine(lines) { $0 == "⏹" } != nil, "\(name) idle: \(lines())")
            }
            try bar.run(try #require(BarHarness.value(of: "click-left", in: polybar)))
            for (name, (_, lines)) in running {
                #expect(BarHarness.waitForLine(lines) { $0.hasPrefix("▶ Work 2") } != nil, "\(name) running: \(lines())")
            }
            try bar.run(try #require(BarHarness.value(of: "click-right", in: polybar)))
            // Pending: the length of the break that waits (5 minutes), as docs/status-bars.md shows it.
            for (name, (_, lines)) in running {
                #expect(BarHarness.waitForLine(lines) { $0 == "⏭ Work 5:00" } != nil, "\(name) pending: \(lines())")
            }
            let documented = readTextFile(Binaries.packageRoot + "/docs/status-bars.md").split(separator: "\n")
            #expect(
                documented.contains("⏭ Work 5:00") && !documented.contains { $0.hasPrefix("⏭ Work ") && $0 != "⏭ Work 5:00" },
                "docs/status-bars.md shows a pending phase other than as the bars print it")
        }

        @Test("tmux: the status line a real tmux draws shows the icon, task and countdown")
        func tmux() throws {
            let bar = BarHarness(d: try DaemonUnderTest())
            try bar.d.call("start", [("task", .string("Study"))])
            let inner = bar.d.root + "/tmux-inner"
            let outer = bar.d.root + "/tmux-outer"
            let conf = Binaries.packageRoot + "/contrib/tmux/diligence.tmux.conf"
            defer {
                _ = try? bar.run("tmux -S \(outer) kill-server; tmux -S \(inner) kill-server; true")
            }
            try bar.run("tmux -S \(inner) -f \(conf) new-session -d -x 100 -y 10")
            // A second tmux attaches to the first in its pane, so the first one draws its status
            // line into a terminal whose screen capture-pane can read.
            try bar.run("tmux -S \(outer) -f /dev/null new-session -d -x 100 -y 8 'tmux -S \(inner) attach'")
            /// The bottom line of the screen once it shows `text` (10 s at most), and the screen.
            func statusLine(showing text: String) throws -> (line: String, screen: String) {
                var screen = ""
                let deadline = monotonicNow() + 10
                while monotonicNow() < deadline {
                    screen = try bar.run("tmux -S \(outer) capture-pane -p")
                    if screen.contains(text) { break }
                    sleepFor(0.2)
                }
                return (screen.split(separator: "\n").last.map(String.init) ?? "", screen)
            }
            let (running, screen) = try statusLine(showing: "▶ Study 2")
            #expect(running.contains("▶ Study 2"), "the tmux screen:\n\(screen)")
            #expect(running.range(of: #"Study \d+:\d\d \| \d\d:\d\d"#, options: .regularExpression) != nil, "\(running)")
            // The daemon goes away: an offline mark, not an empty space.
            bar.d.kill()
            let (offlineLine, offlineScreen) = try statusLine(showing: "⊘ offline")
            #expect(
                offlineLine.range(of: #"⊘ offline \| \d\d:\d\d"#, options: .regularExpression) != nil, "the tmux screen:\n\(offlineScreen)")
        }
    }
}

extension EndToEnd {
    @Suite("Shell completions and man pages: accepted by their tools")
    struct CompletionsAndManPages {
        @Test("bash -n, zsh -n and fish -n accept the completions; bash completes task names from the daemon")
        func completions() throws {
            let bar = BarHarness(d: try DaemonUnderTest())
            let dir = Binaries.packageRoot + "/contrib/completions"
            try bar.run("bash -n \(dir)/diligencectl.bash")
            try bar.run("zsh -n \(dir)/_diligencectl")
            try bar.run("fish -n \(dir)/diligencectl.fish")
            let bash = try bar.run(
                """
                bash -c 'source \(dir)/diligencectl.bash; COMP_WORDS=(diligencectl task edit Ex); COMP_CWORD=3; \
                _diligencectl; printf "%s\\n" "${COMPREPLY[@]}"'
                """)
            #expect(bash == "Exercise", "\(bash)")
            let fish = try bar.run("fish -c 'source \(dir)/diligencectl.fish; complete -C \"diligencectl start Me\"'")
            #expect(fish == "Meditate", "\(fish)")
        }

        /// The pages as `make install` installs them (the Makefile's rule: scdoc, then the
        /// paragraph clean-up), rendered by groff with every warning on for a UTF-8 and an ASCII
        /// terminal under LC_ALL=C, linted by mandoc, and shown by man.
        @Test(
            "each man page renders without a warning in groff -ww and mandoc -T lint, also under LC_ALL=C",
            arguments: ["diligencectl.1", "diligenced.1", "diligenced.conf.5", "diligence-lock.1"])
        func manPage(page: String) throws {
            let bar = BarHarness(d: try DaemonUnderTest(launch: false))
            let out = bar.d.root + "/" + page
            try bar.run("make -s -C \(Binaries.packageRoot) .build/man/\(page) && cp \(Binaries.packageRoot)/.build/man/\(page) \(out)")
            let text = readTextFile(out)
            let ascii = text.unicodeScalars.allSatisfy { $0.isASCII }
            #expect(ascii, "\(page) holds characters outside ASCII: they vanish or warn in an ASCII locale")
            for device in ["utf8", "ascii"] {
                let warnings = try bar.run("LC_ALL=C groff -ww -man -T\(device) -z \(out) 2>&1")
                #expect(warnings.isEmpty, "groff -ww -T\(device) on \(page):\n\(warnings)")
            }
            let lint = try bar.run("LC_ALL=C mandoc -T lint -W warning \(out) 2>&1 || true")
            #expect(lint.isEmpty, "mandoc -T lint on \(page):\n\(lint)")
            let rendered = try bar.run("LC_ALL=C MANWIDTH=80 man -l \(out) 2>&1")
            let name = page.split(separator: ".").dropLast().joined(separator: ".")
            #expect(rendered.contains("NAME"), "\(rendered)")
            #expect(rendered.contains("\(name) - "), "\(rendered)")
        }
    }
}
