import DiligenceCore
import DiligenceJSON
import DiligenceTestSupport
import Testing

@testable import DiligenceProtocol

#if canImport(Glibc)
    import Glibc
#endif

// MARK: Test helpers, written once

/// The error code `JSON.parse` fails with, or nil when the text parses.
func jsonErrorCode(_ bytes: [UInt8]) -> String? {
    do {
        _ = try JSON.parse(bytes)
        return nil
    } catch {
        return error.code
    }
}

func jsonErrorCode(_ text: String) -> String? { jsonErrorCode(Array(text.utf8)) }

/// A request parsed from one line of text; fails the test when the line is refused.
func request(_ line: String) throws -> Request {
    switch Request.parse(line: Array(line.utf8)) {
    case .success(let request): return request
    case .failure(let failure):
        Issue.record("refused: \(failure.error.code) \(failure.error.message)")
        throw failure
    }
}
