import DiligenceCore
import DiligenceSync
import DiligenceTestSupport
import DiligenceTime
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The journals' grammar fuzzer (docs/e2e-tests.md, "Fuzzing the journals"): another device's
/// journal of lines generated from the line format (`JournalLineGenerator`), sound ones mixed
/// with hostile ones, read as the reader reads a file. Seeded: `DILIGENCE_FUZZ_SEED` replays
/// another run; a failure names the seed and the line.
@Suite("Journal lines generated from the line format") struct JournalFuzzTests {
    static var seed: UInt64 { getenv("DILIGENCE_FUZZ_SEED").flatMap { UInt64(String(cString: $0)) } ?? 0x5EED_D111_6E4C_E001 }
    /// `DILIGENCE_JOURNAL_FUZZ_LINES` runs more.
    static let lines = getenv("DILIGENCE_JOURNAL_FUZZ_LINES").flatMap { Int(String(cString: $0)) } ?? 2_000

    /// The journal of `seed` and what the reader makes of it, made once for the tests that share it.
    static let fuzzed: (lines: [(bytes: [UInt8], sound: Bool)], bytes: [UInt8], batch: JournalBatch) = {
        let (lines, bytes) = journal(seed: seed)
        return (lines, bytes, JournalReader.scan(bytes, before: [], from: .start, file: "fuzz.jsonl", device: deviceA))
    }()

    /// A generated journal of `deviceA`: its lines (sound or not) and its bytes, with a partial
    /// last line (a file still arriving).
    static func journal(seed: UInt64, count: Int = lines) -> (lines: [(bytes: [UInt8], sound: Bool)], bytes: [UInt8]) {
        var generator = JournalLineGenerator(seed: seed, device: deviceA)
        let lines = (0..<count).map { _ in generator.next(soundPercent: 40) }
        let partial = Array(generator.soundLine().line.utf8.prefix(30))
        return (lines, lines.flatMap { $0.bytes + [UInt8(ascii: "\n")] } + partial)
    }

    @Test("the reader takes every sound line, accounts for every other one, never traps, and leaves the partial line waiting")
    func everyLineAccountedFor() throws {
        let (lines, bytes, batch) = Self.fuzzed
        let taken = Set(batch.entries.map(\.line))
        let refused = Set(batch.problems.map(\.line))
        #expect(taken.isDisjoint(with: refused))
        for (index, line) in lines.enumerated() {
            let number = index + 1
            let blank = line.bytes.allSatisfy { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") }
            #expect(
                taken.contains(number) || refused.contains(number) || blank,
                "seed \(Self.seed): line \(number) neither taken nor refused: \(String(decoding: line.bytes.prefix(300), as: UTF8.self))")
            if line.sound {
                #expect(
                    taken.contains(number),
                    "seed \(Self.seed): sound line \(number) refused: \(batch.problems.filter { $0.line == number })")
            }
        }
        #expect(batch.cursor.line == lines.count && !batch.waitsForNewer, "seed \(Self.seed)")
        #expect(batch.cursor.offset == Int64(bytes.lastIndex(of: UInt8(ascii: "\n"))! + 1), "the partial last line waits")
        #expect(
            refused.count > lines.count / 4 && taken.count > lines.count / 3, "both kinds: \(taken.count) taken, \(refused.count) refused")
        let reasons = Dictionary(grouping: batch.problems) { String($0.message.prefix(24)) }.mapValues(\.count)
        let summary = reasons.sorted { $0.value > $1.value }.prefix(12).map { "\($0.key)… \($0.value)" }.joined(separator: "; ")
        print("journal fuzz: seed \(Self.seed), \(lines.count) lines, \(taken.count) taken, \(refused.count) refused: \(summary)")
    }

    @Test("a line of a newer format stops the read before it: the lines before it read, none after, the cursor at its start")
    func newerFormatWaits() throws {
        var generator = JournalLineGenerator(seed: Self.seed, device: deviceA)
        var lines = (0..<300).map { _ in generator.next(soundPercent: 60) }
        let at = 100 + generator.int(100)
        let sound = generator.soundLine().line
        let newer = #"{"v":2,"# + sound.dropFirst(#"{"v":1,"#.count)
        lines.insert((Array(newer.utf8), false), at: at)
        let bytes = lines.flatMap { $0.bytes + [UInt8(ascii: "\n")] }
        let batch = JournalReader.scan(bytes, before: [], from: .start, file: "fuzz.jsonl", device: deviceA)
        #expect(batch.waitsForNewer && batch.cursor.line == at, "seed \(Self.seed): stopped at line \(batch.cursor.line), not \(at)")
        #expect(batch.cursor.offset == Int64(lines[..<at].reduce(0) { $0 + $1.bytes.count + 1 }))
        #expect(batch.entries.allSatisfy { $0.line <= at } && batch.problems.allSatisfy { $0.line <= at + 1 })
        let before = Set(lines[..<at].indices.filter { lines[$0].sound }.map { $0 + 1 })
        #expect(before.isSubset(of: Set(batch.entries.map(\.line))), "seed \(Self.seed)")
    }

    @Test("a session past the end of 9999 is refused in words that say so (a line is not read against this device's now)")
    func sessionPastTheLastDay() throws {
        let end = Double(HLC.millisRange.upperBound / 1000) + 1
        let line = entry(deviceA, 1, 0, .sessionRecorded(session(uuid(1), task: uuid(9), device: deviceA, start: end - 1500))).line
        #expect {
            try JournalEntry.parse(Array(line.utf8))
        } throws: { error in
            let message = (error as? JournalLineError)?.message ?? ""
            return message.contains("9999-12-31") && !message.contains("from now")
        }
    }

    @Test("every line the reader takes writes back as a line that reads as the same entry")
    func acceptedLinesRoundTrip() throws {
        let batch = Self.fuzzed.batch
        for (number, entry) in batch.entries {
            let again = try? JournalEntry.parse(Array(entry.line.utf8))
            #expect(again == entry, "seed \(Self.seed): line \(number) written back as \(entry.line.prefix(400))")
            #expect(again?.line == entry.line, "seed \(Self.seed): line \(number)")
        }
    }

    @Test("every line the reader takes meets the rules the recorder applies: ids, clock, sessions, tasks, names, days")
    func acceptedLinesMeetTheRules() throws {
        let batch = Self.fuzzed.batch
        for (number, entry) in batch.entries {
            let problems = Self.problems(entry)
            #expect(problems.isEmpty, "seed \(Self.seed): line \(number) \(entry.line.prefix(400)): \(problems)")
        }
    }

    /// What `entry` holds that `history add`, `task add`, `plan` or `sync enable --name`
    /// would refuse (the date window's end aside: the store checks that against its own now).
    static func problems(_ entry: JournalEntry) -> [String] {
        var problems: [String] = []
        func id(_ text: String) { if SyncID.parse(text) != text { problems.append("id \(text)") } }
        id(entry.device)
        if !HLC.millisRange.contains(entry.hlc.millis) || !HLC.counterRange.contains(entry.hlc.counter) {
            problems.append("clock \(entry.hlc)")
        }
        let window = DateWindow.sessions(now: 0).lowerBound...Double(JournalLineGenerator.maxMillis) / 1000
        switch entry.change {
        case .sessionRecorded(let s), .sessionEdited(let s):
            [s.id, s.task, s.device].forEach(id)
            if let problem = SessionRules.problem(with: s.work, window: window) { problems.append(problem) }
            if let note = s.note, (try? SessionNote.normalize(note)) != note { problems.append("note \(note.debugDescription)") }
        case .sessionRemoved(let i), .taskRemoved(let i): id(i)
        case .taskAdded(let t), .taskEdited(let t), .taskArchived(let t):
            id(t.id)
            do { try t.config.validate() } catch { problems.append(error.message) }
            if (try? TaskName.normalize(t.config.name)) != t.config.name { problems.append("name \(t.config.name.debugDescription)") }
        case .planSet(let day, let task):
            id(task)
            if day < DateWindow.firstDay { problems.append("day \(day)") }
        case .planCleared(let day): if day < DateWindow.firstDay { problems.append("day \(day)") }
        case .deviceNamed(let name):
            if (try? DeviceName.normalize(name)) != name { problems.append("device name \(name.debugDescription)") }
        }
        return problems
    }

    @Test("the history of the accepted lines is the same whatever order and how often they come", arguments: 0..<3)
    func orderIndependent(run: UInt64) throws {
        let entries = Self.fuzzed.batch.entries.map(\.entry)
        var random = SeededRandom(seed: Self.seed &+ run &* 7919)
        let reference = history(entries).canonicalDump
        #expect(reference.contains("session ") && reference.contains("task "), "the accepted lines hold sessions and tasks")
        var shuffled = entries + (0..<entries.count / 3).map { _ in entries.randomElement(using: &random)! }
        shuffled.shuffle(using: &random)
        #expect(history(shuffled).canonicalDump == reference, "seed \(Self.seed), shuffle \(run)")
    }

    @Test("every task the history of the accepted lines shows has a name task add takes as it is")
    func shownNamesAreNames() throws {
        let tasks = history(Self.fuzzed.batch.entries.map(\.entry)).liveTasks().tasks
        for name in tasks.map(\.config.name) {
            #expect((try? TaskName.normalize(name)) == name, "seed \(Self.seed): \(name.debugDescription) (\(name.count) characters)")
        }
    }

    @Test("two tasks of one 64-character name: the one numbered still has a name of at most 64 characters")
    func numberedLongName() throws {
        let long = String(repeating: "n", count: TaskName.maxLength)
        let h = history([
            entry(deviceA, 1, 0, .taskAdded(task(uuid(1), long))), entry(deviceA, 2, 0, .taskEdited(task(uuid(1), "Other"))),
            entry(deviceA, 3, 0, .taskAdded(task(uuid(2), long))), entry(deviceA, 4, 0, .taskEdited(task(uuid(1), long))),
        ])
        let names = h.liveTasks().tasks.map(\.config.name)
        #expect(names.count == 2 && Set(names).count == 2, "\(names)")
        for name in names { #expect((try? TaskName.normalize(name)) == name, "\(name) (\(name.count) characters)") }
    }

    @Test("a clock that observed a reading with the greatest counter another device may write stamps a reading every device reads")
    func greatestCounterObserved() throws {
        var clock = HybridClock()
        clock.observe(HLC(millis: 1_790_000_000_000, counter: HLC.counterRange.upperBound), now: 1_790_000_000)
        let own = JournalEntry(device: deviceB, hlc: clock.stamp(now: 1_790_000_000), change: .sessionRemoved(id: uuid(1)))
        #expect(own.hlc > HLC(millis: 1_790_000_000_000, counter: HLC.counterRange.upperBound))
        #expect(throws: Never.self, "\(own.line)") { try JournalEntry.parse(Array(own.line.utf8)) }
    }

    @Test("a wall clock past the year 9999 stamps a reading a line may carry, and the next one later")
    func wallClockPastTheRange() throws {
        var clock = HybridClock()
        let first = clock.stamp(now: 1e13)
        let second = clock.stamp(now: 1e13)
        for reading in [first, second] {
            let own = JournalEntry(device: deviceB, hlc: reading, change: .sessionRemoved(id: uuid(1)))
            #expect(throws: Never.self, "\(own.line)") { try JournalEntry.parse(Array(own.line.utf8)) }
        }
        #expect(first < second)
    }

    @Test("after reading the accepted lines, the lines this device writes are lines every device reads")
    func ownLinesStayReadable() throws {
        let entries = Self.fuzzed.batch.entries.map(\.entry)
        let now = JournalLineGenerator.soundStart
        var clock = HybridClock()
        for entry in entries {
            clock.observe(entry.hlc, now: now)
            let own = JournalEntry(device: deviceB, hlc: clock.stamp(now: now), change: .sessionRemoved(id: uuid(1)))
            #expect(throws: Never.self, "seed \(Self.seed): after \(entry.hlc)") { try JournalEntry.parse(Array(own.line.utf8)) }
        }
    }
}

/// The journals' fuzzer's special files (docs/reliability.md, "Files that are not files"): the
/// names a journal can have, taken by what another hand or a sync tool can put there.
@Suite("Journal names that are not regular files") struct SpecialJournalFileTests {
    /// Every kind of non-regular file at another device's journal name, beside a fuzzed regular
    /// journal: the regular one read whole, each other skipped saying what it is, none waited on
    /// (a FIFO without a writer held the open for ever) nor followed (a link to a journal outside).
    @Test("another device's journal name held by a FIFO, a link, a directory, a device: skipped saying what it is, never waited on")
    func othersSkipped() throws {
        let dir = TemporaryDirectory("diligence-sync-test")
        defer { dir.remove() }
        let outside = TemporaryDirectory("diligence-sync-test")
        defer { outside.remove() }
        let (lines, bytes) = JournalFuzzTests.journal(seed: JournalFuzzTests.seed, count: 200)
        // The fuzzed journal is device A's; this device is B.
        let folder = JournalFolder(directory: dir.path, device: deviceB)
        deliver(bytes, to: folder.path(of: deviceA))
        // A journal of its own outside the folder, reachable only through the link.
        var generator = JournalLineGenerator(seed: JournalFuzzTests.seed, device: deviceC)
        deliver(Array((generator.soundLine().line + "\n").utf8), to: outside.path + "/secret.jsonl")
        let kinds: [(id: String, kind: FileKind)] = [
            (uuid(0xC, "c"), .symlink), (uuid(0xD, "d"), .fifo), (uuid(0xE, "e"), .directory), (uuid(0xF, "f"), .characterDevice),
        ]
        #expect(symlink(outside.path + "/secret.jsonl", folder.path(of: kinds[0].id)) == 0)
        #expect(mkfifo(folder.path(of: kinds[1].id), 0o600) == 0)
        #expect(mkdir(folder.path(of: kinds[2].id), 0o700) == 0)
        // /dev/null's numbers (1, 3): the test runs as root, as `make test` does.
        try #require(mknod(folder.path(of: kinds[3].id), S_IFCHR | 0o600, dev_t(1 << 8 | 3)) == 0, "mknod needs root")

        var cursors: [String: JournalCursor] = [:]
        let read = folder.readOthers(cursors: &cursors)
        #expect(read.batches.map(\.device) == [deviceA])
        let taken = Set(read.batches.first?.batch.entries.map(\.line) ?? [])
        let sound = Set(lines.indices.filter { lines[$0].sound }.map { $0 + 1 })
        #expect(!sound.isEmpty && sound.isSubset(of: taken), "the regular journal read whole: \(sound.subtracting(taken).sorted())")
        #expect(read.problems.isEmpty, "\(read.problems)")
        #expect(read.skipped.map(\.path) == kinds.map { folder.path(of: $0.id) }, "\(read.skipped)")
        for (file, expected) in zip(read.skipped, kinds) {
            #expect(file.problem == .notRegular(expected.kind))
            #expect(file.description == "\(folder.path(of: expected.id)): it is \(expected.kind.rawValue), not a regular file")
        }
        #expect(cursors[kinds[0].id] == nil, "nothing was read through the link")
    }

    /// This device's own journal replaced by a link to a file outside (`~/.bashrc` in the
    /// review) or by a FIFO: the append refuses it, the target unchanged.
    @Test(
        "this device's journal replaced by a link or a FIFO: not written through, the append says what it is",
        arguments: [FileKind.symlink, .fifo])
    func ownRefused(kind: FileKind) throws {
        let dir = TemporaryDirectory("diligence-sync-test")
        defer { dir.remove() }
        let a = SyncDevice(id: deviceA, directory: dir.path)
        let target = dir.path + "/bashrc"
        deliver(Array("export PS1='$ '\n".utf8), to: target)
        if kind == .symlink { #expect(symlink(target, a.folder.ownPath) == 0) } else { #expect(mkfifo(a.folder.ownPath, 0o600) == 0) }
        #expect(throws: FileError(path: a.folder.ownPath, problem: .notRegular(kind))) {
            try a.change(.taskAdded(task(uuid(1), "Work")))
        }
        #expect(fileBytes(target) == Array("export PS1='$ '\n".utf8), "the link's target unchanged")
        #expect(throws: FileError(path: a.folder.ownPath, problem: .notRegular(kind))) { try JournalReader.end(of: a.folder.ownPath) }
    }

    @Test("this device's journal is created 0600 under umask 022, and a 0644 one narrowed at the next append")
    func ownJournalPrivate() throws {
        let dir = TemporaryDirectory("diligence-sync-test")
        defer { dir.remove() }
        let a = SyncDevice(id: deviceA, directory: dir.path)
        // umask is the process's: the other tests running meanwhile create nothing that matters.
        let before = umask(0o022)
        defer { umask(before) }
        try a.change(.taskAdded(task(uuid(1), "Work")))
        var st = stat()
        #expect(stat(a.folder.ownPath, &st) == 0 && st.st_mode & 0o7777 == 0o600, "mode \(String(st.st_mode & 0o7777, radix: 8))")
        #expect(chmod(a.folder.ownPath, 0o644) == 0)
        try a.change(.taskAdded(task(uuid(2), "Study")))
        #expect(stat(a.folder.ownPath, &st) == 0 && st.st_mode & 0o7777 == 0o600, "mode \(String(st.st_mode & 0o7777, radix: 8))")
    }
}

/// Clocks that are wrong (docs/sync.md, "Clocks that are wrong"; issue 26, finding 4): three
/// devices, C's wall clock off by `offset`, edit one task in a seeded random order, each after
/// reading every journal. Within the bound (`HybridClock.maxDriftMillis`) the edit made last wins
/// on every device; beyond it the fast device's lines are still applied (its last edit wins);
/// either way the devices converge and write only lines every device reads.
@Suite("Journals of devices whose clocks are wrong") struct SkewedClockFuzzTests {
    /// C's clock: 30 h and 6 days fast, 30 h slow (within the bound), 8 and 400 days fast (beyond).
    static let offsets: [Double] = [30 * 3600, 6 * 86400, -30 * 3600, 8 * 86400, 400 * 86400]

    @Test(
        "an edit made after reading the others' wins within the bound; beyond it the fast device's lines are still applied; all converge",
        arguments: SkewedClockFuzzTests.offsets)
    func skewedClocks(offset: Double) throws {
        let dir = TemporaryDirectory("diligence-sync-test")
        defer { dir.remove() }
        let devices = [deviceA, deviceB, deviceC].map { SyncDevice(id: $0, directory: dir.path, step: 1) }
        let offsets = [0.0, 0.0, offset]
        var random = SeededRandom(seed: JournalFuzzTests.seed ^ UInt64(Int64(offset).magnitude))
        var real = 1_764_000_000.0
        let daily = uuid(0x51)
        devices[0].wall = real
        try devices[0].change(.taskAdded(task(daily, "Daily")))
        var last = ""
        var lastOfC: String?
        for round in 0..<300 {
            real += Double(random.next() % 600) + 1
            let index = Int(random.next() % 3)
            let device = devices[index]
            device.wall = real + offsets[index] - device.step
            device.merge()
            var edited = task(daily, "Daily")
            last = "edit \(round) on \(index)"
            edited.config.description = last
            try device.change(.taskEdited(edited))
            if index == 2 { lastOfC = last }
        }
        for device in devices { device.merge() }
        let seed = "seed \(JournalFuzzTests.seed), C off by \(offset) s"
        #expect(devices.allSatisfy { $0.problems.isEmpty }, "\(seed): every line read: \(devices.flatMap(\.problems))")
        #expect(Set(devices.map(\.history.canonicalDump)).count == 1, "\(seed): the devices converge")
        let shown = devices[0].history.liveTasks().tasks.first { $0.id == daily }?.config.description
        // The bound docs/sync.md documents: a week.
        if abs(offset) <= 7 * 86400 {
            #expect(shown == last, "\(seed): the edit made last wins")
        } else {
            #expect(shown == lastOfC, "\(seed): the fast device's lines are applied, its last edit the latest by its clock")
        }
    }
}
