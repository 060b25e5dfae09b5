import Foundation
import Testing

/// Rules of the repository as a whole, checked by reading it:
/// 1. Package.swift declares every package module a target imports (SwiftPM builds an undeclared
///    import only while some other path happens to build that module first);
/// 2. the sources, tests, docs and README name no Markdown file that is not in the repository
///    (docs/ must stand alone: no SPEC.md, DESIGN.md or notes kept elsewhere);
/// 3. no error code is compared with a string literal in Sources: codes are enum cases, so a
///    renamed code breaks the build instead of leaving a comparison that never matches.
/// Each scanner is tested on the mistake it exists for, then run over the tree.
@Suite struct RepositoryRulesTests {
    static let root = SourceRulesTests.root

    @Test func theManifestScannerReadsTargetsAndTheirDependencies() {
        let manifest = """
            .target(name: "A"),
            // .target(name: "Commented", dependencies: ["X"]),
            .target(
                name: "B", dependencies: ["A", "CLib"],
                resources: [.embedInCode("VERSION")]),
            .executableTarget(name: "tool", dependencies: ["B"]),
            .target(name: "Kit", dependencies: ["A"], path: "Tests/Kit"),
            .testTarget(name: "BTests", dependencies: ["B", "Kit"]),
            .systemLibrary(name: "CLib", pkgConfig: "lib"),
            """
        let targets = RepositoryRules.targets(inManifest: manifest)
        #expect(targets.map(\.name) == ["A", "B", "tool", "Kit", "BTests", "CLib"])
        #expect(targets.map(\.dependencies) == [[], ["A", "CLib"], ["B"], ["A"], ["B", "Kit"], []])
        #expect(targets.map(\.directory) == ["Sources/A", "Sources/B", "Sources/tool", "Tests/Kit", "Tests/BTests", "Sources/CLib"])
    }

    @Test func theImportScannerFindsEveryKindOfImport() {
        let source = """
            import A
            @testable import B
            internal import C
            // import Commented
            #if canImport(Glibc)
                import Glibc
                import CLinux
            #endif
            let text = "import NotCode"
            """
        #expect(RepositoryRules.imports(in: source) == ["A", "B", "C", "CLinux", "Glibc"])
    }

    @Test func everyTargetDeclaresTheModulesItImports() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let targets = RepositoryRules.targets(inManifest: manifest)
        #expect(targets.count > 10, "the scan found only \(targets.map(\.name))")
        let modules = Set(targets.map(\.name))
        var undeclared: [String] = []
        for target in targets {
            var imported: Set<String> = []
            for file in SourceRulesTests.swiftFiles(under: target.directory) {
                imported.formUnion(RepositoryRules.imports(in: file.text))
            }
            for module in imported.intersection(modules).subtracting(target.dependencies + [target.name]).sorted() {
                undeclared.append("\(target.name) imports \(module)")
            }
        }
        #expect(undeclared.isEmpty, "add these to the targets' dependencies in Package.swift:\n\(undeclared.joined(separator: "\n"))")
    }

    @Test func theCodeComparisonScannerFindsStringLiterals() {
        let source = """
            } catch where error.code == "database_locked" {
            if failure.error.code != "storage_error" { return }
            } catch where error.code == .databaseLocked {
            // error.code == "in a comment"
            """
        #expect(RepositoryRules.codesComparedWithStrings(in: source).count == 2)
    }

    @Test func noErrorCodeIsComparedWithAString() {
        let files = SourceRulesTests.swiftFiles(under: "Sources")
        #expect(files.count > 50, "the scan found only \(files.count) files")
        let found = files.flatMap { file in RepositoryRules.codesComparedWithStrings(in: file.text).map { "\(file.path): \($0)" } }
        #expect(found.isEmpty, "compare with a DiligenceError.Code case instead:\n\(found.joined(separator: "\n"))")
    }

    @Test func theReferenceScannerFindsMarkdownFiles() {
        let text = "See SPEC.md \"Timer semantics\", docs/protocol.md#watch, (storage.md) and [x](../README.md)."
        #expect(RepositoryRules.markdownReferences(in: text) == ["SPEC.md", "docs/protocol.md", "storage.md", "../README.md"])
    }

    /// A name counts as present when it is a path from the root, from docs/, or a file's name
    /// anywhere in the repository's docs/ and root.
    @Test func everyMarkdownFileNamedIsInTheRepository() {
        var missing: [String] = []
        let texts =
            ["Sources", "Tests"].flatMap { SourceRulesTests.swiftFiles(under: $0) }
            + RepositoryRules.files(under: "docs", in: Self.root, endingIn: [".md", ".scd"])
            + RepositoryRules.files(under: ".", in: Self.root, endingIn: ["README.md", "Package.swift", "Makefile"], recursive: false)
        #expect(texts.count > 100, "the scan read only \(texts.count) files")
        for file in texts where !file.path.hasSuffix("RepositoryRulesTests.swift") {
            for name in RepositoryRules.markdownReferences(in: file.text) where !RepositoryRules.exists(name, root: Self.root) {
                missing.append("\(file.path): \(name)")
            }
        }
        #expect(missing.isEmpty, "files named but not in the repository:\n\(missing.joined(separator: "\n"))")
    }
}

extension RepositoryRulesTests {
    @Test func theFolderScannerReadsModulesAndTheirFolders() {
        let doc = """
            # Architecture
            ### `Elsewhere`
            #### `Ignored/` — not under the section.
            ## Modules and their files
            ### `DiligenceA`
            A paragraph naming `Mentioned/` in passing.
            - `One.swift` — a file, not a folder.
            #### `Server/` — the socket.
            ### `CLib`, `CTwo`
            ## Next
            #### `After/` — not in the section.
            """
        #expect(RepositoryRules.listedFolders(inArchitecture: doc) == ["DiligenceA", "DiligenceA/Server", "CLib", "CTwo"])
    }

    /// docs/architecture.md names every module and every folder under Sources, and none that is
    /// not there: a new or moved folder changes the doc, a renamed file does not.
    @Test func theArchitectureNamesEveryModuleAndFolder() throws {
        let doc = try String(contentsOf: Self.root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        let listed = RepositoryRules.listedFolders(inArchitecture: doc)
        let sources = Self.root.appendingPathComponent("Sources").path
        let folders = (FileManager.default.enumerator(atPath: sources)?.compactMap { $0 as? String } ?? []).filter { name in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: sources + "/" + name, isDirectory: &isDirectory) && isDirectory.boolValue
        }
        #expect(folders.count > 10, "the scan found only \(folders.count) folders")
        let missing = Set(folders).subtracting(listed).sorted()
        let stale = Set(listed).subtracting(folders).sorted()
        #expect(missing.isEmpty, "name each in docs/architecture.md (### module, #### `Folder/`):\n\(missing.joined(separator: "\n"))")
        #expect(stale.isEmpty, "docs/architecture.md names folders that are not in Sources:\n\(stale.joined(separator: "\n"))")
        #expect(Set(listed).count == listed.count, "a folder is named twice")
    }

    @Test func theStoredPropertyScannerSkipsComputedOnesAndNestedTypes() {
        let source = """
            public final class Daemon: TimerOutlet {
                let paths: DaemonPaths
                var config: DaemonConfig {
                    didSet { apply() }
                }
                private(set) var desktop: Desktop!
                lazy var sound = Sound()
                var clocks: Clocks { driver.clocks }
                var machine: TimerMachine {
                    driver.machine
                }
                func f() { let local = 1 }
                struct Inner {
                    let notCounted: Int
                }
            }
            struct After { let other: Int }
            """
        #expect(RepositoryRules.storedProperties(of: "Daemon", in: source) == ["paths", "config", "desktop", "sound"])
    }

    /// `Daemon` is the wiring: its parts live in a few groups, not in dozens of loose properties.
    @Test func theDaemonHoldsAtMostTwelveStoredProperties() throws {
        let source = try String(
            contentsOf: Self.root.appendingPathComponent("Sources/DiligenceDaemon/Daemon.swift"), encoding: .utf8)
        let stored = RepositoryRules.storedProperties(of: "Daemon", in: source)
        #expect(stored.count >= 5, "the scan found only \(stored)")
        #expect(stored.count <= 12, "group the parts instead: \(stored.joined(separator: ", "))")
    }

    /// The SQLite wrapper is generic: its failures are its own type, and the store alone turns
    /// them into the application's errors.
    @Test func theSQLiteWrapperKnowsNothingOfTheApplicationsErrors() throws {
        let source = try String(
            contentsOf: Self.root.appendingPathComponent("Sources/DiligenceStore/SQLite.swift"), encoding: .utf8)
        let found = source.split(separator: "\n").filter { $0.contains("DiligenceError") || $0.contains("import DiligenceCore") }
        #expect(found.isEmpty, "throw SQLiteError there, mapped in the store:\n\(found.joined(separator: "\n"))")
    }

    @Test func theClosureSlotScannerFindsEmptyDefaultsAndOpenOptionals() {
        let source = """
            var merged: (_ folded: [Int64: Int64]) -> Void = { _ in }
            var tasksImported: () -> Void = {}
            public var onCommit: (() -> Void)?
            var onClose: ((ClientConnection) -> Void)?
            private var onLine: ((String) -> Void)?
            let onAction: (String) -> Void
            var removals: () -> [Int] = { preconditionFailure("never connected") }
            var merged: (Int) -> Void = { _ in fatalError("never connected") }
            let kept: () -> Int = { 0 }
            // var onCommented: (() -> Void)?
            """
        #expect(
            RepositoryRules.closureSlots(in: source).map { $0.split(separator: ":")[0].trimmingCharacters(in: .whitespaces) } == [
                "var merged", "var tasksImported", "public var onCommit", "var onClose", "var removals", "var merged",
            ])
    }

    /// Collaborators are wired at birth or in one connect step: a closure slot that does nothing
    /// until someone remembers to fill it fails silently when forgotten.
    @Test func noStoredClosureWaitsEmptyToBeWired() {
        let files = ["Sources/DiligenceDaemon", "Sources/DiligenceStore", "Sources/DiligenceSync"].flatMap {
            SourceRulesTests.swiftFiles(under: $0)
        }
        #expect(files.count > 40, "the scan found only \(files.count) files")
        let found = files.flatMap { file in RepositoryRules.closureSlots(in: file.text).map { "\(file.path): \($0)" } }
        #expect(found.isEmpty, "pass these to init or to one connect step:\n\(found.joined(separator: "\n"))")
    }
}

/// The scanners (text in, findings out).
enum RepositoryRules {
    /// The stored properties declared directly in `class`'s body (4-space indented `let`/`var`):
    /// a `var` whose braces hold a body rather than `didSet`/`willSet` is computed.
    static func storedProperties(of type: String, in source: String) -> [String] {
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.contains("class \(type)") && $0.hasSuffix("{") }) else { return [] }
        var names: [String] = []
        let declaration = /^    (?:(?:public|private|fileprivate|internal)(?:\(set\))? )*(?:lazy )?(?:let|var) (\w+)/
        for i in lines.index(after: start)..<lines.endIndex {
            let line = lines[i]
            if line == "}" { break }
            guard let match = line.firstMatch(of: declaration) else { continue }
            if line.hasSuffix("{") || line.contains("{ ") && !line.contains("= ") {
                let next = i + 1 < lines.endIndex ? lines[i + 1] : ""
                guard line.hasSuffix("{") && (next.contains("didSet") || next.contains("willSet")) else { continue }
            }
            names.append(String(match.1))
        }
        return names
    }

    /// The modules (`### \`Module\``, several on one line) and their folders
    /// (`#### \`Folder/\``) named under "## Modules and their files", as paths under Sources.
    static func listedFolders(inArchitecture doc: String) -> [String] {
        var listed: [String] = []
        var inList = false
        var module: String?
        for line in doc.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") {
                inList = line == "## Modules and their files"
                module = nil
            } else if inList, line.hasPrefix("### ") {
                let modules = strings(in: Substring(line.replacingOccurrences(of: "`", with: "\"")))
                listed += modules
                module = modules.first
            } else if inList, let module, line.hasPrefix("#### `") {
                let folder = line.dropFirst(6).prefix { $0 != "`" }
                listed.append(module + "/" + folder.trimmingCharacters(in: CharacterSet(charactersIn: "/")))
            }
        }
        return listed
    }

    struct Target: Equatable {
        var name: String
        var dependencies: [String]
        var directory: String
    }

    /// The targets declared in a Package.swift, in order: each `.target(`, `.executableTarget(`,
    /// `.testTarget(` or `.systemLibrary(` call with its name, string dependencies and directory.
    static func targets(inManifest manifest: String) -> [Target] {
        let source = SourceRules.code(manifest, keepingStrings: true).joined(separator: "\n")
        let call = try! NSRegularExpression(pattern: #"\.(target|executableTarget|testTarget|systemLibrary)\("#)
        var found: [Target] = []
        for match in call.matches(in: source, range: NSRange(source.startIndex..., in: source)) {
            guard let range = Range(match.range, in: source), let kind = Range(match.range(at: 1), in: source) else { continue }
            let arguments = balanced(source[range.upperBound...])
            guard let name = firstString(after: "name:", in: arguments) else { continue }
            var dependencies: [String] = []
            if let list = arguments.range(of: #"dependencies:\s*\[[^\]]*\]"#, options: .regularExpression) {
                dependencies = strings(in: arguments[list])
            }
            let folder = source[kind] == "testTarget" ? "Tests" : "Sources"
            found.append(
                Target(name: name, dependencies: dependencies, directory: firstString(after: "path:", in: arguments) ?? "\(folder)/\(name)")
            )
        }
        return found
    }

    /// The text up to the parenthesis closing the call whose arguments start `text`.
    static func balanced(_ text: Substring) -> Substring {
        var depth = 1
        for index in text.indices {
            if text[index] == "(" { depth += 1 }
            if text[index] == ")" {
                depth -= 1
                if depth == 0 { return text[..<index] }
            }
        }
        return text
    }

    static func firstString(after label: String, in text: Substring) -> String? {
        guard let at = text.range(of: label + #"\s*"[^"]*""#, options: .regularExpression) else { return nil }
        return strings(in: text[at]).first
    }

    static func strings(in text: Substring) -> [String] {
        text.split(separator: "\"", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// The modules a Swift file imports (any attribute or access level, inside `#if` too), sorted.
    static func imports(in text: String) -> [String] {
        let pattern = #"^\s*(?:@\w+\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+(?:\w+\s+)?([A-Za-z_]\w*)"#
        let regex = try! NSRegularExpression(pattern: pattern)
        let names = SourceRules.code(text).compactMap { line -> String? in
            guard let match = regex.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)),
                let range = Range(match.range(at: 1), in: line)
            else { return nil }
            return String(line[range])
        }
        return Set(names).sorted()
    }

    /// Names of Markdown files in `text`: `name.md`, with any relative directories before it.
    static func markdownReferences(in text: String) -> [String] {
        let regex = try! NSRegularExpression(pattern: #"(?<![\w./-])((?:\.{1,2}/|[\w-]+/)*[\w.-]+\.md)\b"#)
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    /// Stored closures (comments left out) that default to an empty body or to a trap (a slot
    /// that fails only when first called, not when the wiring forgot it), and optional closure
    /// slots that code outside the type may fill after construction (`var x: ((…) -> …)?`, not private).
    static func closureSlots(in text: String) -> [String] {
        let emptyDefault = /(?:let|var) \w+: [^=]*->[^=]*= \{\s*(?:[\w, ]+ in\s*)?\}\s*$/
        let trapDefault = /var \w+: [^=]*->[^=]*= \{\s*(?:[\w, ]+ in\s*)?(?:preconditionFailure|fatalError)\(.*\)\s*\}\s*$/
        let openOptional = /^\s*(?:public |internal |package )?var \w+: \(\(.*\) -> .*\)\?\s*(?:\{\s*)?$/
        return SourceRules.code(text).filter { $0.contains(emptyDefault) || $0.contains(trapDefault) || $0.contains(openOptional) }
    }

    /// The lines of `text` (comments left out) comparing a `code` with a string literal.
    static func codesComparedWithStrings(in text: String) -> [String] {
        SourceRules.code(text, keepingStrings: true).filter { $0.contains("code == \"") || $0.contains("code != \"") }
    }

    static func exists(_ name: String, root: URL) -> Bool {
        let base = name.split(separator: "/").last.map(String.init) ?? name
        let candidates = [name, "docs/" + name, base, "docs/" + base]
        return candidates.contains { FileManager.default.fileExists(atPath: root.appendingPathComponent($0).path) }
    }

    /// Files under `directory` whose names end in one of `suffixes`, with their text.
    static func files(under directory: String, in root: URL, endingIn suffixes: [String], recursive: Bool = true) -> [(
        path: String, text: String
    )] {
        let base = root.appendingPathComponent(directory).path
        let names =
            recursive
            ? (FileManager.default.enumerator(atPath: base)?.compactMap { $0 as? String } ?? [])
            : ((try? FileManager.default.contentsOfDirectory(atPath: base)) ?? [])
        return names.filter { name in suffixes.contains { name.hasSuffix($0) } }.sorted().compactMap { name in
            (try? String(contentsOfFile: base + "/" + name, encoding: .utf8)).map { (directory + "/" + name, $0) }
        }
    }
}
