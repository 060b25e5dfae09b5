import DiligenceCore

/// The error code a throwing call fails with, or nil when it does not throw.
/// (Untyped `throws`: closures inside `#expect` do not infer a typed error.)
public func errorCode<T>(_ body: () throws -> T) -> String? {
    do {
        _ = try body()
        return nil
    } catch let error as DiligenceError {
        return error.code.rawValue
    } catch {
        return "not a DiligenceError: \(error)"
    }
}

/// What docs/protocol.md promises clients.
public enum ProtocolDocs {
    public struct Missing: Error, CustomStringConvertible {
        public var description: String
    }

    /// The codes of its table of errors a request can be answered with ("### Answers").
    public static func answerCodes() throws -> Set<String> {
        let lines = PackageFiles.read("docs/protocol.md").split(separator: "\n", omittingEmptySubsequences: false)
        guard let section = lines.firstIndex(of: "## Error codes"), let table = lines[section...].firstIndex(of: "### Answers") else {
            throw Missing(description: "docs/protocol.md has no \"## Error codes\" / \"### Answers\" table")
        }
        var codes: Set<String> = []
        for line in lines[(table + 1)...].prefix(while: { !$0.hasPrefix("#") }) where line.hasPrefix("| `") {
            codes.insert(String(line.dropFirst(3).prefix { $0 != "`" }))
        }
        return codes
    }
}
