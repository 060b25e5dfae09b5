import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceStore
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

// `backup`: a copy of the running daemon's database made off its queue, so
// status, phase ends and every other client go on meanwhile.

extension Daemon {
    /// Checks `path` and creates it empty (never replacing a file), then copies the database
    /// into it on a thread of its own; the connection takes no further request until answered.
    func backup(to path: String, _ request: Request, on connection: ClientConnection) {
        do {
            try Self.createBackupFile(path, database: paths.database)
        } catch {
            Log.info(
                "Refused backup to \(path.prefix(400)): \(error.message)", fields: [("EVENT", "refused"), ("CODE", error.code.rawValue)])
            return connection.send(Response.error(error, id: request.id))
        }
        connection.hold()
        let database = paths.database
        let waiting = QueueBound(connection, on: queue)
        DispatchQueue.global(qos: .utility).async { [queue] in
            let result = Result { () throws(DiligenceError) in try DatabaseBackup.copy(database, to: path) }
            Self.syncDirectory(of: path)
            queue.async {
                let waiting = waiting.value
                switch result {
                case .success(let summary):
                    Log.info(
                        "Backed up the database to \(path): \(summary.sessions) session(s), \(summary.tasks) task(s), \(summary.bytes) bytes.",
                        fields: [("EVENT", "backup_written")])
                    waiting.send(
                        Response.ok(
                            .object([
                                ("path", .string(path)), ("bytes", .int(Int(summary.bytes))), ("sessions", .int(summary.sessions)),
                                ("tasks", .int(summary.tasks)),
                            ]), id: request.id))
                case .failure(let error):
                    Log.error(
                        "Backup to \(path) failed: \(error.message)", fields: [("EVENT", "backup_failed"), ("CODE", error.code.rawValue)])
                    waiting.send(Response.error(error, id: request.id))
                }
                waiting.resume()
            }
        }
    }

    /// Creates the backup's file, empty and 0600 (`O_EXCL`: an existing file or link is never
    /// written through), or says why not.
    static func createBackupFile(_ path: String, database: String) throws(DiligenceError) {
        guard path.hasPrefix("/") else {
            throw DiligenceError(
                .invalidBackupPath, "The backup path \(path.debugDescription) is not absolute; give the whole path (diligencectl does).")
        }
        for own in [database, database + "-wal", database + "-shm", database + ".lock"] where path == own {
            throw DiligenceError(.invalidBackupPath, "\(path) is the database's own file; give the backup a path of its own.")
        }
        let fd: Int32
        do { fd = try Sys.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600) } catch {
            switch error.code {
            case EEXIST:
                throw DiligenceError(
                    .backupExists, "\(path) exists already; a backup never replaces a file. Give a new name, or remove it first.")
            case ENOENT, ENOTDIR:
                throw DiligenceError(.invalidBackupPath, "Cannot write the backup \(path): its directory does not exist.")
            case EACCES, EPERM, EROFS:
                throw DiligenceError(
                    .invalidBackupPath, "Cannot write the backup \(path): its directory is not writable (\(error.reason)).")
            case EISDIR:
                throw DiligenceError(.invalidBackupPath, "\(path) is a directory; give the backup a file name in it.")
            default:
                throw DiligenceError(.storageError, "Cannot create the backup \(path): \(error.reason).")
            }
        }
        Sys.close(fd)
        // open(2) applied the umask; the copy holds the user's days, so exactly 0600.
        try? Sys.chmod(path, 0o600)
    }

    /// The new file's name lasts a power cut too (its data is synced by SQLite).
    private static func syncDirectory(of path: String) {
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        guard let fd = try? Sys.open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY) else { return }
        try? Sys.fsync(fd)
        Sys.close(fd)
    }
}
