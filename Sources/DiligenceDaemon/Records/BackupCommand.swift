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
    /// Checks `path` and creates a temporary beside it, copies the database into that on a
    /// thread of its own, then gives it the name `path`; the connection takes no further
    /// request until answered.
    func backup(to path: String, _ request: Request, on connection: ClientConnection) {
        let temporary: String
        do {
            temporary = try Self.createBackupFile(path, database: paths.database)
        } catch {
            Log.info(
                "Refused backup to \(path.prefix(400)): \(error.message)", fields: [("EVENT", "refused"), ("CODE", error.code.rawValue)])
            return connection.send(Response.error(error, id: request.id))
        }
        connection.hold()
        records.backupsUnderWay.insert(temporary)
        let database = paths.database
        let waiting = QueueBound(connection, on: queue)
        let daemon = QueueBound(self, on: queue)
        DispatchQueue.global(qos: .utility).async { [queue] in
            let result = Result { () throws(DiligenceError) in
                let summary = try DatabaseBackup.copy(database, to: temporary)
                try Self.publish(temporary, as: path)
                return summary
            }
            Self.syncDirectory(of: path)
            queue.async {
                daemon.value.records.backupsUnderWay.remove(temporary)
                Self.answerBackup(result, path: path, request, waiting.value)
            }
        }
    }

    private static func answerBackup(
        _ result: Result<DatabaseBackup.Summary, DiligenceError>, path: String, _ request: Request, _ waiting: ClientConnection
    ) {
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
            Log.error("Backup to \(path) failed: \(error.message)", fields: [("EVENT", "backup_failed"), ("CODE", error.code.rawValue)])
            waiting.send(Response.error(error, id: request.id))
        }
        waiting.resume()
    }

    /// Gives the finished, synced copy its name: link(2) never replaces a file made there
    /// meanwhile; a file system without hard links takes a rename after one more look.
    static func publish(_ temporary: String, as path: String) throws(DiligenceError) {
        defer { DatabaseBackup.remove(temporary) }
        if let fd = try? Sys.open(temporary, O_RDONLY | O_NOFOLLOW) {
            defer { Sys.close(fd) }
            do { try Sys.fsync(fd) } catch {
                throw DiligenceError(.storageError, "Backup to \(path): could not sync the copy (\(error.reason)). Nothing was kept there.")
            }
        }
        do { try Sys.link(temporary, to: path) } catch {
            switch error.code {
            case EEXIST:
                throw DiligenceError(.backupExists, "\(path) appeared during the backup; a backup never replaces a file. Nothing was kept.")
            case EPERM, EOPNOTSUPP, EXDEV, EMLINK:
                guard Sys.fileStatus(path) == nil else {
                    throw DiligenceError(
                        .backupExists, "\(path) appeared during the backup; a backup never replaces a file. Nothing was kept.")
                }
                do { try Sys.rename(temporary, to: path) } catch {
                    throw DiligenceError(
                        .storageError, "Backup to \(path): could not name the copy (\(error.reason)). Nothing was kept there.")
                }
            default:
                throw DiligenceError(.storageError, "Backup to \(path): could not name the copy (\(error.reason)). Nothing was kept there.")
            }
        }
    }

    /// Checks that nothing is at `path` and creates the temporary the copy is made in, beside
    /// it, empty and 0600 (`O_EXCL`: an existing file or link is never written through); returns
    /// the temporary's path, or says why not.
    static func createBackupFile(_ path: String, database: String) throws(DiligenceError) -> String {
        guard path.hasPrefix("/") else {
            throw DiligenceError(
                .invalidBackupPath, "The backup path \(path.debugDescription) is not absolute; give the whole path (diligencectl does).")
        }
        for own in [database, database + "-wal", database + "-shm", database + ".lock"] where path == own {
            throw DiligenceError(.invalidBackupPath, "\(path) is the database's own file; give the backup a path of its own.")
        }
        if let existing = Sys.fileStatus(path) {
            guard existing.st_mode & S_IFMT != S_IFDIR else {
                throw DiligenceError(.invalidBackupPath, "\(path) is a directory; give the backup a file name in it.")
            }
            throw DiligenceError(
                .backupExists, "\(path) exists already; a backup never replaces a file. Give a new name, or remove it first.")
        }
        let temporary = Self.temporaryName(for: path)
        let fd: Int32
        do { fd = try Sys.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600) } catch {
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
        try? Sys.chmod(temporary, 0o600)
        return temporary
    }

    /// `DIR/.NAME.partial-PID-NANOSECONDS`: hidden, and named after the backup it becomes.
    static func temporaryName(for path: String) -> String {
        var parts = path.split(separator: "/", omittingEmptySubsequences: false)
        let name = parts.removeLast()
        let nanoseconds = Int(Sys.clock(CLOCK_MONOTONIC) * 1e9)
        let directory = parts.joined(separator: "/")
        return "\(directory)/.\(name).partial-\(getpid())-\(nanoseconds)"
    }

    /// The new file's name lasts a power cut too (its data is synced by SQLite).
    private static func syncDirectory(of path: String) {
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        guard let fd = try? Sys.open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY) else { return }
        try? Sys.fsync(fd)
        Sys.close(fd)
    }
}
