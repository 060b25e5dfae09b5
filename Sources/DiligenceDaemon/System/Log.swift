import CSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// Log lines: structured journal entries through `sd_journal_sendv` when stderr goes to the
/// journal (systemd sets `JOURNAL_STREAM`) and the journal really takes them, else stderr lines
/// with a `<N>` priority prefix that systemd and `journalctl` understand too.
public final class Log: @unchecked Sendable {
    public enum Priority: Int32 {
        case error = 3
        case warning = 4
        case notice = 5
        case info = 6
        case debug = 7
    }

    /// Set once at start-up (`--verbose`) before any queue or thread runs, then only read.
    public nonisolated(unsafe) static var verbose = false
    private static let toJournal = isJournalStream(getenv("JOURNAL_STREAM").map { String(cString: $0) }, fd: 2)

    /// Whether `fd` is the stream systemd connected to the journal: `JOURNAL_STREAM` holds its
    /// "device:inode". A stderr redirected elsewhere (a file, a terminal) keeps the plain lines
    /// even when the variable was inherited.
    static func isJournalStream(_ journalStream: String?, fd: Int32) -> Bool {
        guard let journalStream, let st = Sys.status(of: fd) else { return false }
        return journalStream == "\(st.st_dev):\(st.st_ino)"
    }

    /// A stderr line: `<6>Started work of Study. (event=phase_started task=Study)`. The `<N>`
    /// prefix is the syslog priority, which systemd and journalctl read from a plain stream.
    static func stderrLine(_ priority: Priority, _ message: String, fields: [(String, String)]) -> String {
        let extra = fields.isEmpty ? "" : " (" + fields.map { "\($0.0.lowercased())=\($0.1)" }.joined(separator: " ") + ")"
        return "<\(priority.rawValue)>\(message)\(extra)\n"
    }

    /// The socket `sd_journal_sendv` writes to. The call reports success when it is missing
    /// (journald not running, a container, a namespace without /run/systemd), so a line would
    /// vanish: each write checks that it is there.
    static let journalSocket = "/run/systemd/journal/socket"

    static func journalReachable() -> Bool {
        Sys.status(following: journalSocket).map(Sys.isSocket) == true
    }

    /// Calls `body` with one iovec per entry, pointing into one buffer that lives exactly as
    /// long as the call: the pointers never leave it (sd_journal_sendv copies what it sends).
    static func withJournalVectors<R>(_ entries: [String], _ body: ([iovec]) -> R) -> R {
        var bytes: [UInt8] = []
        var ranges: [Range<Int>] = []
        for entry in entries {
            let start = bytes.count
            bytes += entry.utf8
            ranges.append(start..<bytes.count)
        }
        return bytes.withUnsafeMutableBytes { buffer in
            body(ranges.map { range in iovec(iov_base: buffer.baseAddress.map { $0 + range.lowerBound }, iov_len: range.count) })
        }
    }

    /// Writes one entry; `fields` are extra journal fields such as `TASK`, `PHASE`, `EVENT`.
    /// To the journal when stderr is its stream and its socket is there and takes the entry;
    /// to stderr otherwise, so no line is lost.
    public static func write(
        _ priority: Priority, _ message: String, fields: [(String, String)] = [],
        file: String = #fileID, line: Int = #line
    ) {
        if priority == .debug && !verbose { return }
        if toJournal && journalReachable() {
            var entries = [
                "MESSAGE=\(message)", "PRIORITY=\(priority.rawValue)", "SYSLOG_IDENTIFIER=diligenced",
                "CODE_FILE=\(file)", "CODE_LINE=\(line)",
            ]
            entries += fields.map { "\($0.0)=\($0.1)" }
            if withJournalVectors(entries, { sd_journal_sendv($0, Int32($0.count)) }) >= 0 { return }
        }
        Sys.writeIgnoringErrors(2, Array(stderrLine(priority, message, fields: fields).utf8))
    }

    public static func error(_ m: String, fields: [(String, String)] = [], file: String = #fileID, line: Int = #line) {
        write(.error, m, fields: fields, file: file, line: line)
    }
    public static func warning(_ m: String, fields: [(String, String)] = [], file: String = #fileID, line: Int = #line) {
        write(.warning, m, fields: fields, file: file, line: line)
    }
    public static func info(_ m: String, fields: [(String, String)] = [], file: String = #fileID, line: Int = #line) {
        write(.info, m, fields: fields, file: file, line: line)
    }
    public static func debug(_ m: String, fields: [(String, String)] = [], file: String = #fileID, line: Int = #line) {
        write(.debug, m, fields: fields, file: file, line: line)
    }
}
