import DiligenceCore

extension Store {
    /// Runs `body` in one write transaction: everything it writes is committed together (one
    /// disk flush with `synchronous=FULL`) or, when it throws, not at all. Nested calls join the
    /// open transaction. The daemon writes a phase end's session and saved timer this way.
    public func transaction<T>(_ body: () throws(DiligenceError) -> T) throws(DiligenceError) -> T {
        try connection.transaction(body)
    }
}
