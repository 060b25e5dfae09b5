import DiligenceCore
import DiligenceJSON
import DiligenceSync
import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// The journals' grammar fuzzer against the real daemon (docs/e2e-tests.md, "Fuzzing the
// journals"): another device's journal generated from the line format, sound lines mixed
// with hostile ones and a partial last line, delivered in chunks cut anywhere.

extension EndToEnd {
    @Suite("Sync: a fuzzed journal of another device")
    struct SyncFuzz {
        static var seed: UInt64 {
            ProcessInfo.processInfo.environment["DILIGENCE_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x5EED_D111_6E4C_E001
        }
        /// `DILIGENCE_JOURNAL_FUZZ_LINES` runs more.
        static var lines: Int {
            ProcessInfo.processInfo.environment["DILIGENCE_JOURNAL_FUZZ_LINES"].flatMap { Int($0) }.map { $0 / 3 } ?? 600
        }
        static let other = "5eed0000-0000-4000-8000-00000000f022"

        @Test(
            "delivered in chunks: the daemon answers throughout, logs each refused line, keeps every sound line, and writes lines others read"
        )
        func fuzzedJournal() throws {
            let (d, folder, _) = try SyncMerge.device("laptop")
            // The other device's clock an hour ahead of this one's: this one's clock follows it,
            // to its last line's reading, whose counter is the greatest a line may hold.
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            var generator = JournalLineGenerator(seed: Self.seed, device: Self.other, clock: now + 3_600_000)
            var lines = (0..<Self.lines).map { _ in generator.next(soundPercent: 50) }
            lines.append((Array(generator.soundLineAtCounterEdge().line.utf8), true))
            let bytes = lines.flatMap { $0.bytes + [UInt8(ascii: "\n")] } + Array(generator.soundLine().line.utf8.prefix(40))
            let path = "\(folder)/\(Self.other).jsonl"
            // The timer runs on Work, a task the fuzzed lines name too (same name, same task).
            try d.call("start", [("task", .string("Work"))])
            var random = SeededRandom(seed: Self.seed)
            var delivered = 0
            while delivered < bytes.count {
                delivered = min(bytes.count, delivered + 1 + Int(random.next() % UInt64(bytes.count / 4)))
                try SyncMerge.deliver(Array(bytes[..<delivered]), to: path)
                #expect(try d.status()["state"] != nil, "seed \(Self.seed): the daemon answers after \(delivered) bytes")
            }
            try Self.expectTimerOnATask(d)
            let sound = Self.history(lines.filter(\.sound).compactMap { try? JournalEntry.parse($0.bytes) })
            let read = JournalReader.scan(bytes, before: [], from: .start, file: path, device: Self.other)
            let accepted = Self.history(read.entries.map(\.entry))
            let soundSessions = Self.liveSessions(sound)
            // Read to its end: every refused line logged.
            #expect(read.problems.count > Self.lines / 5, "seed \(Self.seed): hostile lines refused: \(read.problems.count)")
            try SyncMerge.eventually("every refused line is logged with its file and line, every sound session merged") {
                try Self.unlogged(d, read.problems).isEmpty && Set(soundSessions.keys).isSubset(of: Self.sessionsOfOther(d).keys)
            }
            try Self.expectSame(d, sound: sound, soundSessions: soundSessions, accepted: accepted)
            let unplaced = d.stderr.split(separator: "\n").filter { $0.contains("sync_line_skipped") && !$0.contains(".jsonl:") }
            #expect(unplaced.isEmpty, "seed \(Self.seed): refusals logged without their file and line: \(unplaced.prefix(5))")
            let failed = d.stderr.split(separator: "\n").filter {
                $0.contains("cannot take another device's edit") || $0.contains("cannot be added here")
            }
            #expect(failed.isEmpty, "seed \(Self.seed): tasks the database did not take: \(failed.prefix(5))")
            // What the merge reached, kept in the database, comes back whole at a restart.
            func reports() throws -> [String] { [try d.ctl("history", "--json").stdout, try d.ctl("stats", "all", "--json").stdout] }
            let before = try reports()
            try d.restart()
            #expect(try reports() == before, "seed \(Self.seed): the same history after a restart")
            #expect(!d.stderr.contains("cannot be restored"), "seed \(Self.seed): \(d.stderr.suffix(2000))")
            try Self.expectSound(d)
        }

        static func history(_ entries: [JournalEntry]) -> History {
            var h = History()
            for e in entries { h.apply(e) }
            return h
        }

        /// The live sessions of `h` by id.
        static func liveSessions(_ h: History) -> [String: SyncedSession] {
            let (tasks, identity) = h.liveTasks()
            let live = h.liveSessions(identity: identity, liveTaskIDs: Set(tasks.map(\.id)))
            return Dictionary(live.map { ($0.session.id, $0.session) }, uniquingKeysWith: { a, _ in a })
        }

        /// The daemon's sessions of the fuzzed device, by uuid.
        static func sessionsOfOther(_ d: DaemonUnderTest) throws -> [String: JSON] {
            let sessions = try d.call("history")["sessions"]?.arrayValue ?? []
            return Dictionary(
                sessions.filter { $0["device"]?.stringValue == other }.map { ($0["uuid"]?.stringValue ?? "?", $0) },
                uniquingKeysWith: { a, _ in a })
        }

        /// Every sound session there with its figures, every sound task with its name; nothing
        /// of the other device that its accepted lines do not hold.
        static func expectSame(_ d: DaemonUnderTest, sound: History, soundSessions: [String: SyncedSession], accepted: History) throws {
            let merged = try sessionsOfOther(d)
            for (id, s) in soundSessions {
                let shown = merged[id]
                let figures = ["focused_seconds", "planned_seconds", "pauses"].map { shown?[$0]?.intValue.map(Int.init) }
                #expect(
                    figures == [s.focusedSeconds, s.plannedSeconds, s.pauses],
                    "seed \(seed): \(id) shown as \(shown?.serialized ?? "nothing")")
                #expect(
                    shown?["outcome"]?.stringValue == s.outcome.rawValue && shown?["note"]?.stringValue == s.note, "seed \(seed): \(id)")
                let kinds = shown?["interruptions"]?.arrayValue?.compactMap { $0["kind"]?.stringValue }
                #expect(kinds == s.interruptions.map(\.kind.rawValue), "seed \(seed): \(id)'s interruptions")
            }
            let acceptedIDs = Set(liveSessions(accepted).keys)
            let extra = Set(merged.keys).subtracting(acceptedIDs)
            #expect(extra.isEmpty, "seed \(seed): sessions no accepted line holds: \(extra)")
            let tasks = try d.call("task_list", [("archived", .string("included"))])["tasks"]?.arrayValue ?? []
            let names = Set(tasks.compactMap { $0["name"]?.stringValue })
            for name in names {
                #expect(
                    (try? TaskName.normalize(name)) == name, "seed \(seed): a task shown as \(name.debugDescription) could not be named")
            }
            let soundNames = sound.liveTasks().tasks.map(\.config.name)
            #expect(Set(soundNames).isSubset(of: names), "seed \(seed): sound tasks missing: \(Set(soundNames).subtracting(names))")
            #expect(soundSessions.count > 20 && soundNames.count > 5, "the sound lines hold sessions and tasks")
            #expect(soundSessions.values.contains { !$0.interruptions.isEmpty }, "the sound lines hold interruptions")
        }

        /// The running timer's task (if it runs) is one the task list shows, by its name.
        static func expectTimerOnATask(_ d: DaemonUnderTest) throws {
            let status = try d.status()
            guard let task = status["task"]?.stringValue else { return }
            let tasks = try d.call("task_list", [("archived", .string("included"))])["tasks"]?.arrayValue ?? []
            #expect(
                tasks.contains { $0["name"]?.stringValue == task },
                "seed \(seed): the timer's task \(task) is not listed: \(status.serialized)")
        }

        /// The lines of `problems` the daemon has not logged (with their file and line) as refused.
        static func unlogged(_ d: DaemonUnderTest, _ problems: [JournalProblem]) -> [Int] {
            let logged = Set(
                d.stderr.split(separator: "\n").filter { $0.contains("sync_line_skipped") }.compactMap { line -> Int? in
                    guard let at = line.range(of: "\(other).jsonl:") else { return nil }
                    return Int(line[at.upperBound...].prefix { $0.isNumber })
                })
            return problems.map(\.line).filter { !logged.contains($0) }
        }

        /// The database is whole, the reports answer, and a change made here after the merge
        /// is a line every device reads.
        static func expectSound(_ d: DaemonUnderTest) throws {
            #expect(try d.sqlite("PRAGMA integrity_check") == [["ok"]])
            for arguments in [["stats", "all", "--json"], ["history", "--json"], ["week", "--json"]] {
                let answer = try d.ctl(arguments: arguments)
                #expect(answer.exitCode == 0 && (try? JSON.parse(Array(answer.stdout.utf8))) != nil, "\(arguments): \(answer)")
            }
            try d.call(
                "history_add", [("task", .string("Study")), ("start", .string("2026-01-05 09:00")), ("end", .string("2026-01-05 09:25"))])
            _ = try d.status()
            let id = try d.ctl("sync", "status", "--json").json()["device"]?["id"]?.stringValue ?? "?"
            let folder = d.root + "/sync"
            let own = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(folder)/\(id).jsonl")))
            let last = own.dropLast().split(separator: UInt8(ascii: "\n")).last ?? []
            #expect(throws: Never.self, "seed \(seed): this device's line after the merge: \(String(decoding: last, as: UTF8.self))") {
                try JournalEntry.parse(last)
            }
            #expect(d.process?.isRunning == true)
        }
    }
}

extension EndToEnd.SyncFuzz {
    static func line(_ millis: Int64, _ change: JournalChange) -> String {
        JournalEntry(device: other, hlc: HLC(millis: millis, counter: 0), change: change).line + "\n"
    }

    static func task(_ n: Int, _ name: String) -> SyncedTask {
        SyncedTask(id: "00000000-0000-4000-8000-00000000000\(n)", config: TaskConfig(name: name))
    }

    @Test("numbered names that shift (a task of lesser id takes a name two others share) reach the database, whatever row held which")
    func numberedNamesShift() throws {
        let (d, folder, _) = try EndToEnd.SyncMerge.device("laptop")
        let path = "\(folder)/\(Self.other).jsonl"
        // Two tasks named Same: the first keeps the name, the second is "Same (2)".
        var journal = Self.line(1, .taskAdded(Self.task(3, "Same"))) + Self.line(2, .taskAdded(Self.task(5, "Same")))
        journal += Self.line(3, .taskAdded(Self.task(1, "Other")))
        try EndToEnd.SyncMerge.deliver(Array(journal.utf8), to: path)
        try EndToEnd.SyncMerge.eventually("both Same tasks there") { try EndToEnd.SyncMerge.taskNames(d).contains("Same (2)") }
        // A task of lesser id renamed Same: it takes the name, the others move up one.
        journal += Self.line(4, .taskEdited(Self.task(1, "Same")))
        try EndToEnd.SyncMerge.deliver(Array(journal.utf8), to: path)
        try EndToEnd.SyncMerge.eventually("three Same tasks there") { try EndToEnd.SyncMerge.taskNames(d).contains("Same (3)") }
        let names = try EndToEnd.SyncMerge.taskNames(d)
        #expect(names.filter { $0.hasPrefix("Same") } == ["Same", "Same (2)", "Same (3)"], "\(names)")
        #expect(!d.stderr.contains("cannot take another device's edit"), "\(d.stderr.suffix(1500))")
        // Each row is the task the history says: the least id keeps the name.
        let tasks = try d.call("task_list")["tasks"]?.arrayValue ?? []
        let byName = Dictionary(
            tasks.map { ($0["name"]?.stringValue ?? "", $0["uuid"]?.stringValue ?? "") }, uniquingKeysWith: { a, _ in a })
        #expect(byName["Same"] == Self.task(1, "").id && byName["Same (2)"] == Self.task(3, "").id, "\(byName)")
    }
}

extension EndToEnd.SyncFuzz {
    @Test("two daemons read the same fuzzed journal, one in chunks and one whole: the same sessions, tasks and statistics")
    func sameJournalSameHistory() throws {
        let (a, folderA, _) = try EndToEnd.SyncMerge.device("laptop")
        let (b, folderB, _) = try EndToEnd.SyncMerge.device("desktop")
        var generator = JournalLineGenerator(seed: Self.seed &+ 1, device: Self.other)
        let bytes = (0..<Self.lines).flatMap { _ in generator.next(soundPercent: 50).bytes + [UInt8(ascii: "\n")] }
        var random = SeededRandom(seed: Self.seed &+ 1)
        var delivered = 0
        while delivered < bytes.count {
            delivered = min(bytes.count, delivered + 1 + Int(random.next() % UInt64(bytes.count / 5)))
            try EndToEnd.SyncMerge.deliver(Array(bytes[..<delivered]), to: "\(folderA)/\(Self.other).jsonl")
            _ = try a.status()
        }
        try EndToEnd.SyncMerge.deliver(bytes, to: "\(folderB)/\(Self.other).jsonl")
        func view(_ d: DaemonUnderTest) throws -> [String] {
            let sessions = try Self.sessionsOfOther(d).values.map { s in
                ["uuid", "task", "start", "end", "focused_seconds", "note"].map { s[$0]?.serialized ?? "-" }.joined(separator: " ")
            }
            // The tasks in a report come in the order their rows were made, which differs.
            let stats = try d.call("stats", [("period", .string("all"))])
            let figures = ["completed", "focused_seconds", "recorded", "active_days"].map { stats[$0]?.serialized ?? "-" }
            let perTask = (stats["tasks"]?.arrayValue ?? []).map(\.serialized).sorted()
            return sessions.sorted() + [try EndToEnd.SyncMerge.taskNames(d).joined(separator: ",")] + figures + perTask
        }
        // A wait, not a timing: each look asks `stats all` over the fuzzed journal's 13 000 days,
        // which takes a second or more in a debug build beside the other suites.
        try EndToEnd.SyncMerge.eventually("both read the whole journal", within: 30) {
            let (viewA, viewB) = (try view(a), try view(b))
            return viewA == viewB && viewA.count > 20
        }
        let (viewA, viewB) = (try view(a), try view(b))
        #expect(
            viewA == viewB,
            "seed \(Self.seed): only A: \(Set(viewA).subtracting(viewB).sorted().prefix(4)) only B: \(Set(viewB).subtracting(viewA).sorted().prefix(4))"
        )
    }
}

extension EndToEnd.SyncFuzz {
    @Test("two sessions of one start on two tasks: each task keeps the same time on every device, whatever order their rows were made in")
    func sameStartSameShares() throws {
        let (a, folderA, _) = try EndToEnd.SyncMerge.device("laptop")
        let (b, folderB, _) = try EndToEnd.SyncMerge.device("desktop")
        let start = 1_764_000_000.0
        func recorded(_ n: Int, task: Int, minutes: Int, at millis: Int64) -> String {
            let s = SyncedSession(
                id: "00000000-0000-4000-8000-0000000000a\(n)", task: Self.task(task, "").id, device: Self.other, start: start,
                end: start + Double(minutes * 60), plannedSeconds: minutes * 60, focusedSeconds: minutes * 60, pauses: 0,
                outcome: .completed)
            return Self.line(millis, .sessionRecorded(s))
        }
        let tasks = Self.line(1, .taskAdded(Self.task(1, "Early"))) + Self.line(2, .taskAdded(Self.task(2, "Late")))
        // The session of greater id first on A (its row made first), both at once on B.
        let second = recorded(2, task: 2, minutes: 20, at: 3)
        let first = recorded(1, task: 1, minutes: 30, at: 4)
        try EndToEnd.SyncMerge.deliver(Array((tasks + second).utf8), to: "\(folderA)/\(Self.other).jsonl")
        try EndToEnd.SyncMerge.eventually("A has the first session") { try Self.sessionsOfOther(a).count == 1 }
        try EndToEnd.SyncMerge.deliver(Array((tasks + second + first).utf8), to: "\(folderA)/\(Self.other).jsonl")
        try EndToEnd.SyncMerge.deliver(Array((tasks + second + first).utf8), to: "\(folderB)/\(Self.other).jsonl")
        func perTask(_ d: DaemonUnderTest) throws -> [String: Int] {
            let tasks = try d.call("stats", [("period", .string("all"))])["tasks"]?.arrayValue ?? []
            return Dictionary(
                tasks.map { ($0["task"]?.stringValue ?? "?", Int($0["focused_seconds"]?.intValue ?? -1)) }, uniquingKeysWith: { x, _ in x })
        }
        try EndToEnd.SyncMerge.eventually("both have both sessions") {
            try Self.sessionsOfOther(a).count == 2 && Self.sessionsOfOther(b).count == 2
        }
        let (onA, onB) = (try perTask(a), try perTask(b))
        #expect(onA["Early"] == onB["Early"] && onA["Late"] == onB["Late"], "A \(onA) B \(onB)")
        // The tie goes to the session of lesser id (a0…01, Early's): it keeps the shared 20 minutes.
        #expect(onA["Early"] == 1800 && onA["Late"] == 0, "\(onA)")
    }
}
