import DiligenceTestSupport
import Foundation
import Testing

@testable import DiligenceClient

/// The shell completions in contrib/completions are written by hand: these checks keep them in
/// step with the command table, so a new command or option cannot silently go missing.
@Suite struct CompletionTests {
    static let directory = PackageFiles.path("contrib/completions")
    static let files = ["diligencectl.bash", "_diligencectl", "diligencectl.fish"]

    static func text(_ file: String) -> String {
        (try? String(contentsOfFile: directory + "/" + file, encoding: .utf8)) ?? ""
    }

    /// Whether `word` occurs in `text` as a whole word (not inside a longer name).
    static func mentions(_ text: String, _ word: String) -> Bool {
        let pattern = "(^|[^A-Za-z0-9_-])" + NSRegularExpression.escapedPattern(for: word) + "($|[^A-Za-z0-9_-])"
        return text.range(of: pattern, options: .regularExpression) != nil
    }

    @Test("every command and subcommand of the table is completed by bash, zsh and fish", arguments: files)
    func commands(file: String) {
        let text = Self.text(file)
        #expect(!text.isEmpty, "contrib/completions/\(file) is missing")
        for word in Set(Command.all.flatMap(\.words)) + ["help"] {
            #expect(Self.mentions(text, word), "\(file) does not complete '\(word)'")
        }
    }

    @Test("every option of every command is completed by bash, zsh and fish", arguments: files)
    func options(file: String) {
        let text = Self.text(file)
        for command in Command.all {
            for option in command.options {
                // bash and zsh spell --name; fish spells -l name.
                let spelled = Self.mentions(text, "--" + option.name) || Self.mentions(text, "-l " + option.name)
                #expect(spelled, "\(file) does not complete --\(option.name) of '\(command.name)'")
            }
        }
    }

    @Test("task names come from the daemon through task list --names in every shell", arguments: files)
    func taskNames(file: String) {
        #expect(Self.text(file).contains("task list --names"))
    }
}
