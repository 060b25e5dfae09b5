import DiligenceCore

extension Store {
    /// Runs `body` in one write transaction: everything it writes is committed together (one
    /// disk flush with `synchronous=FULL`) or, when it throws, not at all. Nested calls join the
    /// open transaction. The daemon writes a phase end's session and saved timer this way,
    /// with `flush: .byCaller`: its events go out first, then `flushJournal()`.
    public func transaction<T>(flush: SQLite.Flush = .onCommit, lockWaitMilliseconds: Int32? = nil,
                               _ body: () throws(DiligenceError) -> T) throws(DiligenceError) -> T {
        try connection.transaction(flush: flush, lockWaitMilliseconds: lockWaitMilliseconds, body)
    }

    /// Waits until every committed write is on disk (see `SQLite.flushJournal`).
    public func flushJournal() throws(DiligenceError) {
        try connection.flushJournal()
    }

    /// Runs WAL checkpoints through `schedule` instead of inside a commit (see `SQLite.deferCheckpoints`).
    public func deferCheckpoints(to schedule: @escaping (@escaping () -> Void) -> Void) {
        connection.deferCheckpoints(to: schedule)
    }
}
