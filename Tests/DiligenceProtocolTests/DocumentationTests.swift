import DiligenceCore
import DiligenceTestSupport
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
        case .text, .taskName, .deviceName, .choice, .note: "string"
        case .integer: "integer"
        case .boolean: "boolean"
        case .duration: "duration"
        case .timeOfDay, .nameOrOff: "string or null"
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

    /// Every `"snake_case"` literal passed as an error code in Sources: `DiligenceError("code"`,
    /// `code: "code"`, `fail("code"`, `asError("code"`, `.choice(..., code: "code")`.
    static func codesInSources() -> Set<String> {
        var found: Set<String> = []
        for file in swiftFiles(under: root + "/Sources") {
            let text = read(String(file.dropFirst(root.count + 1)))
            for marker in ["DiligenceError(", "DateTextError(", "code: ", "fail(", "asError("] {
                var rest = Substring(text)
                while let at = rest.firstRange(of: marker) {
                    rest = rest[at.upperBound...]
                    let literal = rest.drop { $0 == " " || $0 == "\n" }
                    guard literal.first == "\"" else { continue }
                    let word = literal.dropFirst().prefix { $0 != "\"" }
                    if !word.isEmpty, word.allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "_" }) { found.insert(String(word)) }
                }
            }
        }
        return found
    }

    static func swiftFiles(under directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var files: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix(".") { continue }
            let path = directory + "/" + name
            if entry.pointee.d_type == DT_DIR { files += swiftFiles(under: path) } else if name.hasSuffix(".swift") { files.append(path) }
        }
        return files
    }

    @Test("the error tables list exactly the codes the sources use")
    func errorCodes() {
        let doc = Self.protocolDoc
        let answered = Self.codes(under: "### Answers", in: doc)
        let atStart = Self.codes(under: "### At start", in: doc)
        let documented = Set(answered + atStart)
        let used = Self.codesInSources()
        #expect(used.count > 40, "the scan found only \(used.sorted())")
        #expect(
            used.subtracting(documented).isEmpty, "used in Sources, missing in docs/protocol.md: \(used.subtracting(documented).sorted())")
        #expect(
            documented.subtracting(used).isEmpty, "in docs/protocol.md, used nowhere in Sources: \(documented.subtracting(used).sorted())")
        #expect(Set(answered).count == answered.count && Set(atStart).count == atStart.count, "a code is listed twice")
    }

    /// Codes the sources compare with (`error.code == "…"`) and the client's list of codes that
    /// mean a mistake in what was typed (exit 2) name documented codes: a renamed code cannot
    /// leave a stale one behind.
    @Test("every code the sources test for or the client sorts by is documented")
    func codesReferredTo() {
        let doc = Self.protocolDoc
        let documented = Set(Self.codes(under: "### Answers", in: doc) + Self.codes(under: "### At start", in: doc))
        var referred: Set<String> = []
        for file in Self.swiftFiles(under: Self.root + "/Sources") {
            let text = Self.read(String(file.dropFirst(Self.root.count + 1)))
            referred.formUnion(Self.literals(after: "error.code == ", in: Substring(text)))
        }
        let run = Self.read("Sources/DiligenceClient/Run.swift")
        let list = run.firstRange(of: "mistakesInWhatWasTyped").map { run[$0.upperBound...].prefix { $0 != "]" } } ?? ""
        let typed = Self.literals(after: "\"", in: "\"" + list)
        #expect(typed.count > 10, "the scan found only \(typed) in Run.swift's mistakesInWhatWasTyped")
        #expect(referred.count >= 3, "the scan found only \(referred) compared with error.code")
        let stale = referred.union(typed).subtracting(documented).sorted()
        #expect(stale.isEmpty, "referred to in Sources but not in docs/protocol.md: \(stale)")
    }

    /// The snake_case word of each string literal right after `marker` in `text`.
    static func literals(after marker: String, in text: Substring) -> [String] {
        var found: [String] = []
        var rest = text
        while let at = rest.firstRange(of: marker) {
            rest = rest[at.upperBound...]
            let literal = rest.drop { $0 == " " || $0 == "\n" || $0 == "," }
            let start = marker.hasSuffix("\"") ? literal : (literal.first == "\"" ? literal.dropFirst() : "")
            let word = start.prefix { $0 != "\"" }
            if !word.isEmpty, word.allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "_" }) { found.append(String(word)) }
        }
        return found
    }
}
