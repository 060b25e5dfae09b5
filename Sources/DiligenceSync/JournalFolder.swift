#if canImport(Glibc)
    import Glibc
#endif

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
    public var ownPath: String { "\(directory)/\(device).jsonl" }

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
    /// garbled and skip it) so that it cannot swallow the first line written now.
    public func append(_ entries: [JournalEntry]) throws(JournalReadError) {
        guard !entries.isEmpty else { return }
        let path = ownPath
        let fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw JournalReadError(path: path, errno: errno) }
        defer { close(fd) }
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
                throw JournalReadError(path: path, errno: errno)
            }
            done += n
        }
        guard fdatasync(fd) == 0 else { throw JournalReadError(path: path, errno: errno) }
    }

    /// Reads every other device's journal past its cursor in `cursors` (a journal not in it
    /// from its start) and moves the cursors on. A journal that cannot be read (gone between
    /// the listing and the read) is left for the next time, as a problem.
    public func readOthers(cursors: inout [String: JournalCursor]) -> (
        batches: [(device: String, batch: JournalBatch)], problems: [JournalProblem]
    ) {
        var batches: [(device: String, batch: JournalBatch)] = []
        var problems: [JournalProblem] = []
        for (other, path) in otherJournals() {
            do {
                let batch = try JournalReader.read(path: path, device: other, from: cursors[other] ?? .start)
                cursors[other] = batch.cursor
                batches.append((other, batch))
            } catch {
                problems.append(JournalProblem(file: path, line: cursors[other]?.line ?? 0, message: "\(error)"))
            }
        }
        return (batches, problems)
    }
}
