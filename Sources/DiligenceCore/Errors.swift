/// An error a person reads and a script matches on: a stable snake_case `code` (sent as is by the
/// control protocol, listed in docs/protocol.md) and a `message` saying what went wrong and what to do.
public struct DiligenceError: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: String
    public var message: String

    public init(_ code: String, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
