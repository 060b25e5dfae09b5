/// Splits a client's byte stream into request lines, as a value: bytes go in with `append`,
/// lines come out of `next()`. A line ends at "\n" (a "\r" before it is dropped); blank lines
/// — empty, or only JSON's whitespace (spaces, tabs, "\r") — are skipped; a line longer than `maxLineBytes`, complete or not, is `.tooLong` (its rest
/// could not be told from the next request).
struct LineFramer {
    enum Next: Equatable {
        case line(ArraySlice<UInt8>)
        /// No complete line yet.
        case needMore
        case tooLong
    }

    let maxLineBytes: Int
    private var buffer: [UInt8] = []
    /// Bytes before `start` were handed out already.
    private var start = 0
    /// No newline before this index (so a long partial line is not searched again per read).
    private var searched = 0

    init(maxLineBytes: Int) {
        self.maxLineBytes = maxLineBytes
    }

    /// Bytes received and not yet handed out as lines.
    var pendingBytes: Int { buffer.count - start }
    /// Whether the bytes held are the start of a line still waiting for its newline.
    var hasPartialLine: Bool { pendingBytes > 0 && buffer[searched...].firstIndex(of: 0x0A) == nil }

    mutating func append(_ bytes: some Collection<UInt8>) {
        if start > 0 {
            buffer.removeFirst(start)
            searched -= start
            start = 0
        }
        buffer += bytes
    }

    /// The next complete request line, if one is there.
    mutating func next() -> Next {
        while true {
            guard let newline = buffer[max(start, searched)...].firstIndex(of: 0x0A) else {
                searched = buffer.count
                return pendingBytes > maxLineBytes ? .tooLong : .needMore
            }
            var line = buffer[start..<newline]
            start = newline + 1
            searched = start
            if line.count > maxLineBytes { return .tooLong }
            if line.last == 0x0D { line = line.dropLast() }
            if !line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return .line(line) }
        }
    }

    /// Forgets everything held (after `.tooLong`, or when the connection stops taking requests).
    mutating func reset() {
        buffer = []
        start = 0
        searched = 0
    }
}
