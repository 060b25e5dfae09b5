import CSQLite
import Glibc

/// Why a call on an SQLite connection failed: SQLite's result code and message, or the file
/// check of this wrapper that refused, with the database's path.
public struct SQLiteError: Error, Sendable, Equatable {
    public enum Reason: Sendable, Equatable {
        /// SQLite returned `code` (primary or extended) with `message`.
        case result(code: Int32, message: String)
        /// Flushing the write-ahead log to disk returned `code`.
        case flush(code: Int32, message: String)
        /// The location is a path, and it is empty.
        case emptyPath
        /// SQLite opened the file read-only: it or its directory cannot be written.
        case readOnly
        /// The path no longer names the file opened: removed, or `replaced` by another file.
        case fileGone(replaced: Bool)
        /// Creating the file failed with `errno`.
        case create(errno: Int32)
        /// Setting the new file's mode to 0600 failed with `errno`.
        case setMode(errno: Int32)
    }

    /// The database's path, or ":memory:".
    public var path: String
    public var reason: Reason

    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }
}

/// The error a connection throws: the application's own type, made from an `SQLiteError`, so
/// that callers' closures and the connection's calls throw one type.
public protocol SQLiteFailure: Error {
    init(_ failure: SQLiteError)
}

/// A small wrapper around one SQLite connection, in the style of swift-package-manager's
/// `Basics/SQLite.swift`: a `Location`, prepared statements with typed binds, and a
/// `transaction` helper. Every failure is an `SQLiteError` naming the database path and
/// SQLite's own message, thrown as the caller's `Failure`.
///
/// Not thread-safe: one connection is used from one thread (or serial queue) at a time.
public final class SQLiteConnection<Failure: SQLiteFailure> {
    /// Where the database lives.
    public enum Location: Sendable, Equatable {
        /// A file; created with mode 0600 when it does not exist.
        case path(String)
        /// A private database in memory, gone when the connection closes (tests).
        case memory
        /// A file's own pages, read only, without its -wal (SQLite's `immutable=1`): what the
        /// file holds when its log is not its own.
        case fileAlone(String)
    }

    /// A value bound to a statement parameter or read from a result column.
    public enum Value: Sendable, Equatable, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
        ExpressibleByStringLiteral, ExpressibleByNilLiteral
    {
        case integer(Int64)
        case real(Double)
        case text(String)
        case null

        public init(integerLiteral value: Int64) { self = .integer(value) }
        public init(floatLiteral value: Double) { self = .real(value) }
        public init(stringLiteral value: String) { self = .text(value) }
        public init(nilLiteral: ()) { self = .null }

        /// An `Int` as an integer value.
        public static func int(_ value: Int) -> Value { .integer(Int64(value)) }
        /// A Boolean as 0 or 1, SQLite's usual encoding.
        public static func bool(_ value: Bool) -> Value { .integer(value ? 1 : 0) }
        /// An optional string, `NULL` for nil.
        public static func optional(_ value: String?) -> Value { value.map { .text($0) } ?? .null }
        /// An optional integer, `NULL` for nil.
        public static func optional(_ value: Int?) -> Value { value.map { .integer(Int64($0)) } ?? .null }
        /// An optional integer, `NULL` for nil.
        public static func optional(_ value: Int64?) -> Value { value.map { .integer($0) } ?? .null }
        /// An optional real, `NULL` for nil.
        public static func optional(_ value: Double?) -> Value { value.map { .real($0) } ?? .null }
    }

    /// One result row, copied out of the statement so that it stays valid after the next step.
    public struct Row: Sendable, Equatable {
        public var values: [Value]

        public init(values: [Value]) { self.values = values }

        /// Column `index` as an integer (reals are truncated, anything else is 0).
        public func int64(_ index: Int) -> Int64 {
            switch values[index] {
            case .integer(let v): v
            case .real(let v): Int64(v)
            case .text(let s): Int64(s) ?? 0
            case .null: 0
            }
        }

        /// Column `index` as an `Int`.
        public func int(_ index: Int) -> Int { Int(int64(index)) }

        /// Column `index` as a Boolean (non-zero is true).
        public func bool(_ index: Int) -> Bool { int64(index) != 0 }

        /// Column `index` as a real (integers are converted, anything else is 0).
        public func double(_ index: Int) -> Double {
            switch values[index] {
            case .integer(let v): Double(v)
            case .real(let v): v
            case .text(let s): Double(s) ?? 0
            case .null: 0
            }
        }

        /// Column `index` as text ("" for NULL; numbers in their decimal form).
        public func string(_ index: Int) -> String {
            switch values[index] {
            case .integer(let v): String(v)
            case .real(let v): String(v)
            case .text(let s): s
            case .null: ""
            }
        }

        /// Whether column `index` is NULL.
        public func isNull(_ index: Int) -> Bool { values[index] == .null }

        /// Column `index` as an integer, nil for NULL.
        public func optionalInt(_ index: Int) -> Int? { isNull(index) ? nil : int(index) }

        /// Column `index` as text, nil for NULL.
        public func optionalString(_ index: Int) -> String? { isNull(index) ? nil : string(index) }
    }

    /// The location this connection opened.
    public let location: Location

    /// The file path, or ":memory:"; every error message names it.
    public var path: String {
        switch location {
        case .path(let p), .fileAlone(let p): p
        case .memory: ":memory:"
        }
    }

    /// Milliseconds a statement waits for another connection's lock before `database_locked`.
    /// The daemon sets it to 0 once the database is open: a write that finds another
    /// process's lock then fails at once (and is retried later), never holding up the reads
    /// behind it on the daemon's one queue.
    public var busyTimeoutMilliseconds: Int32 {
        didSet { sqlite3_busy_timeout(handle, busyTimeoutMilliseconds) }
    }

    fileprivate var handle: OpaquePointer?
    /// The file opened (device, inode): every write transaction checks that the path still
    /// names it (`fileGone`).
    private var openedFile: (device: UInt64, inode: UInt64)?

    /// Why writing would go nowhere, nil while the path still names the file opened: the file
    /// (or its directory) was removed, or another file put in its place, while the connection
    /// was open. SQLite would go on writing to the unlinked inode, and every write would be
    /// acknowledged and lost at exit (issue 26); refused instead. One stat(2) per write.
    public var fileGone: SQLiteError? {
        guard case .path(let p) = location, let openedFile else { return nil }
        var st = stat()
        if stat(p, &st) == 0, UInt64(st.st_dev) == openedFile.device, UInt64(st.st_ino) == openedFile.inode { return nil }
        return SQLiteError(path: p, reason: .fileGone(replaced: stat(p, &st) == 0))
    }

    private func refuseIfGone() throws(Failure) {
        if let fileGone { throw Failure(fileGone) }
    }
    /// Statements prepared once and reused (see `cached(_:)`).
    private var cache: [String: Statement] = [:]

    /// Opens (creating if needed) the database at `location` and configures the connection.
    ///
    /// A new file is created with mode 0600 whatever the umask: the database holds a record of
    /// the user's days. An existing file is not re-moded. A file that is not an SQLite database
    /// gives `database_corrupt` and is left untouched.
    /// `inspect` runs once the file is known to be a database and before anything could write
    /// to it (the store refuses another program's database there, leaving it as it was).
    public init(
        location: Location, busyTimeoutMilliseconds: Int32 = 2000,
        inspect: (SQLiteConnection) throws(Failure) -> Void = { _ throws(Failure) in }
    ) throws(Failure) {
        self.location = location
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        let filename: String
        var flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_NOMUTEX
        switch location {
        case .memory:
            filename = ":memory:"
        case .fileAlone(let p):
            filename = "file:" + Self.uriEscaped(p) + "?immutable=1"
            flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_NOMUTEX
        case .path(let p):
            guard !p.isEmpty else {
                throw Failure(SQLiteError(path: p, reason: .emptyPath))
            }
            try Self.createPrivateFile(p)
            filename = p
        }
        var db: OpaquePointer?
        // NOMUTEX: a connection is used from one serial queue (see `Store`), so SQLite's own
        // per-call locking (a lock and an unlock for every column read) buys nothing.
        let rc = sqlite3_open_v2(filename, &db, flags, nil)
        handle = db
        guard rc == SQLITE_OK else {
            let error = makeError(rc)
            sqlite3_close_v2(db)
            handle = nil
            throw error
        }
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
        do throws(Failure) {
            // sqlite3_open_v2 reads nothing yet: read the header now, before any pragma that
            // could write, so a file that is not a database is reported and never modified.
            try exec("SELECT count(*) FROM sqlite_master")
            try inspect(self)
            if case .fileAlone = location { return }
            // SQLite opens a file it may not write read-only without a word (a read-only
            // directory holding the -wal and -shm files): every write would fail later instead.
            if case .path(let p) = location, sqlite3_db_readonly(handle, "main") == 1 {
                throw Failure(SQLiteError(path: p, reason: .readOnly))
            }
            // WAL: readers (status, stats) never block the writer, and a crash mid-write
            // leaves the last committed state.
            try exec("PRAGMA journal_mode = WAL")
            // FULL: a recorded session must survive a power loss right after it is written.
            // The daemon writes a few rows an hour, so the cost of the extra fsync is nil.
            try exec("PRAGMA synchronous = FULL")
            try exec("PRAGMA foreign_keys = ON")
            if case .path(let p) = location {
                var st = stat()
                if stat(p, &st) == 0 { openedFile = (UInt64(st.st_dev), UInt64(st.st_ino)) }
            }
        } catch {
            cache.removeAll()
            sqlite3_close_v2(handle)
            handle = nil
            throw error
        }
    }

    deinit {
        // Finalize cached statements first; close_v2 defers the close while any statement
        // still held elsewhere is alive, so no statement ever outlives its connection.
        cache.removeAll()
        sqlite3_close_v2(handle)
    }

    // MARK: Statements

    /// Runs one or more SQL statements that take no parameters; result rows are discarded.
    public func exec(_ sql: String) throws(Failure) {
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw makeError(rc) }
    }

    /// Prepares `sql` (one statement) for this connection.
    public func prepare(_ sql: String) throws(Failure) -> Statement {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v2(handle, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw makeError(rc) }
        return Statement(stmt, connection: self)
    }

    /// The text of every statement `cached` keeps (tests read their query plans).
    var cachedStatements: [String] { Array(cache.keys) }

    /// The statement for `sql`, prepared on first use and kept for the connection's lifetime:
    /// for queries that run often (the daemon answers `status` many times a second).
    public func cached(_ sql: String) throws(Failure) -> Statement {
        if let stmt = cache[sql] { return stmt }
        let stmt = try prepare(sql)
        cache[sql] = stmt
        return stmt
    }

    /// Runs `sql` with `values` bound and returns every row.
    public func query(_ sql: String, _ values: [Value] = []) throws(Failure) -> [Row] {
        try cached(sql).rows(values)
    }

    /// Runs `sql` with `values` bound, discarding rows; returns the number of rows changed.
    @discardableResult
    public func run(_ sql: String, _ values: [Value] = []) throws(Failure) -> Int {
        // Outside a transaction (the saved timer's one statement) it is a write of its own.
        if sqlite3_get_autocommit(handle) != 0 { try refuseIfGone() }
        try cached(sql).run(values)
        return changes
    }

    /// Rows inserted per statement by `insertMany`: SQLite's per-statement work (opening and
    /// closing cursors, a statement journal) costs as much as a row's own.
    public static var rowsPerInsert: Int { 256 }

    /// Inserts `count` rows (`row(i)`: row `i`'s `columns` values) with `INSERT INTO target
    /// VALUES (…), (…), …`, up to `rowsPerInsert` rows a statement, the rows of one statement
    /// built only when it runs; returns each row's rowid, in order. `target`: `table (column,
    /// …)`. Rows of one statement get consecutive rowids (no rowid is given, and nothing else
    /// writes meanwhile: this connection is the only writer in the transaction). `replacing`:
    /// `INSERT OR REPLACE`, a row taking the place of the one with its key.
    @discardableResult
    public func insertMany(
        into target: String, columns: Int, count total: Int, replacing: Bool = false, row: (Int) -> [Value]
    ) throws(Failure) -> [Int64] {
        var ids: [Int64] = []
        ids.reserveCapacity(total)
        var start = 0
        var values: [Value] = []
        while start < total {
            // Statements of 256, 16 and 1 rows only: three shapes a table to keep prepared.
            let left = total - start
            let count = left >= Self.rowsPerInsert ? Self.rowsPerInsert : left >= 16 ? 16 : 1
            let placeholders = "(" + Array(repeating: "?", count: columns).joined(separator: ",") + ")"
            let statement = try cached(
                (replacing ? "INSERT OR REPLACE INTO " : "INSERT INTO ") + "\(target) VALUES "
                    + Array(repeating: placeholders, count: count).joined(separator: ","))
            values.removeAll(keepingCapacity: true)
            for i in start..<(start + count) { values += row(i) }
            try statement.run(values)
            let last = lastInsertRowID
            ids += ((last - Int64(count) + 1)...last).map { $0 }
            start += count
        }
        return ids
    }

    /// Runs `body` with a 32 MiB page cache when `large` (then back to SQLite's default): a
    /// transaction touching more pages than the default 2 MB cache holds spills dirty pages into
    /// the WAL mid-transaction and writes them again at the commit (an import of 100 000 sessions).
    public func withLargePageCache<T>(if large: Bool, _ body: () throws(Failure) -> T) throws(Failure) -> T {
        guard large else { return try body() }
        try exec("PRAGMA cache_size = -32768")
        defer { sqlite3_exec(handle, "PRAGMA cache_size = -2000", nil, nil, nil) }
        return try body()
    }

    /// The rowid of the most recent successful INSERT on this connection.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// Rows inserted, updated or deleted through this connection since it opened: a value that
    /// changes whenever this connection writes, for results derived from the data.
    public var totalChanges: Int64 { sqlite3_total_changes64(handle) }

    // MARK: Transactions

    /// When a commit reaches the disk.
    public enum Flush: Sendable {
        /// Before `transaction` returns (`synchronous = FULL`: one fsync of the WAL in COMMIT).
        case onCommit
        /// When the caller calls `flushJournal()`. The commit is written to the WAL (every
        /// reader sees it, and it survives the process being killed) without waiting for the
        /// disk, so the caller can act on it first — the daemon sends a phase end's events —
        /// and then flush, a millisecond later.
        case byCaller
    }

    /// Runs `body` in a write transaction: `BEGIN IMMEDIATE` (taking the write lock up front,
    /// so a busy database fails here, through the busy timeout, rather than half way), `COMMIT`
    /// on return, `ROLLBACK` when `body` throws. Inside an open transaction, `body` simply joins it.
    /// `temporaryOnly`: `body` writes TEMP tables alone, which need no lock on the database
    /// (`BEGIN`: another process's lock does not stop it).
    public func transaction<T>(
        flush: Flush = .onCommit, temporaryOnly: Bool = false,
        _ body: () throws(Failure) -> T
    ) throws(Failure) -> T {
        if sqlite3_get_autocommit(handle) == 0 {
            return try body()
        }
        if flush == .byCaller {
            // In WAL mode, NORMAL writes the commit's frames without an fsync (a checkpoint
            // still syncs first); the pragma is per connection and costs no I/O.
            try exec("PRAGMA synchronous = NORMAL")
        }
        defer { if flush == .byCaller { sqlite3_exec(handle, "PRAGMA synchronous = FULL", nil, nil, nil) } }
        if !temporaryOnly { try refuseIfGone() }
        try exec(temporaryOnly ? "BEGIN" : "BEGIN IMMEDIATE")
        do {
            let result = try body()
            try exec("COMMIT")
            rescueLostLog()
            return result
        } catch {
            // A failed COMMIT may leave the transaction open; ROLLBACK's own error adds nothing.
            if sqlite3_get_autocommit(handle) == 0 {
                sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
            }
            throw error
        }
    }

    /// Waits until every committed transaction is on disk: one fsync of the WAL, through
    /// SQLite's own file object (the second half of `transaction(flush: .byCaller)`). Nothing
    /// to do for a database without a journal file (in memory).
    public func flushJournal() throws(Failure) {
        var pointer: UnsafeMutableRawPointer?
        var rc = sqlite3_file_control(handle, "main", SQLITE_FCNTL_JOURNAL_POINTER, &pointer)
        guard rc == SQLITE_OK else { throw makeError(rc) }
        let file = pointer?.assumingMemoryBound(to: sqlite3_file.self)
        guard let file, let sync = file.pointee.pMethods?.pointee.xSync else { return }
        rc = sync(file, SQLITE_SYNC_FULL)
        guard rc == SQLITE_OK else {
            throw Failure(SQLiteError(path: path, reason: .flush(code: rc, message: String(cString: sqlite3_errstr(rc)))))
        }
    }

    // MARK: Checkpoints

    /// WAL pages after which the log is copied back into the database (SQLite's default).
    public static var checkpointPages: Int32 { 1000 }

    /// Moves WAL checkpoints out of the commit that crosses `checkpointPages`: SQLite would
    /// run one inside that COMMIT (two fsyncs and the copying, a few milliseconds on the
    /// critical path of whatever committed); here the commit only asks `schedule` to run it
    /// next (the daemon passes its queue), after the caller has answered or sent its events.
    /// `committed` runs after each commit of a write transaction (the write lock is released by
    /// then); it must not use this connection. `logLost` runs after a commit found the -wal
    /// lost, once its commits were copied into the database file (`rescued`) or that failed.
    /// Called once, right after the connection opens.
    public func deferCheckpoints(
        to schedule: @escaping (@escaping () -> Void) -> Void,
        committed: (() -> Void)? = nil, logLost: ((_ rescued: Bool) -> Void)? = nil
    ) {
        precondition(checkpointScheduler == nil, "the checkpoints of \(path) were deferred twice")
        checkpointScheduler = schedule
        self.committed = committed
        self.logLost = logLost
        logIdentity = FileIdentity(path + "-wal")
        let hook = WALHook { [unowned self] pages in self.walGrew(to: pages) }
        walHook = hook
        // Replaces SQLite's own autocheckpoint hook for this connection. The hook object lives
        // as long as the connection (closed in deinit), so the unretained pointer is valid.
        sqlite3_wal_hook(
            handle,
            { context, _, _, pages in
                guard let context else { return SQLITE_OK }
                Unmanaged<WALHook>.fromOpaque(context).takeUnretainedValue().grew(pages)
                return SQLITE_OK
            }, Unmanaged.passUnretained(hook).toOpaque())
    }

    private var checkpointScheduler: ((@escaping () -> Void) -> Void)?
    private var walHook: WALHook?
    private var checkpointPending = false
    private var committed: (() -> Void)?
    private var logLost: ((_ rescued: Bool) -> Void)?

    private func walGrew(to pages: Int32) {
        committed?()
        if logIsLost, let schedule = checkpointScheduler {
            // Rescued before `transaction` returns (so before any answer); a write outside one
            // is rescued by the scheduler.
            lostLogCommits = true
            schedule { [weak self] in self?.rescueLostLog() }
        }
        guard pages >= Self.checkpointPages, !checkpointPending, let schedule = checkpointScheduler else { return }
        checkpointPending = true
        schedule { [weak self] in
            guard let self else { return }
            self.checkpointPending = false
            // PASSIVE: copies what no reader still needs and never waits; what is left is
            // copied by the next one. A failure (a locked or full disk) only leaves the log longer.
            sqlite3_wal_checkpoint_v2(self.handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        }
    }

    /// Copies every commit in the write-ahead log into the database file and empties the log
    /// (`TRUNCATE`): the file alone then holds everything, as a backup tool that copies only it
    /// expects. Waits up to the busy timeout for readers still using the log.
    public func checkpointIntoFile() throws(Failure) {
        let rc = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil)
        guard rc == SQLITE_OK else { throw makeError(rc) }
    }

    // MARK: A lost log

    /// A file as (device, inode): what tells the -wal this connection writes from another.
    struct FileIdentity: Equatable {
        var device: UInt64
        var inode: UInt64

        init?(_ path: String) {
            var status = stat()
            guard stat(path, &status) == 0 else { return nil }
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
        }
    }

    /// The -wal this connection writes, taken when the daemon installs its checkpoints.
    private var logIdentity: FileIdentity?

    /// Whether the -wal this connection writes is no longer at its name (removed, or another
    /// file put there): SQLite goes on writing the open, nameless file, so the commits since the
    /// last checkpoint would be gone at exit. One stat(2), next to a commit's fsync.
    public var logIsLost: Bool {
        guard let logIdentity else { return false }
        return FileIdentity(path + "-wal") != logIdentity
    }

    /// Commits went to a log no longer at its name since the last rescue.
    private var lostLogCommits = false

    /// Copies the open log's commits into the database file: they are on disk under its name
    /// again. Every later commit goes to the nameless log too, so it is rescued the same way.
    private func rescueLostLog() {
        guard lostLogCommits else { return }
        lostLogCommits = false
        let rc = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil)
        logLost?(rc == SQLITE_OK)
    }

    // MARK: Errors

    /// The failure for result code `rc`, naming the database and SQLite's message.
    private func makeError(_ rc: Int32) -> Failure {
        Self.error(code: rc, handle: handle, path: path)
    }

    /// The failure for `rc`, with the message SQLite recorded on `handle`.
    fileprivate static func error(code rc: Int32, handle: OpaquePointer?, path: String) -> Failure {
        // sqlite3_errmsg describes the most recent failure on this connection; sqlite3_errstr
        // is the generic text for the code when there is no connection (or it has moved on).
        var detail = handle.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? ""
        if detail.isEmpty || detail == "not an error" {
            detail = String(cString: sqlite3_errstr(rc))
        }
        return error(code: rc, detail: detail, path: path)
    }

    /// The failure for result code `rc` (primary or extended) with SQLite's message `detail`.
    static func error(code rc: Int32, detail: String, path: String) -> Failure {
        Failure(SQLiteError(path: path, reason: .result(code: rc, message: detail)))
    }

    /// `path` as the path of a `file:` URI: `%`, `?` and `#` would end or escape it.
    private static func uriEscaped(_ path: String) -> String {
        path.replacing("%", with: "%25").replacing("?", with: "%3f").replacing("#", with: "%23")
    }

    /// Creates `path` with mode 0600 if it does not exist, independent of the umask. An
    /// existing file is left as it is (neither truncated nor re-moded).
    private static func createPrivateFile(_ path: String) throws(Failure) {
        var fd: Int32
        repeat {
            fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode_t(0o600))
        } while fd < 0 && errno == EINTR
        if fd < 0 {
            let err = errno
            if err == EEXIST { return }
            throw Failure(SQLiteError(path: path, reason: .create(errno: err)))
        }
        // open(2) applied the umask; fchmod does not, so the mode is exactly 0600.
        let rc = fchmod(fd, 0o600)
        let err = errno
        close(fd)
        if rc != 0 {
            throw Failure(SQLiteError(path: path, reason: .setMode(errno: err)))
        }
    }
}

// MARK: - Statement

extension SQLiteConnection {
    /// A prepared statement. Bind, step, reset; `rows` and `run` do all three.
    public final class Statement {
        private let stmt: OpaquePointer
        // The C handle, not the `SQLite` object: the connection's cache holds its statements,
        // so a reference back would be a cycle. close_v2 keeps the handle valid while any
        // statement is alive.
        private let db: OpaquePointer?
        private let path: String

        fileprivate init(_ stmt: OpaquePointer, connection: SQLiteConnection) {
            self.stmt = stmt
            self.db = connection.handle
            self.path = connection.path
        }

        private func makeError(_ rc: Int32) -> Failure {
            SQLiteConnection.error(code: rc, handle: db, path: path)
        }

        deinit {
            sqlite3_finalize(stmt)
        }

        /// `SQLITE_TRANSIENT`: SQLite copies bound text before the call returns.
        private static var transient: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }

        /// Resets the statement and binds `values` to parameters 1, 2, ...
        public func bind(_ values: [Value]) throws(Failure) {
            reset()
            for (offset, value) in values.enumerated() {
                let index = Int32(offset + 1)
                let rc: Int32
                switch value {
                case .integer(let v):
                    rc = sqlite3_bind_int64(stmt, index, v)
                case .real(let v):
                    rc = sqlite3_bind_double(stmt, index, v)
                case .null:
                    rc = sqlite3_bind_null(stmt, index)
                case .text(let s):
                    // With an explicit length, so text holding NUL survives; an empty buffer
                    // may have no base address, which SQLite would bind as NULL.
                    var s = s
                    rc = s.withUTF8 { buffer in
                        if buffer.isEmpty {
                            return sqlite3_bind_text(stmt, index, "", 0, Self.transient)
                        }
                        return buffer.withMemoryRebound(to: CChar.self) {
                            sqlite3_bind_text(stmt, index, $0.baseAddress, Int32($0.count), Self.transient)
                        }
                    }
                }
                guard rc == SQLITE_OK else { throw makeError(rc) }
            }
        }

        /// Runs the statement to its next row; nil when it is done.
        public func step() throws(Failure) -> Row? {
            let rc = sqlite3_step(stmt)
            switch rc {
            case SQLITE_ROW:
                return currentRow()
            case SQLITE_DONE:
                return nil
            default:
                let error = makeError(rc)
                reset()
                throw error
            }
        }

        /// Binds `values`, returns every row, and resets the statement (releasing its read lock).
        public func rows(_ values: [Value] = []) throws(Failure) -> [Row] {
            try bind(values)
            defer { reset() }
            var rows: [Row] = []
            while let row = try step() {
                rows.append(row)
            }
            return rows
        }

        /// Binds `values`, runs the statement to completion and resets it.
        public func run(_ values: [Value] = []) throws(Failure) {
            try bind(values)
            defer { reset() }
            while try step() != nil {}
        }

        /// Binds `values` and calls `body` for each row with its columns read in place, without
        /// building `Row`s: for the reports that scan many rows. Resets the statement afterwards.
        public func forEachRow(_ values: [Value], _ body: (Columns) throws(Failure) -> Void) throws(Failure) {
            try bind(values)
            defer { reset() }
            let columns = Columns(stmt: stmt)
            while true {
                let rc = sqlite3_step(stmt)
                if rc == SQLITE_DONE { return }
                guard rc == SQLITE_ROW else { throw makeError(rc) }
                try body(columns)
            }
        }

        /// Resets the statement and clears its bindings.
        public func reset() {
            sqlite3_reset(stmt)
            sqlite3_clear_bindings(stmt)
        }

        private func currentRow() -> Row {
            let count = sqlite3_column_count(stmt)
            var values: [Value] = []
            values.reserveCapacity(Int(count))
            for column in 0..<count {
                switch sqlite3_column_type(stmt, column) {
                case SQLITE_INTEGER:
                    values.append(.integer(sqlite3_column_int64(stmt, column)))
                case SQLITE_FLOAT:
                    values.append(.real(sqlite3_column_double(stmt, column)))
                case SQLITE_NULL:
                    values.append(.null)
                default:
                    // Text (and blobs, read as text): length-delimited, so NUL bytes survive.
                    let bytes = sqlite3_column_text(stmt, column)
                    let length = Int(sqlite3_column_bytes(stmt, column))
                    if let bytes {
                        values.append(.text(String(decoding: UnsafeBufferPointer(start: bytes, count: length), as: UTF8.self)))
                    } else {
                        values.append(.text(""))
                    }
                }
            }
            return Row(values: values)
        }
    }
}

extension SQLiteConnection {
    /// The current row of a statement stepped by `Statement.forEachRow`; valid only inside its body.
    public struct Columns {
        fileprivate let stmt: OpaquePointer

        public func int64(_ index: Int32) -> Int64 { sqlite3_column_int64(stmt, index) }
        public func int(_ index: Int32) -> Int { Int(sqlite3_column_int64(stmt, index)) }
        public func double(_ index: Int32) -> Double { sqlite3_column_double(stmt, index) }
        public func string(_ index: Int32) -> String {
            guard let bytes = sqlite3_column_text(stmt, index) else { return "" }
            let length = Int(sqlite3_column_bytes(stmt, index))
            return String(decoding: UnsafeBufferPointer(start: bytes, count: length), as: UTF8.self)
        }
    }
}

/// What the WAL hook calls: a C callback cannot name a generic class's instance, so it reaches
/// the connection through this plain one.
private final class WALHook {
    let grew: (Int32) -> Void

    init(_ grew: @escaping (Int32) -> Void) { self.grew = grew }
}

/// SQLite's own random source (ChaCha20, seeded once from the system's): random numbers without
/// a system call each, as `SystemRandomNumberGenerator` makes (two per UUID: an import of
/// 100 000 sessions spent a tenth of its time in getrandom).
public struct SQLiteRandom: RandomNumberGenerator {
    public init() {}

    public mutating func next() -> UInt64 {
        var value: UInt64 = 0
        sqlite3_randomness(Int32(MemoryLayout<UInt64>.size), &value)
        return value
    }
}
