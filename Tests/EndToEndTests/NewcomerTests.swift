import DiligenceCore
import Foundation
import Testing

// A newcomer's first session (issue 13): the README's quick start typed as it stands, with the
// mistakes people make on a first try. Each mistake is refused as a typing mistake (exit 2)
// with the word that was meant; the corrected line then works.

extension EndToEnd {
    @Suite("A newcomer: the README's first session, with three typos")
    struct Newcomer {
        /// The `dctl …` commands of the README's first-session block, in order (`a; b` gives
        /// two), each split into words as a shell would, comments dropped.
        static func firstSession() throws -> [[String]] {
            let readme = readTextFile(Binaries.packageRoot + "/README.md")
            let start = try #require(readme.range(of: "a first session:\n\n```sh\n"), "README.md has no first-session block")
            let rest = readme[start.upperBound...]
            let block = rest[..<(rest.range(of: "```")?.lowerBound ?? rest.endIndex)]
            var commands: [[String]] = []
            for line in block.split(separator: "\n") {
                let code = line.range(of: "  #").map { line[..<$0.lowerBound] } ?? line[...]
                for part in code.split(separator: ";") {
                    let words = try CommandLineWords.split(String(part))
                    if words.first == "dctl" { commands.append(Array(words.dropFirst())) }
                }
            }
            return commands
        }

        /// A typo: the word typed in place of the one meant, and what the answer must say.
        struct Typo {
            var typed: String
            var meant: String
            var suggestion: String
        }

        /// A command, a task name and an option mistyped.
        static let typos = [
            Typo(typed: "strat", meant: "start", suggestion: "Did you mean start?"),
            Typo(typed: "Stduy", meant: "Study", suggestion: "Did you mean \"Study\"?"),
            Typo(typed: "--wrok", meant: "--work", suggestion: "Did you mean --work?"),
        ]

        @Test("every command of the README's first session works; each of three typos gets exit 2 and a 'did you mean'")
        func quickStartWithTypos() throws {
            let commands = try Self.firstSession()
            #expect(commands.count >= 10, "the README's first session holds \(commands.count) dctl commands: \(commands)")
            let d = try DaemonUnderTest()
            var typosMade: Set<String> = []
            for command in commands {
                for typo in Self.typos where command.contains(typo.meant) && !typosMade.contains(typo.typed) {
                    let mistyped = command.map { $0 == typo.meant ? typo.typed : $0 }
                    let refused = try d.ctl(arguments: mistyped)
                    #expect(refused.exitCode == 2, "\(refused)")
                    #expect(refused.stderr.contains(typo.suggestion), "no suggestion of \(typo.meant) for \(typo.typed): \(refused)")
                    typosMade.insert(typo.typed)
                }
                let r = try d.ctl(arguments: command)
                #expect(r.exitCode == 0, "the README's `dctl \(command.joined(separator: " "))`: \(r)\n\(d.diagnostics)")
                // Work skipped in its first minute is not recorded, and the answer says so.
                if command == ["skip"] {
                    #expect(r.stdout.contains("Not recorded: ") && r.stdout.contains("shorter than min_session (1m)"), "\(r)")
                }
            }
            let history = try d.ctl(arguments: ["history", "--json"])
            #expect(
                history.stdout.components(separatedBy: "\"outcome\"").count == 2,
                "the README's first session leaves one session: \(history)")
            #expect(typosMade.count == Self.typos.count, "the README's first session no longer uses every word a typo is made in")
        }
    }
}
