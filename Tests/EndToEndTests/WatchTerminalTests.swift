import DiligenceJSON
import DiligenceTestSupport
import Foundation
import Testing

// `watch` on a real terminal (issue 13): tmux gives it a pseudo-terminal, and its screen shows
// one line rewritten in place (a progress bar and the countdown), not a new line per second.

extension EndToEnd {
    @Suite("watch on a terminal: one line, rewritten in place")
    struct WatchOnATerminal {
        @Test("in a real tmux pane the countdown changes on one line; nothing scrolls")
        func oneLineInPlace() throws {
            let bar = BarHarness(d: try DaemonUnderTest())
            try bar.d.call("start", [("task", .string("Study"))])
            let server = bar.d.root + "/tmux-watch"
            defer { _ = try? bar.run("tmux -S \(server) kill-server; true") }
            try bar.run(
                "tmux -S \(server) -f /dev/null new-session -d -x 80 -y 12 'diligencectl --socket \(bar.d.socketPath) watch; sleep 30'")
            /// The pane's lines that are not empty, once `done` holds for them (10 s at most).
            func screen(until done: ([String]) -> Bool) throws -> [String] {
                var lines: [String] = []
                let deadline = monotonicNow() + 10
                while monotonicNow() < deadline {
                    lines = try bar.run("tmux -S \(server) capture-pane -p").split(separator: "\n").map(String.init)
                    if done(lines) { break }
                    sleepFor(0.2)
                }
                return lines
            }
            let first = try screen { $0.contains { $0.contains("▶ Study") } }
            let shown = try #require(first.first { $0.contains("▶ Study") }, "the pane: \(first)")
            #expect(shown.contains("━") || shown.contains("─"), "no progress bar: \(shown)")
            // Three seconds on, the countdown has changed, on the same single line.
            sleepFor(3)
            let later = try screen { $0.contains { $0.contains("▶ Study") && $0 != shown } }
            #expect(later.count == 1, "watch printed more than one line: \(later)")
            #expect(later.first != shown && later.first?.contains("▶ Study") == true, "the line did not change: \(shown) → \(later)")
        }
    }
}
