import DiligenceTime

/// An error a person reads and a script matches on: a stable snake_case `code` (sent as is by the
/// control protocol, listed in docs/protocol.md) and a `message` saying what went wrong and what to do.
public struct DiligenceError: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// Every code the daemon answers or logs; the raw value is what the wire, the journal's
    /// `CODE=` field and scripts see, so a raw value never changes.
    public enum Code: String, CaseIterable, Sendable {
        case invalidJSON = "invalid_json"
        case invalidUTF8 = "invalid_utf8"
        case tooDeep = "too_deep"
        case numberOutOfRange = "number_out_of_range"
        case notAnObject = "not_an_object"
        case missingCommand = "missing_command"
        case unknownCommand = "unknown_command"
        case invalidArgument = "invalid_argument"
        case outOfRange = "out_of_range"
        case missingArgument = "missing_argument"
        case lineTooLong = "line_too_long"
        case requestTimeout = "request_timeout"
        case tooManyConnections = "too_many_connections"
        case permissionDenied = "permission_denied"
        case unknownTask = "unknown_task"
        case ambiguousTask = "ambiguous_task"
        case invalidName = "invalid_name"
        case duplicateName = "duplicate_name"
        case invalidDuration = "invalid_duration"
        case invalidValue = "invalid_value"
        case lastTask = "last_task"
        case taskArchived = "task_archived"
        case confirmationRequired = "confirmation_required"
        case noTask = "no_task"
        case alreadyRunning = "already_running"
        case notRunning = "not_running"
        case notPaused = "not_paused"
        case focusMode = "focus_mode"
        case nothingToDiscard = "nothing_to_discard"
        case storageError = "storage_error"
        case databaseLocked = "database_locked"
        case databaseCorrupt = "database_corrupt"
        case invalidPeriod = "invalid_period"
        case invalidDate = "invalid_date"
        case invertedRange = "inverted_range"
        case nonexistentTime = "nonexistent_time"
        case ambiguousTime = "ambiguous_time"
        case invalidSession = "invalid_session"
        case overlappingSession = "overlapping_session"
        case unknownSession = "unknown_session"
        case unknownFormat = "unknown_format"
        case unknownDevice = "unknown_device"
        case ambiguousDevice = "ambiguous_device"
        case invalidImport = "invalid_import"
        case unknownImport = "unknown_import"
        case databaseTooNew = "database_too_new"
        case backupExists = "backup_exists"
        case invalidBackupPath = "invalid_backup_path"
        case invalidDirectory = "invalid_directory"
        case syncConfigured = "sync_configured"
        case syncDeviceShared = "sync_device_shared"
        case syncJournalUnwritable = "sync_journal_unwritable"
        case notARegularFile = "not_a_regular_file"
        case usage = "usage"
        case invalidConfig = "invalid_config"
        case missingConfig = "missing_config"
        case cannotRead = "cannot_read"
        case notADirectory = "not_a_directory"
        case cannotCreateDirectory = "cannot_create_directory"
        case unsafeDirectory = "unsafe_directory"
        case notASocket = "not_a_socket"
        case socketPathTooLong = "socket_path_too_long"
        case socketError = "socket_error"
        case foreignDatabase = "foreign_database"
    }
}

extension DiligenceError.Code {
    /// The protocol's code for a refused date or time.
    public init(_ code: DateTextError.Code) {
        switch code {
        case .invalidDate: self = .invalidDate
        case .nonexistentTime: self = .nonexistentTime
        case .ambiguousTime: self = .ambiguousTime
        }
    }
}
