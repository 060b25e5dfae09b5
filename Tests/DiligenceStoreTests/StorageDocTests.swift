import DiligenceTestSupport
import Testing

@testable import DiligenceStore

/// docs/storage.md's schema table is the reference for anyone reading the file with sqlite3: a
/// migration that adds a table or a column without a word there fails here.
@Suite struct StorageDocTests {
    static let doc = PackageFiles.read("docs/storage.md")

    /// The lines of the "## Schema (version N)" section, up to the next heading of that level.
    static func schemaSection(of doc: String) -> (version: Int?, lines: [Substring]) {
        let lines = doc.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("## Schema (version ") }) else { return (nil, []) }
        let version = Int(lines[start].dropFirst("## Schema (version ".count).prefix { $0.isNumber })
        let rest = lines[(start + 1)...]
        return (version, Array(rest.prefix { !$0.hasPrefix("## ") }))
    }

    /// The columns the doc names for `table`: every backticked word of its row in the table.
    static func documentedColumns(of table: String, in lines: [Substring]) -> Set<String>? {
        guard let row = lines.first(where: { $0.hasPrefix("| `\(table)` |") }) else { return nil }
        let parts = row.split(separator: "`", omittingEmptySubsequences: false)
        return Set(stride(from: 1, to: parts.count, by: 2).map { String(parts[$0]) })
    }

    @Test func theScannerReadsTheSectionAndARowsColumns() {
        let doc = "# S\n## Schema (version 4)\n| `t` | `a` INTEGER, `b` (`x`) |\n## Next\n| `u` | `c` |"
        let section = Self.schemaSection(of: doc)
        #expect(section.version == 4)
        #expect(Self.documentedColumns(of: "t", in: section.lines) == ["t", "a", "b", "x"])
        #expect(Self.documentedColumns(of: "u", in: section.lines) == nil)
    }

    @Test func theSchemaTableNamesTheVersionAndEveryTableAndColumn() throws {
        let section = Self.schemaSection(of: Self.doc)
        #expect(section.version == Store.schemaVersion, "docs/storage.md's schema heading names another version")
        let store = try Store(location: .memory)
        let tables = try store.connection.query(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ).map { $0.string(0) }
        #expect(tables.count >= 10, "the scan found only \(tables)")
        var missing: [String] = []
        for table in tables {
            guard let documented = Self.documentedColumns(of: table, in: section.lines) else {
                missing.append("table \(table)")
                continue
            }
            let columns = try store.connection.query("SELECT name FROM pragma_table_info(?)", [.text(table)]).map {
                $0.string(0)
            }
            missing += columns.filter { !documented.contains($0) }.map { "\(table).\($0)" }
        }
        #expect(missing.isEmpty, "docs/storage.md's schema table lacks: \(missing.joined(separator: ", "))")
    }
}
