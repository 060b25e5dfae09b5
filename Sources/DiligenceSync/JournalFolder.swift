#if canImport(Glibc)
    import Glibc
#endif

/// What a device finds in its own journal before it appends to it (docs/sync.md, "Another
/// hand in this device's journal"), against the end of what it wrote and the latest clock
/// reading it stamped.
public enum OwnJournalState: Equatable, Sendable {
    /// The file ends where this device's last write left it.
    case intact
    /// The file holds those bytes and these complete lines after them, up to `end`: this
    /// device's own write whose record a crash cut, or another machine's, which only the device
    /// can tell.
    case extended([JournalEntry], end: JournalCursor)
    /// The file is gone, or shorter than what this device wrote with no line stamped after its
    /// latest reading: an older version a sync tool, a backup or a checkout put back.
    case older
    /// The file holds lines this device did not write (why): another machine writes under
    /// this device's id, from a copy of its database.
    case foreign(String)
}

/// A sync folder as one device sees it: its own journal, `<device>.jsonl`, which only it writes
/// (so a sync tool never sees two writers of one file and never makes conflict copies), and
/// the journals of the other devices, which it only reads.
public struct JournalFolder: Sendable {
    public let directory: String
    public let device: String

    public init(directory: String, device: String) {
        self.directory = directory
        self.device = device
    }

    /// This device's journal.
    public var ownPath: String { path(of: device) }

    /// The journal of `device` in this folder.
    public func path(of device: String) -> String { "\(directory)/\(device).jsonl" }

    /// The other devices' journals in the folder now, by device id: files named
    /// `<device id>.jsonl` (a sync tool's conflict copies and temporary files have other names).
    public func otherJournals() -> [(device: String, path: String)] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var found: [(device: String, path: String)] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let other = JournalReader.device(ofFileName: name), other != device else { continue }
            found.append((other, "\(directory)/\(name)"))
        }
        return found.sorted { $0.device < $1.device }
    }

    /// Appends `entries` to this device's journal, one line each, and flushes them to disk.
    /// A last line a crash left without its newline is closed first (readers report it as
    /// garbled and skip it) so that it cannot swallow the first line written now. Returns the
    /// end of the file written, read through its descriptor: the file this device wrote even
    /// when a sync tool renamed another over its name meanwhile (nil: nothing to write).
    @discardableResult
    public func append(_ entries: [JournalEntry]) throws(FileError) -> JournalCursor? {
        guard !entries.isEmpty else { return nil }
        let path = ownPath
        let fd = try RegularFile.open(path, O_RDWR | O_APPEND | O_CREAT, mode: 0o600)
        defer { close(fd) }
        // Private whatever the umask, as the database is; a journal an older version made 0644
        // is narrowed too. Best effort: a FAT stick's modes cannot change, which stops nothing.
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & 0o7777 != 0o600 { _ = fchmod(fd, 0o600) }
        var bytes: [UInt8] = []
        let end = lseek(fd, 0, SEEK_END)
        if end > 0 {
            var last: UInt8 = 0
            if pread(fd, &last, 1, end - 1) == 1, last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
        }
        for entry in entries {
            bytes += entry.line.utf8
            bytes.append(UInt8(ascii: "\n"))
        }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                throw FileError(path: path, problem: .system(errno))
            }
            done += n
        }
        guard fdatasync(fd) == 0 else { throw FileError(path: path, problem: .system(errno)) }
        return try JournalReader.end(of: fd, path: path)
    }

    /// This device's journal compared with `written`, the end of what this device wrote there,
    /// and `issued`, the latest clock reading it stamped. The file must still hold those bytes
    /// (the checksum of the 4 KiB before `written`, as the reader checks another device's file)
    /// and nothing after them: lines after are another writer's. A file that is not those
    /// bytes and not shorter is another writer's version; readable lines after them are told
    /// apart by the device (`.extended`); a shorter one is an older version
    /// unless a line in it is stamped later than this device ever stamped.
    public func ownState(written: JournalCursor, issued: HLC) -> OwnJournalState {
        let path = ownPath
        let batch: JournalBatch
        let size: Int64
        do {
            guard let end = try JournalReader.end(of: path) else { return .older }
            size = end.offset
            batch = try JournalReader.read(path: path, device: device, from: written)
        } catch {
            return .intact // unreadable: the append reports it
        }
        let lines = batch.entries.count + batch.problems.count
        if !batch.restarted {
            // A last line without its newline is this device's write a crash cut: the append closes it.
            if lines == 0 { return .intact }
            return batch.problems.isEmpty
                ? .extended(batch.entries.map(\.entry), end: batch.cursor)
                : .foreign("\(lines) line(s) after the last one this device wrote")
        }
        if size >= written.offset { return .foreign("other bytes than the ones this device wrote before the end of its lines") }
        if let late = batch.entries.first(where: { $0.entry.hlc > issued }) {
            return .foreign("line \(late.line) is stamped \(late.entry.hlc), later than every line this device wrote")
        }
        return .older
    }

    /// Reads every other device's journal past its cursor in `cursors` (a journal not in it
    /// from its start) and moves the cursors on. A journal that cannot be read (gone between
    /// the listing and the read) is left for the next time, as a problem; a name that is not a
    /// regular file (a FIFO, a link, a directory) is never waited on nor followed: `skipped`.
    public func readOthers(cursors: inout [String: JournalCursor]) -> (
        batches: [(device: String, batch: JournalBatch)], problems: [JournalProblem], skipped: [FileError]
    ) {
        var batches: [(device: String, batch: JournalBatch)] = []
        var problems: [JournalProblem] = []
        var skipped: [FileError] = []
        for (other, path) in otherJournals() {
            do {
                let batch = try JournalReader.read(path: path, device: other, from: cursors[other] ?? .start)
                cursors[other] = batch.cursor
                batches.append((other, batch))
            } catch {
                if case .notRegular = error.problem {
                    skipped.append(error)
                } else {
                    problems.append(JournalProblem(file: path, line: cursors[other]?.line ?? 0, message: error.reason))
                }
            }
        }
        return (batches, problems, skipped)
    }
}
