import Foundation
import Testing

extension EndToEnd {
    /// Issue 32, item 16: the example of each command's help, run as printed, works.
    @Suite("help examples run against a daemon")
    struct HelpExamples {
        /// The words of `line` as a shell splits them (single quotes; `~/` left to the daemon).
        static func words(_ line: String) -> [String] {
            var words: [String] = []
            var word = ""
            var quoted = false
            var started = false
            for c in line {
                if c == "'" {
                    quoted.toggle()
                    started = true
                } else if c == " " && !quoted {
                    if started { words.append(word) }
                    word = ""
                    started = false
                } else {
                    word.append(c)
                    started = true
                }
            }
            if started { words.append(word) }
            return words
        }

        @Test(arguments: ["sync enable", "plan set", "week"])
        func theExampleWorks(command: String) throws {
            let d = try DaemonUnderTest()
            let help = try d.ctl(arguments: command.split(separator: " ").map(String.init) + ["--help"])
            let line = try #require(help.stdout.split(separator: "\n").first { $0.hasPrefix("Example: diligencectl ") }, "\(help)")
            let args = Array(Self.words(String(line.dropFirst("Example: ".count))).dropFirst())
            let ran = try d.ctl(arguments: args)
            #expect(ran.exitCode == 0, "\(args): \(ran)")
        }
    }
}
