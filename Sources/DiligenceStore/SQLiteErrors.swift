import CSQLite
import DiligenceCore
import Glibc

/// The store's connection: every failure of SQLite is a `DiligenceError`.
public typealias SQLite = SQLiteConnection<DiligenceError>

/// The one place an `SQLiteError` becomes what users read: its wire code and message.
extension DiligenceError: SQLiteFailure {
    public init(_ failure: SQLiteError) {
        let path = failure.path
        switch failure.reason {
        case .result(let code, let detail):
            self = Self.result(code: code, detail: detail, path: path)
        case .flush(let code, let detail):
            self.init(.storageError, "\(path): could not flush the write-ahead log to disk (SQLite error \(code): \(detail))")
        case .emptyPath:
            self.init(.storageError, "The database path is empty; give a file path.")
        case .readOnly:
            self.init(
                .storageError,
                "The database \(path) can only be read (the file or its directory is read-only); diligence must write to it. Make it writable, or point --database elsewhere."
            )
        case .fileGone(let replaced):
            let what = replaced ? "replaced by another file" : "removed"
            self.init(
                .storageError,
                "The database file \(path) was \(what) while diligenced ran: nothing more is written to the one still open, "
                    + "so that no change is acknowledged and then lost. What it holds can still be read (diligencectl export "
                    + "--with-tasks > FILE); restart diligenced to use the file now at that path (a new one if none), then import FILE."
            )
        case .create(let err):
            self.init(
                .storageError,
                "Cannot create the database \(path): \(String(cString: strerror(err))). Check that its directory exists and is writable.")
        case .setMode(let err):
            self.init(.storageError, "Cannot set the mode of the database \(path) to 0600: \(String(cString: strerror(err))).")
        }
    }

    /// The error for SQLite's result code `rc` (primary or extended) with its message `detail`.
    private static func result(code rc: Int32, detail: String, path: String) -> DiligenceError {
        switch rc & 0xff {
        case SQLITE_BUSY, SQLITE_LOCKED:
            return DiligenceError(
                .databaseLocked,
                "The database \(path) is locked: another process holds it (SQLite: \(detail)). Try again in a moment."
            )
        case SQLITE_CORRUPT, SQLITE_NOTADB:
            return DiligenceError(
                .databaseCorrupt,
                "The database \(path) is damaged or is not a diligence database (SQLite: \(detail)). "
                    + "It was not modified; move it aside to start afresh, or restore a backup."
            )
        case SQLITE_FULL:
            return DiligenceError(
                .storageError, "Cannot write the database \(path): the disk is full (SQLite: \(detail)). Free some space and try again.")
        case SQLITE_READONLY, SQLITE_PERM, SQLITE_CANTOPEN, SQLITE_AUTH:
            return DiligenceError(
                .storageError,
                "Cannot open or write the database \(path) (SQLite: \(detail)). Check that its directory exists and that the file and directory are writable."
            )
        default:
            return DiligenceError(.storageError, "The database \(path) failed (SQLite: \(detail), code \(rc)).")
        }
    }
}
