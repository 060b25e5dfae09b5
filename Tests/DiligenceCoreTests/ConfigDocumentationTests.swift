import DiligenceCore
import DiligenceTestSupport
import Testing

/// The settings file is documented three times — docs/configuration.md (the reference),
/// diligenced.conf(5) and the example installed beside the docs, which people copy — and each
/// must know every setting the parser knows (`DaemonConfig.knownSettings`).
@Suite("The settings file's documentation against the parser")
struct ConfigDocumentationTests {
    static func read(_ relative: String) -> String { PackageFiles.read(relative) }

    static let example = read("contrib/diligenced.conf.example")

    /// The example with every commented-out setting (`# key = value`) made a setting.
    static var exampleUncommented: String {
        example.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            guard line.hasPrefix("# "), let equals = line.firstIndex(of: "=") else { return String(line) }
            let key = String(line.dropFirst(2)[..<equals]).trimmingWhitespace()
            let isKey = !key.isEmpty && key.allSatisfy { $0.isLowercase || $0 == "_" }
            return isKey ? String(line.dropFirst(2)) : String(line)
        }.joined(separator: "\n")
    }

    @Test("the example parses as installed, and with every commented-out setting in force")
    func exampleParses() throws {
        _ = try DaemonConfig.parse(Self.example)
        let uncommented = Self.exampleUncommented
        #expect(uncommented != Self.example, "the example shows no commented-out setting")
        _ = try DaemonConfig.parse(uncommented)
    }

    @Test("every setting is in the example (set or commented out), the reference table and the man page")
    func everySettingDocumented() {
        let uncommented = Self.exampleUncommented
        let reference = Self.read("docs/configuration.md")
        let manual = Self.read("docs/diligenced.conf.5.scd")
        for (section, keys) in DaemonConfig.knownSettings {
            let inExample = Self.settings(in: uncommented)
            for key in keys {
                #expect(inExample.contains("\(section).\(key)"), "[\(section)] \(key) is not in contrib/diligenced.conf.example")
                #expect(reference.contains("`\(key)`"), "[\(section)] \(key) is not in docs/configuration.md")
                #expect(manual.contains("*\(key)*"), "[\(section)] \(key) is not in docs/diligenced.conf.5.scd")
            }
            #expect(reference.contains("`[\(section)]`"), "[\(section)] is not in docs/configuration.md")
            #expect(manual.contains("# [\(section)]"), "[\(section)] is not in docs/diligenced.conf.5.scd")
        }
    }

    /// `section.key` of every setting line of `text`.
    static func settings(in text: String) -> Set<String> {
        var section = ""
        var found: Set<String> = []
        for line in text.split(separator: "\n") {
            let trimmed = String(line).trimmingWhitespace()
            if trimmed.hasPrefix("[") && trimmed.hasSuffix("]") {
                section = String(trimmed.dropFirst().dropLast())
            } else if !trimmed.hasPrefix("#"), !trimmed.hasPrefix(";"), let equals = trimmed.firstIndex(of: "=") {
                found.insert(section + "." + String(trimmed[..<equals]).trimmingWhitespace())
            }
        }
        return found
    }
}
