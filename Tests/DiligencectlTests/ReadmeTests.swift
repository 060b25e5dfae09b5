import DiligenceTestSupport
import Foundation
import Testing

@testable import DiligenceClient

/// The README's command list is written for people, so it is not generated; this keeps it true
/// to the client's own table (what `diligencectl --help` and `COMMAND --help` print): every
/// command has a line, and every option of a command is named on the lines of that command.
@Suite struct ReadmeTests {
    static let readme = PackageFiles.read("README.md")

    /// The code block under "## The client".
    static var commandList: [String] {
        guard let section = readme.range(of: "## The client\n\n```\n") else { return [] }
        let rest = readme[section.upperBound...]
        let block = rest[..<(rest.range(of: "```")?.lowerBound ?? rest.endIndex)]
        return block.split(separator: "\n").map(String.init)
    }

    /// The lines about `command`: the one starting `diligencectl <its words>`, with the lines
    /// that continue it (indented).
    static func lines(of command: Command) -> String {
        let start = "diligencectl " + command.name
        var found: [String] = []
        var inside = false
        for line in commandList {
            if line.hasPrefix("diligencectl ") {
                inside = line == start || line.hasPrefix(start + " ")
            }
            if inside { found.append(line) }
        }
        return found.joined(separator: "\n")
    }

    @Test("README lists every command of diligencectl --help with every one of its options")
    func everyCommandAndOption() {
        #expect(!Self.commandList.isEmpty, "README.md has no command list under \"## The client\"")
        for command in Command.all {
            let text = Self.lines(of: command)
            #expect(!text.isEmpty, "README does not list `diligencectl \(command.name)`")
            for option in command.options {
                #expect(text.contains("--" + option.name), "README's lines for `\(command.name)` lack --\(option.name)")
            }
        }
    }
}
