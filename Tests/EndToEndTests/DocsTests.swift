import Foundation
import Testing

/// Names the docs promise for scripting the journal are names the daemon logs.
@Suite struct DocsTests {
    /// Every `"EVENT", "<name>"` journal field in the daemon's sources, and the protocol's
    /// timer event names (TimerEvent.name, logged as EVENT for each phase change).
    static var loggedEvents: Set<String> {
        let sources = ["Sources/DiligenceDaemon", "Sources/DiligenceCore"].flatMap { dir in
            ((try? FileManager.default.contentsOfDirectory(atPath: Binaries.packageRoot + "/" + dir)) ?? [])
                .filter { $0.hasSuffix(".swift") }.map { readTextFile(Binaries.packageRoot + "/" + dir + "/" + $0) }
        }.joined(separator: "\n")
        var names = Set<String>()
        for pattern in [#""EVENT", "([a-z_]+)""#, #"case \.[A-Za-z]+: "([a-z_]+)""#] {
            let regex = try! NSRegularExpression(pattern: pattern)
            for match in regex.matches(in: sources, range: NSRange(sources.startIndex..., in: sources)) {
                if let range = Range(match.range(at: 1), in: sources) { names.insert(String(sources[range])) }
            }
        }
        return names
    }

    @Test("every EVENT value docs/systemd.md lists is one the daemon logs")
    func journalEventNames() throws {
        let doc = readTextFile(Binaries.packageRoot + "/docs/systemd.md")
        let start = try #require(doc.range(of: "`EVENT` ("), "docs/systemd.md lists no EVENT values")
        let list = doc[start.upperBound...].prefix { $0 != ")" }
        let documented = String(list).split(separator: "`").map(String.init)
            .filter { $0.allSatisfy { $0.isLowercase || $0 == "_" } && !$0.isEmpty }
        #expect(documented.count >= 5, "\(documented)")
        let logged = Self.loggedEvents
        for name in documented {
            #expect(logged.contains(name), "docs/systemd.md lists EVENT \(name), which the daemon never logs (it logs \(logged.sorted()))")
        }
    }
}
