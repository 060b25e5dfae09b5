import DiligenceProtocol
import DiligenceTestSupport
import Foundation
import Testing

@testable import DiligenceClient

/// The translation function and the rules of its texts (docs/translating.md): placeholders,
/// where the catalogs are, po/diligence.pot holding every text the sources pass, and the
/// converted files passing every text a person reads through it.
@Suite struct TranslationTests {
    static let root = PackageFiles.root
    /// The files whose person-facing texts all go through tr(): the rest are listed as to do in
    /// docs/translating.md.
    static let convertedFiles =
        ["Arguments.swift", "Run.swift", "StartHint.swift"].map { "Sources/DiligenceClient/" + $0 }
        + ["Sources/DiligenceProtocol/Translatable.swift"]

    /// The Swift files `make pot` reads (MESSAGE_SOURCES), relative to the package.
    static var messageSources: [String] {
        ["Sources/DiligenceClient", "Sources/DiligenceProtocol", "Sources/DiligenceDaemon"].flatMap { directory in
            // The daemon's files are in folders of their own (Desktop, Server, ...).
            (FileManager.default.enumerator(atPath: root + "/" + directory)?.compactMap { $0 as? String } ?? [])
                .filter { $0.hasSuffix(".swift") }.sorted().map { directory + "/" + $0 }
        }
    }

    /// .ci/extract-messages with `arguments`, run in the package: exit status and output.
    static func extractor(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [".ci/extract-messages"] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: root)
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test func placeholdersAreFilledByNameInAnyOrder() {
        #expect(fill("{b} then {a}", ["a": "1", "b": "2"]) == "2 then 1")
        #expect(fill("round {round}/{every}", ["round": "2", "every": "4"]) == "round 2/4")
        // Braces that name no value stay: --format's help writes {{ and {task}.
        #expect(fill("write {{ and }}, {task} {x}", ["x": "y"]) == "write {{ and }}, {task} y")
        #expect(fill("{x}", ["x": "{y}", "y": "no"]) == "{y}", "a value is not filled in again")
    }

    @Test func theCatalogsAreFoundBesideTheInstalledProgram() {
        #expect(localeDirectory(executable: "/usr/bin/diligenced", environment: [:]) == "/usr/share/locale")
        #expect(localeDirectory(executable: "/home/u/.local/bin/diligenced", environment: [:]) == "/home/u/.local/share/locale")
        #expect(
            localeDirectory(executable: "/src/d/.build/x86_64-unknown-linux-gnu/debug/diligencectl", environment: [:])
                == "/src/d/.build/locale")
        #expect(localeDirectory(executable: "/usr/bin/diligenced", environment: ["DILIGENCE_LOCALEDIR": "/tmp/l"]) == "/tmp/l")
    }

    @Test func inTheCLocaleTheTextIsTheEnglishMsgid() {
        // The test process never calls setlocale: C, whatever LANG says.
        #expect(tr("Usage: {usage}", ["usage": "x"]) == "Usage: x")
        #expect(
            trPlural("its {count} recorded session ({time})", "its {count} recorded sessions ({time})", count: 2, ["time": "1h"])
                == "its 2 recorded sessions (1h)")
        #expect(
            trPlural("its {count} recorded session ({time})", "its {count} recorded sessions ({time})", count: 1, ["time": "1h"])
                == "its 1 recorded session (1h)")
    }

    @Test func thePotHoldsEveryTextTheSourcesPass() throws {
        let result = try Self.extractor(["--compare", "po/diligence.pot"] + Self.messageSources)
        #expect(result.status == 0, "po/diligence.pot is behind the sources: run `make pot` and msgmerge\n\(result.output)")
        // And the comparison fails on a text the template lacks.
        let extra = TestRun.makeDirectory(in: TestRun.temporaryBase, prefix: "dlg-pot") + "/Extra.swift"
        defer { try? FileManager.default.removeItem(atPath: (extra as NSString).deletingLastPathComponent) }
        try #"let x = tr("a text no catalog has")"#.write(toFile: extra, atomically: true, encoding: .utf8)
        let missing = try Self.extractor(["--compare", "po/diligence.pot", extra] + Self.messageSources)
        #expect(missing.status == 1 && missing.output.contains("a text no catalog has"), "\(missing.output)")
    }

    @Test func theConvertedFilesPassEveryPersonFacingTextThroughTr() throws {
        let result = try Self.extractor(["--untranslated"] + Self.convertedFiles)
        #expect(result.status == 0, "texts for a person that bypass tr() (or mark one `// untranslated: why`):\n\(result.output)")
        let sample = TestRun.makeDirectory(in: TestRun.temporaryBase, prefix: "dlg-rule") + "/Bad.swift"
        defer { try? FileManager.default.removeItem(atPath: (sample as NSString).deletingLastPathComponent) }
        try #"""
        let a = tr("fine {n}", ["n": "1"])
        let b = "diligencectl: cannot reach the daemon at \(path)"
        // untranslated: the version line scripts read
        let c = "diligencectl version line"
        """#.write(toFile: sample, atomically: true, encoding: .utf8)
        let found = try Self.extractor(["--untranslated", sample])
        #expect(found.status == 1 && found.output.contains("Bad.swift:2:") && !found.output.contains("version line"), "\(found.output)")
    }

    @Test func everyTranslationKeepsItsPlaceholders() throws {
        let catalogs = try FileManager.default.contentsOfDirectory(atPath: Self.root + "/po").filter { $0.hasSuffix(".po") }.sorted()
        #expect(catalogs == ["de.po", "zh_CN.po"])
        let result = try Self.extractor(["--check-placeholders"] + catalogs.map { "po/" + $0 })
        #expect(result.status == 0, "\(result.output)")
    }
}
