import DiligenceCore
import DiligenceSync
import DiligenceTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Writes `bytes` as the whole file at `path` (as a sync tool replacing it would).
private func write(_ path: String, _ bytes: [UInt8]) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    precondition(fd >= 0)
    bytes.withUnsafeBytes { _ = Glibc.write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

private func lines(_ entries: [JournalEntry]) -> [UInt8] {
    Array(entries.map { $0.line + "\n" }.joined().utf8)
}

@Suite("Reading journals") struct JournalReaderTests {
    let entries: [JournalEntry] = (1...5).map {
        entry(
            deviceA, Int64($0), 0,
            .sessionRecorded(session(uuid($0), task: uuid(99), device: deviceA, start: 1_764_000_000 + Double($0) * 3600)))
    }

    func withJournal(_ body: (String) throws -> Void) rethrows {
        let dir = TemporaryDirectory("diligence-sync-test")
        defer { dir.remove() }
        try body("\(dir.path)/\(deviceA).jsonl")
    }

    @Test("complete lines are read from where the last read stopped; a partial last line waits")
    func partialLine() throws {
        try withJournal { path in
            let all = lines(entries)
            let cut = all.count - 10 // the last line half-written
            write(path, Array(all[..<cut]))
            let first = try JournalReader.read(path: path, device: deviceA, from: .start)
            #expect(first.entries.map(\.entry) == Array(entries.prefix(4)))
            #expect(first.entries.map(\.line) == [1, 2, 3, 4])
            #expect(first.problems.isEmpty && !first.restarted)
            let again = try JournalReader.read(path: path, device: deviceA, from: first.cursor)
            #expect(again.entries.isEmpty && again.cursor == first.cursor)
            write(path, all)
            let rest = try JournalReader.read(path: path, device: deviceA, from: first.cursor)
            #expect(rest.entries.map(\.entry) == [entries[4]])
            #expect(rest.entries.map(\.line) == [5])
            #expect(rest.cursor.offset == Int64(all.count) && !rest.restarted)
        }
    }

    @Test("a garbled line is reported with its file and line and skipped; the lines after it are read")
    func garbled() throws {
        try withJournal { path in
            var bytes = lines(Array(entries.prefix(2)))
            bytes += Array("{\"v\":1,\"device\":\"garbage\n".utf8)
            bytes += Array("\n".utf8) // an empty line is no change and no problem
            bytes += Array(entry(deviceB, 9, 0, .sessionRemoved(id: uuid(1))).line.utf8) + [10] // another device's line
            bytes += lines(Array(entries.suffix(3)))
            write(path, bytes)
            let batch = try JournalReader.read(path: path, device: deviceA, from: .start)
            #expect(batch.entries.map(\.entry) == entries)
            #expect(batch.entries.map(\.line) == [1, 2, 6, 7, 8])
            #expect(batch.problems.map(\.line) == [3, 5])
            #expect(batch.problems.allSatisfy { $0.file == path })
            #expect(batch.problems[1].message.contains("written by device \(deviceB)"))
            #expect("\(batch.problems[0])".hasPrefix("\(path):3: "))
        }
    }

    @Test("an older version put back is read again from its start; so is another file of the same length")
    func rewritten() throws {
        try withJournal { path in
            let all = lines(entries)
            write(path, all)
            let read = try JournalReader.read(path: path, device: deviceA, from: .start)
            // An older version: shorter.
            write(path, lines(Array(entries.prefix(2))))
            let older = try JournalReader.read(path: path, device: deviceA, from: read.cursor)
            #expect(older.restarted)
            #expect(older.entries.map(\.entry) == Array(entries.prefix(2)))
            // The whole file again, then one with other bytes before the cursor, longer.
            write(path, all)
            let whole = try JournalReader.read(path: path, device: deviceA, from: older.cursor)
            #expect(!whole.restarted && whole.entries.map(\.entry) == Array(entries.suffix(3)))
            var other = entries
            other[4].hlc.counter = 1
            write(path, lines(other + [entries[0]]))
            let changed = try JournalReader.read(path: path, device: deviceA, from: whole.cursor)
            #expect(changed.restarted)
            #expect(changed.entries.count == 6 && changed.cursor.line == 6)
        }
    }

    @Test("a line of a newer diligence stops the read before it, and it is read again next time")
    func newerFormat() throws {
        try withJournal { path in
            var bytes = lines([entries[0]]) + Array("{\"v\":2,\"device\":\"\(deviceA)\"}\n".utf8) + lines([entries[1]])
            write(path, bytes)
            let batch = try JournalReader.read(path: path, device: deviceA, from: .start)
            #expect(batch.entries.map(\.entry) == [entries[0]] && batch.waitsForNewer)
            #expect(batch.cursor.line == 1)
            bytes = lines([entries[0]]) + Array("{\"v\":2,\"device\":\"\(deviceA)\"}\n".utf8)
            let again = try JournalReader.read(path: path, device: deviceA, from: batch.cursor)
            #expect(again.entries.isEmpty && again.waitsForNewer && !again.restarted)
        }
    }

    @Test("a missing file is an error that names it")
    func missing() throws {
        // Under a directory of the test's own: "/nonexistent" is a name anyone may create.
        let dir = TemporaryDirectory("diligence-reader")
        defer { dir.remove() }
        let path = dir.path + "/gone/x.jsonl"
        let error = try #require(throws: FileError.self) { try JournalReader.read(path: path, device: deviceA, from: .start) }
        #expect(error == FileError(path: path, problem: .system(ENOENT)), "\(error)")
        #expect(error.description == "\(path): No such file or directory")
    }

    @Test("a journal longer than one read is read in several, and every line once")
    func longJournal() throws {
        let bytes = lines(entries)
        var cursor = JournalCursor.start
        var got: [JournalEntry] = []
        // The scan alone, in pieces that cut lines anywhere.
        var offset = 0
        for piece in [1, 150, 3, 400, 90, 10_000] {
            let end = min(bytes.count, offset + piece)
            let batch = JournalReader.scan(
                Array(bytes[Int(cursor.offset)..<end]),
                before: Array(bytes[max(0, Int(cursor.offset) - JournalReader.window)..<Int(cursor.offset)]),
                from: cursor, file: "f", device: deviceA)
            got += batch.entries.map(\.entry)
            cursor = batch.cursor
            offset = end
        }
        #expect(got == entries)
        #expect(cursor.tail == JournalReader.checksum(bytes.suffix(JournalReader.window)))
    }
}
