import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Foundation
import Testing

extension EndToEnd {
    /// Issue 13: `watch` in a real terminal (the README's first session with typos is
    /// NewcomerTests.swift).
    @Suite("A person at a terminal: watch in tmux")
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
    }
}
