#if canImport(Glibc)
    import Glibc
#endif

// Reading another device's journal as a sync tool delivers it (docs/sync.md, "Reading"):
// only complete lines, from where the last read stopped. A last line without its newline is a
// file still arriving: it waits. A line that cannot be read is reported with its file and
// line number and skipped; the rest goes on. A file whose bytes before the stopping point are
// not the ones read (a sync tool put an older or another version back) is read again from its
// start: applying a line twice changes nothing (History.apply), so that is always safe.

/// How far a journal file has been read: the byte after the last complete line taken, how
/// many lines that was, and a checksum of the bytes just before it.
public struct JournalCursor: Equatable, Sendable {
    public var offset: Int64
    public var line: Int
    /// FNV-1a (64 bits) of the `JournalReader.window` bytes before `offset` (fewer at a file's
    /// start): a file changed there is not the file that was read.
    public var tail: UInt64

    public init(offset: Int64 = 0, line: Int = 0, tail: UInt64 = JournalReader.emptyChecksum) {
        self.offset = offset
        self.line = line
        self.tail = tail
    }

    public static let start = JournalCursor()

    /// `OFFSET LINE TAIL` (the checksum in hexadecimal): how a cursor is kept as one text.
    public var text: String { "\(offset) \(line) \(String(tail, radix: 16))" }

    /// A cursor from `text`; nil when it is not one.
    public init?(text: String) {
        let parts = text.split(separator: " ")
        guard parts.count == 3, let offset = Int64(parts[0]), offset >= 0, let line = Int(parts[1]), line >= 0,
            let tail = UInt64(parts[2], radix: 16)
        else { return nil }
        self.init(offset: offset, line: line, tail: tail)
    }
}

/// A line of a journal that could not be read, with where it is.
public struct JournalProblem: Equatable, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var message: String

    public var description: String { "\(file):\(line): \(message)" }
}

/// What one read of a journal found.
public struct JournalBatch: Sendable {
    /// The entries of the complete lines read, with their line numbers.
    public var entries: [(line: Int, entry: JournalEntry)] = []
    public var problems: [JournalProblem] = []
    /// Where the next read starts.
    public var cursor: JournalCursor
    /// The file was not the one read before (shorter, or other bytes before the cursor): it
    /// was read again from its start.
    public var restarted = false
    /// A line written by a newer diligence stopped the read (it waits at the cursor).
    public var waitsForNewer = false
}

public enum JournalReader {
    /// How many bytes before the cursor its checksum covers.
    public static let window = 4096
    /// The most one read takes in: a longer journal is read in several (each applied in a
    /// transaction of its own).
    public static let maxReadBytes = 32 * 1024 * 1024

    public static let emptyChecksum: UInt64 = 0xcbf2_9ce4_8422_2325

    /// FNV-1a of `bytes`.
    public static func checksum<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt64 {
        var hash = emptyChecksum
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// The device id a journal's file name says (`<id>.jsonl`), or nil for another file.
    public static func device(ofFileName name: String) -> String? {
        guard name.hasSuffix(".jsonl") else { return nil }
        let id = String(name.dropLast(6))
        guard let parsed = SyncID.parse(id), parsed == id else { return nil }
        return id
    }

    /// Reads the complete lines of `path` (the journal of `device`) past `cursor`. Throws
    /// `FileError` when the file cannot be opened or read (it may have gone: a sync tool
    /// replacing it) or is not a regular file (a FIFO, a link: never waited on nor followed);
    /// the cursor then stays where it was.
    public static func read(path: String, device: String, from cursor: JournalCursor) throws(FileError) -> JournalBatch {
        let fd = try RegularFile.open(path, O_RDONLY)
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileError(path: path, problem: .system(errno)) }
        let size = Int64(info.st_size)
        var start = cursor
        var restarted = false
        if size < cursor.offset {
            start = .start
            restarted = true
        }
        let windowStart = max(0, start.offset - Int64(window))
        var before = try pread(fd, path: path, at: windowStart, count: Int(start.offset - windowStart))
        if before.count != Int(start.offset - windowStart) || checksum(before) != start.tail {
            start = .start
            restarted = true
            before = []
        }
        let count = Int(min(size - start.offset, Int64(maxReadBytes)))
        let bytes = count > 0 ? try pread(fd, path: path, at: start.offset, count: count) : []
        var batch = scan(bytes, before: before, from: start, file: path, device: device)
        batch.restarted = restarted
        return batch
    }

    /// The cursor at the end of `path` (its size and the checksum of its last `window` bytes;
    /// no line count); nil when there is no such file.
    public static func end(of path: String) throws(FileError) -> JournalCursor? {
        let fd: Int32
        do { fd = try RegularFile.open(path, O_RDONLY) } catch  where error.isMissing { return nil }
        defer { close(fd) }
        return try end(of: fd, path: path)
    }

    /// The cursor at the end of the open file `fd` (`path` names it in errors).
    static func end(of fd: Int32, path: String) throws(FileError) -> JournalCursor {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileError(path: path, problem: .system(errno)) }
        let size = Int64(info.st_size)
        let start = max(0, size - Int64(window))
        let tail = try pread(fd, path: path, at: start, count: Int(size - start))
        return JournalCursor(offset: Int64(tail.count) + start, tail: checksum(tail))
    }

    /// The complete lines of `bytes` (the file from `cursor.offset` on; `before`: the window
    /// of bytes before it) as entries of `device`, and the cursor after the last one taken.
    public static func scan(_ bytes: [UInt8], before: [UInt8], from cursor: JournalCursor, file: String, device: String) -> JournalBatch {
        var batch = JournalBatch(cursor: cursor)
        var lineStart = 0
        var taken = 0
        var line = cursor.line
        while let newline = newline(in: bytes, from: lineStart) {
            line += 1
            let text = bytes[lineStart..<newline]
            if text.count > JournalEntry.maxLineBytes {
                batch.problems.append(JournalProblem(file: file, line: line, message: "longer than \(JournalEntry.maxLineBytes) bytes"))
            } else if !text.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") }) {
                do {
                    let entry = try JournalEntry.parse(text)
                    if entry.device == device {
                        batch.entries.append((line, entry))
                    } else {
                        batch.problems.append(
                            JournalProblem(file: file, line: line, message: "written by device \(entry.device), not this file's \(device)"))
                    }
                } catch {
                    batch.problems.append(JournalProblem(file: file, line: line, message: error.message))
                    if error.newer {
                        batch.waitsForNewer = true
                        line -= 1
                        break
                    }
                }
            }
            lineStart = newline + 1
            taken = lineStart
        }
        batch.cursor.offset = cursor.offset + Int64(taken)
        batch.cursor.line = line
        // The checksum window ends at the new offset: the bytes taken, after those before.
        batch.cursor.tail =
            taken >= window ? checksum(bytes[(taken - window)..<taken]) : checksum(before.suffix(window - taken) + bytes[..<taken])
        return batch
    }

    /// The index of the first newline of `bytes` from `start`, by `memchr` (the generic
    /// `firstIndex(of:)` took 1.7 % of a 100 000-session merge's perf samples).
    private static func newline(in bytes: [UInt8], from start: Int) -> Int? {
        bytes.withUnsafeBufferPointer { buffer -> Int? in
            guard start < buffer.count, let base = buffer.baseAddress,
                let found = memchr(base + start, Int32(UInt8(ascii: "\n")), buffer.count - start)
            else { return nil }
            return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
        }
    }

    private static func pread(_ fd: Int32, path: String, at offset: Int64, count: Int) throws(FileError) -> [UInt8] {
        guard count > 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = buffer.withUnsafeMutableBytes { raw in
                Glibc.pread(fd, raw.baseAddress! + done, count - done, off_t(offset) + off_t(done))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw FileError(path: path, problem: .system(errno))
            }
            if n == 0 { break }
            done += n
        }
        // Shortened in place, not copied (a read is up to `maxReadBytes`).
        buffer.removeLast(count - done)
        return buffer
    }
}
