import DiligenceCore

extension Store {
    /// Runs `body` in one write transaction: everything it writes is committed together (one
    /// disk flush with `synchronous=FULL`) or, when it throws, not at all. Nested calls join the
    /// open transaction. The daemon writes a phase end's session and saved timer this way,
    /// with `flush: .byCaller`: its events go out first, then `flushJournal()`.
    public func transaction<T>(flush: SQLite.Flush = .onCommit, _ body: () throws(DiligenceError) -> T) throws(DiligenceError) -> T {
        try connection.transaction(flush: flush, body)
    }

    /// Runs `body`'s reads in one read transaction: one snapshot of the database, whatever
    /// another connection commits meanwhile (an export read off the daemon's queue).
    public func reading<T>(_ body: () throws(DiligenceError) -> T) throws(DiligenceError) -> T {
        try connection.transaction(temporaryOnly: true, body)
    }

    /// Milliseconds a write waits for another process's lock before `database_locked` (2 s
    /// when opened; the daemon sets 0 and retries instead, docs/reliability.md).
    public var lockWait: Int32 {
        get { connection.busyTimeoutMilliseconds }
        set { connection.busyTimeoutMilliseconds = newValue }
    }

    /// Why a write would go nowhere: the database file was removed or replaced while open;
    /// nil while it is there.
    public var fileGone: String? { connection.fileGone.map { DiligenceError($0).message } }

    /// Waits until every committed write is on disk (see `SQLite.flushJournal`).
    public func flushJournal() throws(DiligenceError) {
        try connection.flushJournal()
    }

    /// Leaves every commit in the database file itself, the write-ahead log empty (see
    /// `SQLite.checkpointIntoFile`): the daemon's last write at a clean exit.
    public func checkpointIntoFile() throws(DiligenceError) {
        try connection.checkpointIntoFile()
    }

    /// Wires what follows a commit, once, before the first write that needs it: checkpoints run
    /// through `schedule` instead of inside a commit, `committed` after each commit (it must not
    /// use the store), `logLost` once a write found the -wal lost and its commits were copied
    /// into the file (`rescued`) or that failed.
    public func connect(
        checkpoints schedule: @escaping (@escaping () -> Void) -> Void, committed: @escaping () -> Void,
        logLost: @escaping (_ rescued: Bool) -> Void
    ) {
        connection.deferCheckpoints(to: schedule, committed: committed, logLost: logLost)
        isConnected = true
    }

    /// Whether the database's -wal was removed or replaced under this connection (see `SQLite.logIsLost`).
    public var logIsLost: Bool { connection.logIsLost }
}
