import DiligenceCore
import DiligenceJSON
import DiligenceTestSupport
import DiligenceTime
import Testing

@testable import DiligenceProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// docs/protocol.md is the reference scripts are written against: its command tables must say
/// what the schema enforces, and its error table must list every code the sources can send.
@Suite("docs/protocol.md against the schema and the sources")
struct DocumentationTests {
    static let root = PackageFiles.root

    static func read(_ relative: String) -> String { PackageFiles.read(relative) }

    static var protocolDoc: String { read("docs/protocol.md") }

    // MARK: Rendering the schema as the docs show it

    static func typeText(_ type: FieldType) -> String {
        switch type {
        case .text, .taskName, .deviceName, .choice, .note, .breakRule: "string"
        case .integer: "integer"
        case .boolean: "boolean"
        case .duration: "duration"
        case .timeOfDay, .nameOrOff: "string or null"
        case .durationOrOff: "duration or null"
        }
    }

    static func rangeText(_ type: FieldType) -> String {
        switch type {
        case .text(let maxLength): "at most \(maxLength) characters"
        case .taskName: "a [task name](#task-names)"
        case .deviceName: "a device name: as a [task name](#task-names)"
        case .integer(let range): "\(range.lowerBound) to \(range.upperBound)"
        case .boolean: "`true` `false`"
        case .duration(let range):
            "\(DurationText.format(range.lowerBound)) to \(DurationText.format(range.upperBound)): seconds, or text (`25m`, `1h30m`)"
        case .choice(let words, _): words.map { "`\($0)`" }.joined(separator: " ")
        case .timeOfDay: "`HH:MM` (24-hour), or `off`/null"
        case .nameOrOff(let maxLength): "a name of at most \(maxLength) characters, or `off`/null"
        case .note: "one line of at most \(SessionNote.maxLength) characters, no control characters; empty removes it"
        case .breakRule: "a ratio `N/M` (1 ≤ N ≤ M ≤ 100), or a table `<25m=5m,<50m=8m,else=15m`"
        case .durationOrOff(let range):
            "\(DurationText.format(range.lowerBound)) to \(DurationText.format(range.upperBound)): seconds, or text (`25m`), or `off`/null"
        }
    }

    static func defaultText(_ field: FieldSpec) -> String {
        switch field.presence {
        case .required: "required"
        case .optional: ""
        case .defaulted: "`\(field.defaultText ?? "")`"
        }
    }

    static let header = ["| field | type | range | default | meaning |", "|---|---|---|---|---|"]

    /// The rows of `spec`'s field table.
    static func rows(_ spec: CommandSpec) -> [String] {
        spec.fields.map { f in "| `\(f.name)` | \(typeText(f.type)) | \(rangeText(f.type)) | \(defaultText(f)) | \(f.doc) |" }
    }

    /// The overview rows: `| `name` | summary | result |`.
    static func overviewRow(_ spec: CommandSpec) -> String {
        "| [`\(spec.name)`](#\(spec.name)) | \(spec.summary) | \(spec.result) |"
    }

    // MARK: Reading the doc

    /// The table lines right after `### \`name\`` (the first table in that section).
    static func table(after heading: String, in text: String) -> [String]? {
        guard let start = text.firstRange(of: "\n" + heading + "\n") else { return nil }
        var lines: [String] = []
        var inTable = false
        for line in text[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("#") { break }
            if line.hasPrefix("|") {
                inTable = true
                lines.append(String(line))
            } else if inTable {
                break
            }
        }
        return inTable ? lines : nil
    }

    @Test("every command has a section whose field table is the schema's")
    func commandTables() throws {
        let doc = Self.protocolDoc
        try #require(!doc.isEmpty, "docs/protocol.md not found under \(Self.root)")
        var mismatches: [String] = []
        for spec in CommandSpec.all {
            let heading = "### `\(spec.name)`"
            let expected = spec.fields.isEmpty ? nil : Self.header + Self.rows(spec)
            let found = Self.table(after: heading, in: doc)
            guard doc.contains("\n" + heading + "\n") else {
                mismatches.append("no section \(heading)")
                continue
            }
            if found != expected {
                mismatches.append(
                    "\(heading): the table should read\n" + (expected ?? ["(no table: it takes no fields)"]).joined(separator: "\n"))
            }
        }
        #expect(
            mismatches.isEmpty, Comment(rawValue: "docs/protocol.md differs from the schema:\n\n" + mismatches.joined(separator: "\n\n")))
    }

    @Test("the command overview lists every command, in the schema's order, with its summary and result")
    func overview() throws {
        let doc = Self.protocolDoc
        let rows = doc.split(separator: "\n").filter { $0.hasPrefix("| [`") }.map(String.init)
        let expected = CommandSpec.all.map(Self.overviewRow)
        #expect(
            rows == expected, Comment(rawValue: "the overview table under \"## Commands\" should read\n" + expected.joined(separator: "\n"))
        )
    }

    // MARK: Error codes

    /// The codes of the table under `heading` (a `| \`code\` | meaning |` table).
    static func codes(under heading: String, in text: String) -> [String] {
        guard let start = text.firstRange(of: heading) else { return [] }
        var codes: [String] = []
        for line in text[start.upperBound...].split(separator: "\n").prefix(while: { !$0.hasPrefix("#") }) where line.hasPrefix("| `") {
            codes.append(String(line.dropFirst(3).prefix { $0 != "`" }))
        }
        return codes
    }

    /// Every code the sources can send or log: the enum's raw values.
    static func codesInSources() -> Set<String> { Set(DiligenceError.Code.allCases.map(\.rawValue)) }

    @Test("the error tables list exactly the codes the sources use")
    func errorCodes() {
        let doc = Self.protocolDoc
        let answered = Self.codes(under: "### Answers", in: doc)
        let atStart = Self.codes(under: "### At start", in: doc)
        let documented = Set(answered + atStart)
        let used = Self.codesInSources()
        #expect(used.count > 40, "DiligenceError.Code has only \(used.sorted())")
        #expect(
            used.subtracting(documented).isEmpty,
            "in DiligenceError.Code, missing in docs/protocol.md: \(used.subtracting(documented).sorted())")
        #expect(
            documented.subtracting(used).isEmpty,
            "in docs/protocol.md, not in DiligenceError.Code: \(documented.subtracting(used).sorted())")
        #expect(Set(answered).count == answered.count && Set(atStart).count == atStart.count, "a code is listed twice")
    }

    /// The modules below the core name their refusals with codes of their own: each must reach
    /// the wire as the same string, or a script matching on it would break.
    @Test("the date and JSON refusals keep their codes on the wire")
    func lowerCodesReachTheWireUnchanged() {
        for code in DateTextError.Code.allCases {
            #expect(DiligenceError.Code(code).rawValue == code.rawValue, "\(code)")
        }
        for code in JSONParseError.Code.allCases {
            #expect(DiligenceError.Code(code).rawValue == code.rawValue, "\(code)")
        }
    }
}
