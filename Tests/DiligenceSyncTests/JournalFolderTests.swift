import DiligenceCore
import DiligenceSync
import DiligenceTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

func fileBytes(_ path: String) -> [UInt8] {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return [] }
    defer { close(fd) }
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n <= 0 { break }
        out += buffer[..<n]
    }
    return out
}

/// Puts `bytes` at `path` the way a sync tool does: a temporary file renamed over it.
func deliver(_ bytes: [UInt8], to path: String) {
    let temporary = path + ".tmp"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    precondition(fd >= 0)
    bytes.withUnsafeBytes { _ = write(fd, $0.baseAddress, $0.count) }
    close(fd)
    rename(temporary, path)
}

@Suite("Sync folders") struct JournalFolderTests {
    @Test("a device appends to its own journal only and reads the others'; conflict copies and temporary files are not journals")
    func ownAndOthers() throws {
        let dir = TemporaryDirectory("diligence-sync-test")
        defer { dir.remove() }
        let a = SyncDevice(id: deviceA, directory: dir.path)
        let b = SyncDevice(id: deviceB, directory: dir.path)
        try a.change(.taskAdded(task(uuid(1), "Work")))
        try b.change(.taskAdded(task(uuid(2), "Work")))
        try b.change(.sessionRecorded(session(uuid(3), task: uuid(2), device: deviceB, start: 1_764_000_000)))
        deliver(Array("junk\n".utf8), to: "\(dir.path)/\(deviceB).sync-conflict-20261201-1.jsonl")
        deliver(Array("junk\n".utf8), to: "\(dir.path)/.syncthing.\(deviceB).jsonl.tmp")
        #expect(a.folder.otherJournals().map(\.device) == [deviceB])
        a.merge()
        b.merge()
        #expect(a.problems.isEmpty && b.problems.isEmpty)
        #expect(a.history.canonicalDump == b.history.canonicalDump)
        #expect(a.history.canonicalDump.contains("session \(uuid(3))"))
        #expect(fileBytes(a.folder.ownPath).split(separator: UInt8(ascii: "\n")).count == 1)
    }

    @Test("a line a crash left half-written is closed before the next append, which is then read")
    func halfWrittenOwnLine() throws {
        let dir = TemporaryDirectory("diligence-sync-test")
        defer { dir.remove() }
        let a = SyncDevice(id: deviceA, directory: dir.path)
        try a.change(.taskAdded(task(uuid(1), "Work")))
        deliver(fileBytes(a.folder.ownPath) + Array("{\"v\":1,\"dev".utf8), to: a.folder.ownPath)
        try a.change(.taskAdded(task(uuid(2), "Study")))
        let batch = try JournalReader.read(path: a.folder.ownPath, device: deviceA, from: .start)
        #expect(batch.entries.count == 2)
        #expect(batch.problems.map(\.line) == [2])
    }

    @Test("two devices converge whatever the transport does: out of order, half-written, twice, an older version back", arguments: 1...8)
    func adversarialTransport(seed: UInt64) throws {
        let dirA = TemporaryDirectory("diligence-sync-test")
        let dirB = TemporaryDirectory("diligence-sync-test")
        defer {
            dirA.remove()
            dirB.remove()
        }
        let a = SyncDevice(id: deviceA, directory: dirA.path)
        let b = SyncDevice(id: deviceB, directory: dirB.path)
        var random = SeededRandom(seed: seed)
        var olderCopies: [(path: String, bytes: [UInt8])] = []
        for (n, config) in TaskConfig.defaults.prefix(3).enumerated() {
            try a.change(.taskAdded(SyncedTask(id: uuid(0x100 + n), config: config)))
            try b.change(.taskAdded(SyncedTask(id: uuid(0x200 + n), config: config)))
        }
        var next = 1
        for step in 0..<60 {
            let (maker, other) = Bool.random(using: &random) ? (a, b) : (b, a)
            let (tasks, identity) = maker.history.liveTasks()
            let live = maker.history.liveSessions(identity: identity, liveTaskIDs: Set(tasks.map(\.id)))
            switch Int.random(in: 0..<6, using: &random) {
            case 0, 1, 2:
                let t = tasks.randomElement(using: &random)!
                try maker.change(
                    .sessionRecorded(
                        session(uuid(next), task: t.members.randomElement(using: &random)!, device: maker.folder.device, start: maker.wall))
                )
                next += 1
            case 3:
                if let s = live.randomElement(using: &random) { try maker.change(.sessionRemoved(id: s.session.id)) }
            case 4:
                var t = tasks.randomElement(using: &random)!
                t.config.name = "\(t.config.name.prefix(4)) \(step)"
                try maker.change(.taskEdited(SyncedTask(id: t.members.randomElement(using: &random)!, config: t.config)))
            default:
                try maker.change(
                    .planSet(day: .init(year: 2026, month: 12, day: Int.random(in: 1...3, using: &random))!, task: tasks[0].id))
            }
            // The transport: copies the maker's journal to the other's folder, or not, or half
            // of it, or an older copy of it, or the same bytes twice.
            let source = maker.folder.ownPath
            let target = "\(other.folder.directory)/\(maker.folder.device).jsonl"
            let bytes = fileBytes(source)
            switch Int.random(in: 0..<6, using: &random) {
            case 0: break
            case 1: deliver(Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &random))), to: target)
            case 2:
                if let older = olderCopies.filter({ $0.path == target }).randomElement(using: &random) { deliver(older.bytes, to: target) }
            case 3:
                deliver(bytes, to: target)
                other.merge()
                deliver(bytes, to: target)
            default: deliver(bytes, to: target)
            }
            olderCopies.append((target, bytes))
            if Bool.random(using: &random) { other.merge() }
        }
        // At last the transport catches up.
        deliver(fileBytes(a.folder.ownPath), to: "\(dirB.path)/\(deviceA).jsonl")
        deliver(fileBytes(b.folder.ownPath), to: "\(dirA.path)/\(deviceB).jsonl")
        a.merge()
        b.merge()
        #expect(a.problems.isEmpty && b.problems.isEmpty, "\(a.problems + b.problems)")
        #expect(a.history.canonicalDump == b.history.canonicalDump)
        // Nothing lost, nothing doubled: the history read back equals every line of both journals applied once.
        var reference = History()
        for path in [a.folder.ownPath, b.folder.ownPath] {
            for (_, e) in try JournalReader.read(path: path, device: path.contains(deviceA) ? deviceA : deviceB, from: .start).entries {
                reference.apply(e)
            }
        }
        #expect(a.history.canonicalDump == reference.canonicalDump)
    }
}

@Suite("Sync folders: this device's own journal checked before an append") struct OwnJournalStateTests {
    /// A journal of `count` task lines of `device` stamped 1000, 1001, ...
    static func lines(_ device: String, _ count: Int, from millis: Int64 = 1000) -> [JournalEntry] {
        (0..<count).map { entry(device, millis + Int64($0), 0, .taskAdded(task(uuid($0 + 1), "Task \($0)"))) }
    }

    @Test("intact, gone, an older version, lines appended by another, another version of the same length, a later stamp")
    func states() throws {
        let dir = TemporaryDirectory("diligence-sync-test")
        defer { dir.remove() }
        let place = JournalFolder(directory: dir.path, device: deviceA)
        try place.append(Self.lines(deviceA, 3))
        let older = fileBytes(place.ownPath)
        let written = try #require(try place.append(Self.lines(deviceA, 3, from: 2000)), "the end of the file written")
        let mine = fileBytes(place.ownPath)
        #expect(try JournalReader.end(of: place.ownPath) == written)
        let issued = HLC(millis: 2002, counter: 0)
        #expect(written.offset == Int64(mine.count))
        #expect(place.ownState(written: written, issued: issued) == .intact)

        deliver(older, to: place.ownPath)
        #expect(place.ownState(written: written, issued: issued) == .older, "a prefix of what was written")
        unlink(place.ownPath)
        #expect(place.ownState(written: written, issued: issued) == .older, "gone")

        // Lines after this device's: its own write a crash cut from its record, or another
        // machine's under this id (the device tells); a garbled one is not this device's.
        let appended = Self.lines(deviceA, 1, from: 1500)
        deliver(mine + Array((appended[0].line + "\n").utf8), to: place.ownPath)
        guard case .extended(let lines, let end) = place.ownState(written: written, issued: issued) else {
            Issue.record("a line appended after this device's is for the device to tell")
            return
        }
        #expect(lines == appended && end.offset == Int64(fileBytes(place.ownPath).count), "\(lines) \(end)")
        deliver(mine + Array("{\"v\":1,garbled\n".utf8), to: place.ownPath)
        guard case .foreign = place.ownState(written: written, issued: issued) else {
            Issue.record("a garbled line appended after this device's is another writer's")
            return
        }
        // Another machine's version of the file.
        var other = older
        for line in Self.lines(deviceA, 3, from: 2100) { other += Array((line.line + "\n").utf8) }
        deliver(other, to: place.ownPath)
        #expect(other.count >= mine.count)
        guard case .foreign = place.ownState(written: written, issued: issued) else {
            Issue.record("another version, not shorter, is another writer's")
            return
        }
        deliver(older + Array((Self.lines(deviceA, 1, from: 2003)[0].line + "\n").utf8), to: place.ownPath)
        #expect(fileBytes(place.ownPath).count < mine.count)
        guard case .foreign(let why) = place.ownState(written: written, issued: issued) else {
            Issue.record("a shorter file with a line stamped after every line this device wrote is another writer's")
            return
        }
        #expect(why.contains("line 4"), "\(why)")
        // A cursor kept as text comes back the same.
        #expect(JournalCursor(text: written.text) == written)
        #expect(JournalCursor(text: "12 x 3") == nil)
    }
}
