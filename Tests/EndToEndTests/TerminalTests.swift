import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Foundation
import Testing

extension EndToEnd {
    /// Issue 13: `watch` in a real terminal, and a newcomer's first session from the README.
    @Suite("A person at a terminal: watch in tmux, the README quick start with typos")
    struct TerminalTests {
        /// Finding 7: on a terminal `watch` printed a new line every second. In a real tmux pane
        /// (a pseudo-terminal, so `watch` sees a tty) the screen holds one line, rewritten as
        /// the countdown moves — not a scroll of lines.
        @Test("watch in a tmux pane rewrites one line in place with a progress bar")
        func watchInTmux() throws {
            let bar = BarHarness(d: try DaemonUnderTest())
            try bar.d.call("start", [("task", .string("Study"))])
            let tmux = bar.d.root + "/tmux-watch"
            defer { _ = try? bar.run("tmux -S \(tmux) kill-server; true") }
            let ctl = Binaries.directory + "/diligencectl"
            try bar.run("tmux -S \(tmux) -f /dev/null new-session -d -x 60 -y 8 '\(ctl) --socket \(bar.d.socketPath) watch'")
            func screen() throws -> [String] {
                try bar.run("tmux -S \(tmux) capture-pane -p").split(separator: "\n").map(String.init)
                    .filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            }
            var first: [String] = []
            let deadline = monotonicNow() + 10
            while monotonicNow() < deadline {
                first = try screen()
                if first.contains(where: { $0.contains("Study") }) { break }
                sleepFor(0.1)
            }
            sleepFor(2.5) // two or three ticks more
            let later = try screen()
            #expect(later.count == 1, "one line, rewritten in place; the pane shows:\n\(later.joined(separator: "\n"))")
            let line = later.first ?? ""
            #expect(line.hasPrefix("▶ Study") && line.contains("─"), "the progress bar (seconds into 25m: still empty): \(line)")
            #expect(first.first != line, "the countdown moved: \(first) then \(line)")
        }

        /// The README's quick start (the `dctl` lines of "a first session"), each a command line.
        static var quickStart: [[String]] {
            let readme = readTextFile(Binaries.packageRoot + "/README.md")
            guard let start = readme.range(of: "alias dctl=") else { return [] }
            let block = readme[start.upperBound...].prefix { $0 != "`" }
            return block.split(separator: "\n").dropFirst().flatMap { line -> [[String]] in
                let command = line.split(separator: "#", maxSplits: 1).first.map(String.init) ?? ""
                guard command.hasPrefix("dctl ") else { return [] }
                // `dctl pause; dctl resume` is two commands.
                return command.split(separator: ";").map { Array(shellWords(String($0)).dropFirst()) }
            }
        }

        /// Words as sh splits them, with single quotes (the README's only quoting).
        static func shellWords(_ text: String) -> [String] {
            var words: [String] = []
            var word = ""
            var quoted = false
            var inWord = false
            for c in text {
                if c == "'" {
                    quoted.toggle()
                    inWord = true
                } else if c == " " && !quoted {
                    if inWord { words.append(word) }
                    word = ""
                    inWord = false
                } else {
                    word.append(c)
                    inWord = true
                }
            }
            if inWord { words.append(word) }
            return words
        }

        /// Finding 3: a newcomer runs the quick start with three typos — a command, a task name,
        /// an option — and each gets a suggestion (exit 2, nothing done); the rest runs as written.
        @Test("the README quick start with three typos: each gets a did-you-mean, the rest works")
        func newcomer() throws {
            let d = try DaemonUnderTest()
            let lines = Self.quickStart
            #expect(lines.count >= 8, "the README's quick start: \(lines)")
            let typos: [(line: [String], typo: [String], suggestion: String)] = [
                (["start", "Study"], ["strat", "Study"], "Did you mean start?"),
                (["start", "Study"], ["start", "Stduy"], "Did you mean \"Study\"?"),
                (
                    ["status", "--format", "{icon} {task} {remaining}"], ["status", "--fromat", "{icon} {task} {remaining}"],
                    "Did you mean --format?"
                ),
            ]
            for typo in typos {
                #expect(lines.contains(typo.line), "the README's quick start has `dctl \(typo.line.joined(separator: " "))`")
            }
            var suggested = 0
            for words in lines {
                for typo in typos where typo.line == words {
                    let r = try d.ctl(arguments: typo.typo)
                    #expect(r.exitCode == 2, "`\(typo.typo.joined(separator: " "))`: \(r)")
                    #expect(r.stderr.contains(typo.suggestion), "`\(typo.typo.joined(separator: " "))` should suggest: \(r)")
                    if r.stderr.contains(typo.suggestion) { suggested += 1 }
                }
                let r = try d.ctl(arguments: words)
                #expect(r.exitCode == 0, "`dctl \(words.joined(separator: " "))`: \(r)\n\(d.diagnostics)")
            }
            #expect(suggested == 3)
        }
    }
}
