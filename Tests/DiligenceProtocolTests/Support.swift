import DiligenceCore
import DiligenceJSON
import DiligenceTestSupport
import Testing

@testable import DiligenceProtocol

#if canImport(Glibc)
    import Glibc
#endif

// MARK: Test helpers, written once

/// A request parsed from one line of text; fails the test when the line is refused.
func request(_ line: String) throws -> Request {
    switch Request.parse(line: Array(line.utf8)) {
    case .success(let request): return request
    case .failure(let failure):
        Issue.record("refused: \(failure.error.code) \(failure.error.message)")
        throw failure
    }
}
