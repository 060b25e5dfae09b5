import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceSync
import DiligenceTestSupport
import DiligenceTime
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// Two daemons, each with its own database and its own copy of the sync folder, and this test
// as the sync tool between them, delivering the journals adversarially: half a line first, the
// same file twice, an older version back, out of order. Both must end with one history.

extension EndToEnd {
    @Suite("Sync: two daemons merge each other's journals")
    struct SyncMerge {
        /// A daemon with sync enabled in a folder of its own; its device id.
        static func device(_ name: String) throws -> (DaemonUnderTest, folder: String, id: String) {
            let d = try DaemonUnderTest()
            let folder = d.root + "/sync"
            let enable = try d.ctl("sync", "enable", folder, "--name", name)
            guard enable.exitCode == 0 else { throw HarnessError("sync enable: \(enable)") }
            let id = try d.ctl("sync", "status", "--json").json()["device"]?["id"]?.stringValue ?? "?"
            return (d, folder, id)
        }

        /// What two devices must agree on: each session by its UUID with its task's name, times
        /// and outcome, ordered.
        static func history(_ d: DaemonUnderTest) throws -> [String] {
            let sessions = try d.call("history")["sessions"]?.arrayValue ?? []
            return sessions.map { s in
                ["uuid", "task", "start", "end", "outcome", "focused_seconds"].map { s[$0]?.serialized ?? "-" }.joined(separator: " ")
            }.sorted()
        }

        static func taskNames(_ d: DaemonUnderTest) throws -> [String] {
            (try d.call("task_list")["tasks"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }.sorted()
        }

        /// Copies `from` to `to` as a sync tool does: a temporary name renamed into place.
        static func deliver(_ bytes: [UInt8], to path: String) throws {
            let temporary = (path as NSString).deletingLastPathComponent + "/.syncthing.tmp"
            try Data(bytes).write(to: URL(fileURLWithPath: temporary))
            guard rename(temporary, path) == 0 else { throw HarnessError("rename to \(path) failed") }
        }

        /// Waits (5 s at most) until `condition` holds.
        static func eventually(_ what: String, within seconds: Double = 5, _ condition: () throws -> Bool) throws {
            let deadline = monotonicNow() + seconds
            while try !condition() {
                if monotonicNow() > deadline { throw HarnessError("not within \(seconds) s: \(what)") }
                sleepFor(0.05)
            }
        }

        @Test("a paused session reaches the other device with its focus segments, and keeps them through an edit")
        func segmentsTravel() throws {
            let (a, folderA, idA) = try Self.device("laptop")
            let (b, folderB, _) = try Self.device("desk")
            let paused =
                #"{"task":"Work","start":"2025-05-02T09:00:00Z","end":"2025-05-02T09:35:00Z","planned_seconds":1500,"focused_seconds":1500,"#
                + #""pauses":1,"outcome":"completed","segments":[{"start":"2025-05-02T09:00:00Z","seconds":600},"#
                + #"{"start":"2025-05-02T09:20:00Z","seconds":900}]}"#
            #expect(try a.call("import", [("content", .string(paused + "\n"))])["imported"]?.intValue == 1)
            func first(_ d: DaemonUnderTest) throws -> JSON? { try d.call("history")["sessions"]?.arrayValue?.first }
            func segments(_ d: DaemonUnderTest) throws -> [String] {
                (try first(d)?["segments"]?.arrayValue ?? []).map { "\($0["start"]?.stringValue ?? "?") \($0["seconds"]?.intValue ?? -1)" }
            }
            let journal = "\(folderA)/\(idA).jsonl"
            func carry(_ what: String) throws {
                try Self.eventually("A's journal has \(what)") {
                    ((try? String(contentsOfFile: journal, encoding: .utf8)) ?? "").contains(what)
                }
                try Self.deliver(Array(try Data(contentsOf: URL(fileURLWithPath: journal))), to: "\(folderB)/\(idA).jsonl")
            }
            try carry(#""segments":"#)
            try Self.eventually("B has the session") { try first(b) != nil }
            #expect(try segments(a).count == 2)
            #expect(try segments(b) == segments(a), "\(b.stderr)")
            let id = try #require(try first(a)?["id"]?.intValue)
            try a.call("history_edit", [("id", .int(id)), ("note", .string("chapter 3"))])
            try carry("chapter 3")
            try Self.eventually("B has the edit") { try first(b)?["note"]?.stringValue == "chapter 3" }
            #expect(try segments(b) == segments(a), "an edit's line carries them too")
        }

        @Test(
            "a plan of another device for a day outside the dates diligence keeps is refused as the plan command refuses it, saying where")
        func planOutsideTheWindowRefused() throws {
            let (a, folderA, _) = try Self.device("laptop")
            let other = "0b7e9a52-4c1d-4f0e-9a3b-5d6c7e8f9012"
            let task = "1b7e9a52-4c1d-4f0e-9a3b-5d6c7e8f9012"
            let head = #"{"v":1,"device":"\#(other)","hlc":[1764569662123,"#
            let taskObject =
                #"{"id":"\#(task)","name":"Far","description":"","color":"blue","work_seconds":1500,"short_break_seconds":300,"#
                + #""long_break_seconds":900,"long_break_every":4,"breaks":true,"autostart":"none","focus_mode":false,"goal":0,"#
                + #""reminder":null,"sound":null,"archived":false}"#
            let lines = [
                head + #"0],"change":"task_added","task":"# + taskObject + "}",
                head + #"1],"change":"plan_set","day":"9999-12-31","task":"\#(task)"}"#,
                head + #"2],"change":"plan_set","day":"2026-11-30","task":"\#(task)"}"#,
            ]
            try Self.deliver(Array((lines.joined(separator: "\n") + "\n").utf8), to: "\(folderA)/\(other).jsonl")
            try Self.eventually("A has the other device's task") { try Self.taskNames(a).contains("Far") }
            try Self.eventually("the far plan is logged as refused") { a.stderr.contains("\(other).jsonl:2: the plan of 9999-12-31") }
            let days = try a.sqliteRun(a.databasePath, "SELECT day FROM plans ORDER BY day").map { $0.joined() }
            #expect(days == ["2026-11-30"], "\(a.stderr)")
        }

        /// `--device` (docs/sync.md, "Reports by device") on `d`, which recorded a session of
        /// `own` and merged one of `other` from the device `other.id`: `this`, the other's id
        /// or a beginning of it in another case, through the protocol and diligencectl.
        static func byDevice(_ d: DaemonUnderTest, own: String, other: (task: String, id: String)) throws {
            func tasks(_ command: String, _ device: String, _ more: [(String, JSON)] = []) throws -> [String] {
                let answer = try d.call(command, [("device", .string(device))] + more)
                return (answer["sessions"]?.arrayValue ?? []).compactMap { $0["task"]?.stringValue }
            }
            #expect(try tasks("history", "this") == [own])
            #expect(try tasks("history", other.id) == [other.task])
            #expect(try tasks("history", String(other.id.prefix(6)).uppercased()) == [other.task])
            let ofOther = try d.call("stats", [("period", .string("all")), ("device", .string(String(other.id.prefix(8))))])
            // Alone, the other device's session counts whole: 30 minutes.
            #expect(ofOther["focused_seconds"]?.intValue == 1800, "\(ofOther.serialized)")
            let ofThis = try d.call("stats", [("period", .string("all")), ("device", .string("this"))])
            #expect(ofThis["focused_seconds"]?.intValue == 1500, "\(ofThis.serialized)")
            let export = try d.call("export", [("device", .string("this"))])
            #expect(export["count"]?.intValue == 1, "\(export.serialized)")
            #expect(try d.call("week", [("device", .string("this"))])["focused_seconds"] != nil)
            let unknown = try d.failure("history", [("device", .string("ffffffff"))])
            #expect(unknown.code == "unknown_device", "\(unknown)")
            let table = try d.ctl("history", "--device", String(other.id.prefix(8)))
            #expect(table.exitCode == 0 && table.stdout.contains(other.task) && !table.stdout.contains(own), "\(table)")
            let mistaken = try d.ctl("stats", "--device", "nonsense")
            #expect(mistaken.exitCode == 2 && mistaken.stderr.contains("not a device"), "\(mistaken)")
        }

        @Test("out of order, half a line, the same file twice, an older version back: both daemons end with one history")
        func adversarialCopies() throws {
            let (a, folderA, idA) = try Self.device("laptop")
            let (b, folderB, idB) = try Self.device("desktop")
            try a.call(
                "history_add", [("task", .string("Study")), ("start", .string("2026-11-30 09:00")), ("end", .string("2026-11-30 09:25"))])
            try a.addTask("Reading")
            // Overlapping A's session in time: both are kept.
            try b.call(
                "history_add", [("task", .string("Work")), ("start", .string("2026-11-30 09:10")), ("end", .string("2026-11-30 09:40"))])
            try b.call("task_edit", [("task", .string("Exercise")), ("new_name", .string("Running"))])
            _ = try a.status()
            _ = try b.status()
            let journalA = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(folderA)/\(idA).jsonl")))
            let journalB = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(folderB)/\(idB).jsonl")))

            // A's journal cut in the middle of its last line reaches B: only complete lines count.
            let lastLineStart = journalA.dropLast().lastIndex(of: UInt8(ascii: "\n"))! + 1
            let cut = Array(journalA[..<(lastLineStart + 10)])
            try Self.deliver(cut, to: "\(folderB)/\(idA).jsonl")
            // B's journal reaches A twice.
            try Self.deliver(journalB, to: "\(folderA)/\(idB).jsonl")
            try Self.deliver(journalB, to: "\(folderA)/\(idB).jsonl")
            try Self.eventually("A shows B's rename") { try Self.taskNames(a).contains("Running") }
            // The rest of A's journal, then an older version of it back, then the whole again.
            try Self.deliver(journalA, to: "\(folderB)/\(idA).jsonl")
            try Self.deliver(cut, to: "\(folderB)/\(idA).jsonl")
            try Self.deliver(journalA, to: "\(folderB)/\(idA).jsonl")

            try Self.eventually("both histories the same") { try Self.history(a) == Self.history(b) }
            let history = try Self.history(a)
            #expect(history.count == 2, "both overlapping sessions, nothing doubled: \(history)")
            let namesA = try Self.taskNames(a)
            let namesB = try Self.taskNames(b)
            #expect(namesA == namesB, "one set of tasks")
            #expect(namesB.contains("Reading") && !namesA.contains("Exercise"), "\(namesA)")
            #expect(namesA.count == 8, "the seven default tasks are the same tasks on both: \(namesA)")
            // History says which device recorded each session: null for this device's own.
            for (d, own, other) in [(a, "Study", idB), (b, "Work", idA)] {
                let sessions = try d.call("history")["sessions"]?.arrayValue ?? []
                for s in sessions {
                    let expected: JSON = s["task"]?.stringValue == own ? .null : .string(other)
                    #expect(s["device"] == expected, "\(s.serialized)")
                }
            }
            // Another device's session edited here is still that device's.
            let ofB = try #require((try a.call("history")["sessions"]?.arrayValue ?? []).first { $0["task"]?.stringValue == "Work" })
            let edited = try a.call("history_edit", [("id", ofB["id"] ?? .null), ("note", .string("checked"))])
            #expect(edited["device"] == .string(idB), "\(edited.serialized)")
            let statsA = try a.call("stats", [("period", .string("all"))])
            let statsB = try b.call("stats", [("period", .string("all"))])
            #expect(statsA.serialized == statsB.serialized, "stats all:\nA \(statsA.serialized)\nB \(statsB.serialized)")
            // The two sessions share 09:10–09:25: reports count it once (09:00–09:40), for the one
            // that began first (A's Study keeps its 25 minutes, B's Work its last 15).
            #expect(statsA["focused_seconds"]?.intValue == 2400, "the union of both: \(statsA.serialized)")
            #expect(statsA["completed"]?.intValue == 2, "both sessions completed: \(statsA.serialized)")
            let perTask = Dictionary(
                (statsA["tasks"]?.arrayValue ?? []).map { ($0["task"]?.stringValue ?? "?", $0["focused_seconds"]?.intValue ?? -1) },
                uniquingKeysWith: { a, _ in a })
            #expect(perTask["Study"] == 1500 && perTask["Work"] == 900, "\(perTask)")
            // The week view counts the same way: the week of Monday 2026-11-30, its offset from
            // this week on the test's own clock (the daemons run in UTC).
            let sessionsWeek = try #require(CalendarDay("2026-11-30"))
            let today = CalendarDay(daysSince1970: Int(time(nil)) / 86400)
            let offset = (sessionsWeek.monday.daysSince1970 - today.monday.daysSince1970) / 7
            let week = try a.call("week", [("offset", .int(Int64(offset)))])
            #expect(week["from"]?.stringValue == "2026-11-30" && week["to"]?.stringValue == "2026-12-06", "week: \(week.serialized)")
            #expect(week["focused_seconds"]?.intValue == 2400, "week: \(week.serialized)")

            try Self.byDevice(a, own: "Study", other: ("Work", idB))

            // A change on B after the merge reaches A the same way: a removal.
            let bSessions = try b.call("history")["sessions"]?.arrayValue ?? []
            let ofA = try #require(bSessions.first { $0["task"]?.stringValue == "Study" })
            try b.call("history_remove", [("id", ofA["id"] ?? .null)])
            _ = try b.status()
            try Self.deliver(try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(folderB)/\(idB).jsonl"))), to: "\(folderA)/\(idB).jsonl")
            try Self.eventually("A's own session removed on B is removed on A") { try Self.history(a).count == 1 }
        }

        /// `count` sessions of Study on 2026-11-`day`, 25 minutes each from 06:00, every half hour.
        static func addSessions(_ d: DaemonUnderTest, day: Int, count: Int) throws {
            for i in 0..<count {
                let start = String(format: "2026-11-%02d %02d:%02d", day, 6 + i / 2, i % 2 * 30)
                let end = String(format: "2026-11-%02d %02d:%02d", day, 6 + i / 2, i % 2 * 30 + 25)
                try d.call("history_add", [("task", .string("Study")), ("start", .string(start)), ("end", .string(end))])
            }
        }

        /// `journal` with its first line made unreadable (same length, so every offset stays).
        static func garbled(_ journal: [UInt8]) -> [UInt8] {
            let firstNewline = journal.firstIndex(of: UInt8(ascii: "\n")) ?? 0
            return Array(repeating: UInt8(ascii: "#"), count: firstNewline) + journal[firstNewline...]
        }

        /// Devices "laptop" (A) and "desktop" (B), B with `count` sessions on the 27th; B's
        /// journal and where A's folder takes it.
        static func twoDevicesBWithSessions(_ count: Int) throws -> (
            a: DaemonUnderTest, b: DaemonUnderTest, pathB: String, copyOnA: String
        ) {
            let (a, folderA, _) = try device("laptop")
            let (b, folderB, idB) = try device("desktop")
            try addSessions(b, day: 27, count: count)
            _ = try b.status()
            return (a, b, "\(folderB)/\(idB).jsonl", "\(folderA)/\(idB).jsonl")
        }

        @Test("a restart reads only what the journals gained: read positions and merge state are kept in the database")
        func restartReadsOnlyNewLines() throws {
            // Enough lines that B's first line lies before the 4 KiB the read position's checksum covers.
            let (a, b, pathB, copyOnA) = try Self.twoDevicesBWithSessions(16)
            let journalB = try [UInt8](Data(contentsOf: URL(fileURLWithPath: pathB)))
            let firstLine = journalB.firstIndex(of: UInt8(ascii: "\n")) ?? 0
            try #require(journalB.count - firstLine > 2 * 4096, "B's journal is long enough: \(journalB.count) bytes")
            try Self.deliver(journalB, to: copyOnA)
            try Self.eventually("A has B's sessions") { try Self.history(a).count == 16 }
            func snapshot() throws -> [String] {
                let history = try a.ctl("history", "--json")
                let stats = try a.ctl("stats", "all", "--json")
                return [history.stdout, stats.stdout, try Self.taskNames(a).joined(separator: ",")]
            }
            let before = try snapshot()

            // A restart with nothing new changes nothing.
            try a.restart()
            #expect(try snapshot() == before, "the same history after a restart")

            // Stopped, B's copy on A gets an unreadable first line (what was read is not read again),
            try a.restart { try Self.deliver(Self.garbled(journalB), to: copyOnA) }
            #expect(try snapshot() == before, "the same history after a restart")
            // then a new line of B arrives: it is applied, and only it is read.
            try Self.addSessions(b, day: 28, count: 1)
            _ = try b.status()
            let grown = try [UInt8](Data(contentsOf: URL(fileURLWithPath: pathB)))
            try Self.deliver(Self.garbled(grown), to: copyOnA)
            try Self.eventually("A has B's new session") { try Self.history(a).count == 17 }
            let skipped = a.stderr.split(separator: "\n").filter { $0.contains("sync_line_skipped") }
            #expect(skipped.isEmpty, "the lines read before the restart were not read again: \(skipped)")
        }

        /// A's log lines reporting B's journal's first line as unreadable (it was read from its start).
        static func firstLineSkipped(_ d: DaemonUnderTest, _ journal: String) -> Int {
            d.stderr.split(separator: "\n").filter { $0.contains("sync_line_skipped") && $0.contains("\(journal):1:") }.count
        }

        @Test("sync disable forgets what the merge reached: enabled again, the folder's journals are read from their start")
        func disableForgetsTheMergeState() throws {
            let (a, folderA, _) = try Self.device("laptop")
            let (b, folderB, idB) = try Self.device("desktop")
            try Self.addSessions(b, day: 27, count: 16)
            _ = try b.status()
            let copyOnA = "\(folderA)/\(idB).jsonl"
            let journalB = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(folderB)/\(idB).jsonl")))
            try Self.deliver(journalB, to: copyOnA)
            try Self.eventually("A has B's sessions") { try Self.history(a).count == 16 }
            // Kept: a restart after B's copy got a garbled first line does not read that line.
            try a.restart { try Self.deliver(Self.garbled(journalB), to: copyOnA) }
            #expect(try Self.history(a).count == 16)
            #expect(Self.firstLineSkipped(a, copyOnA) == 0, "the restart read B's journal again from its start")
            // Forgotten: disabled, restarted, enabled again, the journals are read anew.
            #expect(try a.ctl("sync", "disable").exitCode == 0)
            try a.restart()
            #expect(try a.ctl("sync", "enable", folderA).exitCode == 0)
            try Self.eventually("enabled again, A reads B's journal from its start") { Self.firstLineSkipped(a, copyOnA) == 1 }
            #expect(try Self.history(a).count == 16)
        }

        @Test("a journal rewritten while the daemon was stopped (other bytes before the kept position) is read again from its start")
        func restartRereadsARewrittenJournal() throws {
            let (a, b, pathB, copyOnA) = try Self.twoDevicesBWithSessions(16)
            let journal = try [UInt8](Data(contentsOf: URL(fileURLWithPath: pathB)))
            try Self.deliver(journal, to: copyOnA)
            try Self.eventually("A has B's sessions") { try Self.history(a).count == 16 }
            // B edits a session's note: one more line. A's copy comes back with that line moved
            // before B's last one, so the bytes before A's kept position are not the ones read.
            let first = try #require(try b.call("history")["sessions"]?.arrayValue?.first)
            try b.call("history_edit", [("id", first["id"] ?? .null), ("note", .string("rewritten"))])
            _ = try b.status()
            let grown = try [UInt8](Data(contentsOf: URL(fileURLWithPath: pathB)))
            let edit = Array(grown[journal.count...])
            let lastLine = journal.dropLast().lastIndex(of: UInt8(ascii: "\n"))! + 1
            let rewritten = Array(journal[..<lastLine]) + edit + Array(journal[lastLine...])
            try a.restart { try Self.deliver(rewritten, to: copyOnA) }
            try Self.eventually("A has B's edit") {
                (try a.call("history")["sessions"]?.arrayValue ?? []).contains { $0["note"] == .string("rewritten") }
            }
            #expect(try Self.history(a).count == 16)
            let skipped = a.stderr.split(separator: "\n").filter { $0.contains("sync_line_skipped") }
            #expect(skipped.isEmpty, "no line read from the middle of another: \(skipped)")
        }

        @Test("after a restart, this device stamps its next change after the latest line of another device it merged")
        func restartKeepsTheClockAhead() throws {
            let (a, folderA, idA) = try Self.device("laptop")
            // Another device's line stamped an hour ahead of this machine's clock (within the
            // day a clock reading may pull this device's clock along).
            let other = "7d1e9b20-5a6c-4f8e-9d0b-1c2d3e4f5a6b"
            let ahead = HLC(millis: Int64(Date().timeIntervalSince1970 * 1000) + 3_600_000, counter: 5)
            let added = JournalEntry(
                device: other, hlc: ahead,
                change: .taskAdded(SyncedTask(id: "5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e", config: TaskConfig(name: "Ahead"))))
            try Self.deliver(Array((added.line + "\n").utf8), to: "\(folderA)/\(other).jsonl")
            try Self.eventually("A has the other device's task") { try Self.taskNames(a).contains("Ahead") }
            try a.restart()
            try a.addTask("After")
            _ = try a.status()
            let journal = try String(contentsOfFile: "\(folderA)/\(idA).jsonl", encoding: .utf8)
            let last = try JournalEntry.parse(Array(try #require(journal.split(separator: "\n").last).utf8))
            guard case .taskAdded(let task) = last.change else { throw HarnessError("A's last line: \(last.line)") }
            #expect(task.config.name == "After")
            #expect(ahead < last.hlc, "A's change after the restart is stamped \(last.hlc), not after the merged \(ahead)")
        }

        @Test("a merge whose transaction fails (another process holds the database) is merged whole at the next change, and kept")
        func failedMergeIsMergedAgain() throws {
            let (a, folderA, _) = try Self.device("laptop")
            let (b, folderB, idB) = try Self.device("desktop")
            try Self.addSessions(b, day: 27, count: 4)
            _ = try b.status()
            let pathB = "\(folderB)/\(idB).jsonl"
            let copyOnA = "\(folderA)/\(idB).jsonl"
            let holder = try a.holdWriteLock(for: 2)
            defer { holder.killAndReap() }
            try Self.deliver(try [UInt8](Data(contentsOf: URL(fileURLWithPath: pathB))), to: copyOnA)
            try Self.eventually("A's merge failed on the lock") { a.stderr.contains("Sync: merging failed") }
            #expect(holder.wait(timeout: 10) != nil, "the lock holder ended")
            #expect(try Self.history(a).isEmpty, "nothing of the failed merge is in A's database")
            // B's next line arrives: the lines of the failed merge are merged with it.
            try Self.addSessions(b, day: 28, count: 1)
            _ = try b.status()
            try Self.deliver(try [UInt8](Data(contentsOf: URL(fileURLWithPath: pathB))), to: copyOnA)
            try Self.eventually("A has all of B's sessions") { try Self.history(a).count == 5 }
            let merged = try Self.history(a)
            // What the merge reached was kept with them: a restart reads nothing again and shows the same.
            try a.restart { try Self.deliver(Self.garbled(try [UInt8](Data(contentsOf: URL(fileURLWithPath: pathB)))), to: copyOnA) }
            #expect(try Self.history(a) == merged)
            #expect(Self.firstLineSkipped(a, copyOnA) == 0, "the restart read B's journal again from its start")
        }

        /// The focused seconds of `report all --svg` (every heat-map cell's `data-seconds`).
        static func reportSeconds(_ d: DaemonUnderTest, _ arguments: String...) throws -> Int {
            let run = try d.ctl(arguments: ["report", "all", "--svg"] + arguments)
            guard run.exitCode == 0 else { throw HarnessError("report: \(run)") }
            return run.stdout.matches(of: /data-seconds="(\d+)"/).reduce(0) { $0 + (Int($1.output.1) ?? 0) }
        }

        @Test("--device takes a device's name from its journal; history shows names; a shared name is ambiguous, an unknown one lists them")
        func byName() throws {
            let (a, folderA, idA) = try Self.device("laptop")
            let deviceB = try Self.device("desktop")
            let deviceC = try Self.device("Desktop")
            let (b, folderB, idB) = deviceB
            let (c, idC) = (deviceC.0, deviceC.id)
            try a.call(
                "history_add", [("task", .string("Study")), ("start", .string("2026-11-30 08:00")), ("end", .string("2026-11-30 08:20"))])
            try b.call(
                "history_add", [("task", .string("Work")), ("start", .string("2026-11-30 09:10")), ("end", .string("2026-11-30 09:40"))])
            try c.call(
                "history_add",
                [("task", .string("Exercise")), ("start", .string("2026-11-29 10:00")), ("end", .string("2026-11-29 10:25"))])
            try Self.copyJournal(of: deviceB, to: folderA)
            try Self.eventually("A has B's session") { try Self.history(a).count == 2 }

            let byName = try a.ctl("history", "--device", "DeskTop", "--json")
            #expect(byName.exitCode == 0, "\(byName)")
            let sessions = try byName.json()["sessions"]?.arrayValue ?? []
            #expect(sessions.map { $0["task"]?.stringValue } == ["Work"], "\(byName.stdout)")
            #expect(sessions.first?["device"] == .string(idB) && sessions.first?["device_name"] == .string("desktop"), "\(byName.stdout)")
            let own = try a.call("history", [("device", .string("laptop"))])["sessions"]?.arrayValue ?? []
            #expect(own.map { $0["device_name"] } == [.string("laptop")], "this device by its own name: \(own)")
            let stats = try a.ctl("stats", "all", "--device", "desktop", "--json")
            #expect(try stats.json()["focused_seconds"]?.intValue == 1800, "\(stats)")
            let table = try a.ctl("history")
            #expect(table.stdout.contains("desktop") && table.stdout.contains("laptop"), "the DEVICE column names them:\n\(table.stdout)")
            #expect(try Self.reportSeconds(a, "--device", "desktop") == 1800)
            #expect(try Self.reportSeconds(a, "--device", "this") == 1200)
            #expect(try Self.reportSeconds(a) == 3000)
            let page = try a.ctl("report", "all", "--device", "desktop")
            #expect(page.exitCode == 0 && page.stdout.contains("· device desktop</h1>"), "the page says whose it is: \(page.stderr)")
            // Exports name the device too: JSON lines as history --json, CSV in two last columns.
            let jsonl = try a.call("export", [("device", .string("desktop"))])["content"]?.stringValue ?? ""
            #expect(jsonl.contains(#""device":"\#(idB)""#) && jsonl.contains(#""device_name":"desktop""#), "\(jsonl)")
            let csv = (try a.call("export", [("format", .string("csv"))])["content"]?.stringValue ?? "").split(separator: "\r\n")
            #expect(
                csv.first?.hasSuffix(",away_seconds,reason,device,device_name,interruptions_internal,interruptions_external") == true,
                "\(csv)")
            #expect(csv.contains { $0.hasSuffix(",\(idB),desktop,0,0") } && csv.contains { $0.hasSuffix(",,laptop,0,0") }, "\(csv)")

            // A third device under the same name (in another case): the name is ambiguous, the ids are not.
            try Self.copyJournal(of: deviceC, to: folderA)
            try Self.eventually("A has C's session") { try Self.history(a).count == 3 }
            let ambiguous = try a.ctl("history", "--device", "desktop")
            #expect(ambiguous.exitCode == 2, "\(ambiguous)")
            for shown in [String(idB.prefix(8)), String(idC.prefix(8)), "desktop", "Desktop"] {
                #expect(ambiguous.stderr.contains(shown), "ambiguous_device lists \(shown): \(ambiguous.stderr)")
            }
            #expect(try a.failure("stats", [("device", .string("desktop"))]).code == "ambiguous_device")
            let ofC = try a.call("history", [("device", .string(String(idC.prefix(8))))])["sessions"]?.arrayValue ?? []
            #expect(ofC.map { $0["device_name"] } == [.string("Desktop")], "\(ofC)")
            let unknown = try a.ctl("stats", "--device", "kitchen")
            #expect(unknown.exitCode == 2, "\(unknown)")
            for shown in ["is not a device", "laptop", "desktop", "Desktop", String(idA.prefix(8))] {
                #expect(unknown.stderr.contains(shown), "unknown_device lists \(shown): \(unknown.stderr)")
            }

            // B takes another name: its journal says so, and the old name is C's alone.
            #expect(try b.ctl("sync", "enable", folderB, "--name", "office").exitCode == 0)
            try Self.copyJournal(of: deviceB, to: folderA)
            try Self.eventually("A knows B as office") {
                (try a.call("history", [("device", .string("office"))])["sessions"]?.arrayValue ?? []).count == 1
            }
            #expect((try a.call("history", [("device", .string("desktop"))])["sessions"]?.arrayValue ?? []).count == 1)

            // sync status lists the devices: id, name, sessions, when their latest line was written.
            let devices = try a.call("sync_status")["devices"]?.arrayValue ?? []
            let listed = Dictionary(devices.map { ($0["id"]?.stringValue ?? "?", $0) }, uniquingKeysWith: { x, _ in x })
            #expect(Set(listed.keys) == [idA, idB, idC], "\(devices)")
            #expect(listed[idA]?["name"] == .string("laptop") && listed[idA]?["this"] == .bool(true), "\(devices)")
            #expect(listed[idB]?["name"] == .string("office") && listed[idC]?["name"] == .string("Desktop"), "\(devices)")
            #expect([idA, idB, idC].map { listed[$0]?["sessions"]?.intValue } == [1, 1, 1], "\(devices)")
            #expect(listed[idB]?["last_line"]?.stringValue != nil, "\(devices)")
            let text = try a.ctl("sync", "status")
            #expect(text.stdout.contains("office") && text.stdout.contains(String(idC.prefix(8))), "\(text.stdout)")
            // A restart reads only what the journals gained: the names are in the kept merge state.
            try a.restart()
            #expect((try a.call("history", [("device", .string("office"))])["sessions"]?.arrayValue ?? []).count == 1)
            let namesKept = try a.call("sync_status")["devices"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
            #expect(namesKept.first == "laptop" && Set(namesKept) == ["laptop", "office", "Desktop"], "\(namesKept)")
        }

        /// Copies `from`'s journal to `to`'s folder, as a sync tool does.
        static func copyJournal(of from: (DaemonUnderTest, folder: String, id: String), to folder: String) throws {
            _ = try from.0.status()
            let journal = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(from.folder)/\(from.id).jsonl")))
            try Self.deliver(journal, to: "\(folder)/\(from.id).jsonl")
        }

        /// A (timer running on "Reading", records everything: `min_session = 0`) and B, both
        /// knowing A's task "Reading".
        static func runningOnShared() throws -> (
            a: (DaemonUnderTest, folder: String, id: String), b: (DaemonUnderTest, folder: String, id: String)
        ) {
            let a = try Self.device("laptop")
            let b = try Self.device("desktop")
            try a.0.writeConfig("[timer]\nmin_session = 0\n")
            #expect(try a.0.ctl("reload").exitCode == 0)
            try a.0.addTask("Reading")
            try a.0.call("start", [("task", .string("Reading"))])
            try Self.copyJournal(of: a, to: b.folder)
            try Self.eventually("B knows Reading") { try Self.taskNames(b.0).contains("Reading") }
            return (a, b)
        }

        @Test("the running timer's task renamed on another device: status and events show the new name, the session is on it")
        func runningTaskRenamedElsewhere() throws {
            let (a, b) = try Self.runningOnShared()
            let watcher = try a.0.watch()
            try b.0.call("task_edit", [("task", .string("Reading")), ("new_name", .string("Books")), ("work_seconds", .int(3000))])
            try Self.copyJournal(of: b, to: a.folder)
            // The merge's own event carries the new name: the timer's copy changed before it.
            let merged = watcher.waitFor(timeout: 5) { $0.name == "task_changed" && $0.json["change"]?.stringValue == "merged" }
            #expect(merged?.event.status?["task"]?.stringValue == "Books", "\(watcher.transcript)")
            let status = try a.0.status()
            #expect(status["task"]?.stringValue == "Books" && status["state"]?.stringValue == "running", "\(status.serialized)")
            #expect(try a.0.ctl("status").stdout.contains("Books"))
            // The running phase keeps its length; the next one takes B's 50 minutes (as a local edit).
            #expect(status["duration_seconds"]?.intValue == 1500, "\(status.serialized)")
            try a.0.call("stop")
            let sessions = try a.0.call("history")["sessions"]?.arrayValue ?? []
            #expect(sessions.count == 1 && sessions.first?["task"]?.stringValue == "Books", "\(sessions.map(\.serialized))")
            // ... and reaches B on that task.
            try Self.copyJournal(of: a, to: b.folder)
            try Self.eventually("B has A's session on Books") {
                (try b.0.call("history")["sessions"]?.arrayValue ?? []).map { $0["task"]?.stringValue } == ["Books"]
            }
        }

        @Test("the running timer's task removed on another device: the phase is dropped unrecorded, as a local removal does")
        func runningTaskRemovedElsewhere() throws {
            let (a, b) = try Self.runningOnShared()
            let watcher = try a.0.watch()
            try b.0.call("task_remove", [("task", .string("Reading")), ("confirm", .bool(true))])
            try Self.copyJournal(of: b, to: a.folder)
            let merged = watcher.waitFor(timeout: 5) { $0.name == "task_changed" && $0.json["change"]?.stringValue == "merged" }
            #expect(merged?.event.state == "idle", "\(watcher.transcript)")
            let status = try a.0.status()
            #expect(status["state"]?.stringValue == "idle" && status["task"] == .null, "\(status.serialized)")
            #expect(try !Self.taskNames(a.0).contains("Reading"))
            // Nothing recorded: neither then, nor at a stop or a restart.
            _ = try? a.0.call("stop")
            try a.0.restart()
            #expect(try a.0.status()["state"]?.stringValue == "idle")
            #expect(try a.0.call("history")["sessions"]?.arrayValue?.isEmpty == true)
        }

        /// Device B's `task_added` line of `name` under `id`, a minute ago, written here as B would.
        static func addedOnB(_ b: String, _ id: String, _ name: String, _ counter: Int) -> String {
            let millis = Int64(Date().timeIntervalSince1970 * 1000) - 60_000
            return #"{"v":1,"device":"\#(b)","hlc":[\#(millis),\#(counter)],"change":"task_added","task":{"id":"\#(id)","name":"\#(name)","#
                + #""description":"","color":"blue","work_seconds":1500,"short_break_seconds":300,"long_break_seconds":900,"#
                + #""long_break_every":4,"breaks":true,"autostart":"none","focus_mode":false,"goal":0,"reminder":null,"sound":null,"#
                + #""archived":false}}"# + "\n"
        }

        /// A (recording everything) with the timer on a "Books" of its own that the next merge
        /// joins to B's "Books" (B's row, of least id, is kept): A renamed B's "Books" to "Novels",
        /// then added its own, its first task under that name. The line of B that makes that merge
        /// run (a new task "Poems") and B's journal's path.
        static func runningOnATaskAboutToJoin() throws -> (a: DaemonUnderTest, nextLine: String, journal: String) {
            let (a, folder, _) = try Self.device("laptop")
            try a.writeConfig("[timer]\nmin_session = 0\n")
            #expect(try a.ctl("reload").exitCode == 0)
            let b = "0000000b-0000-4000-8000-000000000000"
            let journal = "\(folder)/\(b).jsonl"
            let books = Self.addedOnB(b, "00000000-0000-4000-8000-000000000001", "Books", 0)
            try Self.deliver(Array(books.utf8), to: journal)
            try Self.eventually("A has B's Books") { try Self.taskNames(a).contains("Books") }
            try a.call("task_edit", [("task", .string("Books")), ("new_name", .string("Novels"))])
            try a.addTask("Books")
            try a.call("start", [("task", .string("Books"))])
            return (a, books + Self.addedOnB(b, "00000000-0000-4000-8000-000000000002", "Poems", 1), journal)
        }

        /// The timer still on "Books" (running), and the session it records on it.
        static func expectStillOnBooks(_ a: DaemonUnderTest) throws {
            let status = try a.status()
            #expect(status["task"]?.stringValue == "Books" && status["state"]?.stringValue == "running", "\(status.serialized)")
            try a.call("stop")
            let sessions = try a.call("history")["sessions"]?.arrayValue ?? []
            #expect(sessions.map { $0["task"]?.stringValue } == ["Books"], "\(sessions.map(\.serialized))")
        }

        @Test("a merge that joins the running task's row to another task's: the timer follows it to the row kept")
        func runningTaskFoldedIntoAnother() throws {
            let (a, next, journal) = try Self.runningOnATaskAboutToJoin()
            try Self.deliver(Array(next.utf8), to: journal)
            try Self.eventually("the rows joined") { try Self.taskNames(a).contains("Poems") && !Self.taskNames(a).contains("Novels") }
            try Self.expectStillOnBooks(a)
        }

        @Test("the same merge while the daemon is stopped: the restored timer follows its task to the row kept")
        func runningTaskFoldedWhileStopped() throws {
            let (a, next, journal) = try Self.runningOnATaskAboutToJoin()
            try a.restart { try Self.deliver(Array(next.utf8), to: journal) }
            #expect(try Self.taskNames(a).contains("Poems") && !Self.taskNames(a).contains("Novels"))
            try Self.expectStillOnBooks(a)
        }

        @Test("a session's note, time away and why it ended reach the other device, and so does an edit of the note")
        func noteAwayAndReason() throws {
            let (a, folderA, idA) = try Self.device("laptop")
            let (b, folderB, _) = try Self.device("desktop")
            let left =
                #"{"task":"Study","start":"2026-11-30T09:00:00Z","end":"2026-11-30T09:10:00Z","planned_seconds":1500,"#
                + #""focused_seconds":480,"pauses":0,"outcome":"abandoned","note":"chapter 3","away_seconds":120,"reason":"left"}"#
            #expect(try a.call("import", [("content", .string(left))])["imported"]?.intValue == 1)
            let recorded = try #require(try a.call("history")["sessions"]?.arrayValue?.first)
            let fields = ["uuid", "note", "away_seconds", "reason", "focused_seconds"]
            func copyAToB() throws {
                _ = try a.status()
                let journal = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(folderA)/\(idA).jsonl")))
                try Self.deliver(journal, to: "\(folderB)/\(idA).jsonl")
            }
            func onB() throws -> [JSON?] {
                let sessions = try b.call("history")["sessions"]?.arrayValue ?? []
                return sessions.first { $0["uuid"] == recorded["uuid"] }.map { s in fields.map { s[$0] } } ?? []
            }
            #expect(recorded["away_seconds"] == .int(120) && recorded["reason"] == .string("left"), "\(recorded.serialized)")
            try copyAToB()
            try Self.eventually("B has A's session") { try !onB().isEmpty }
            let first = try onB()
            #expect(first == fields.map { recorded[$0] }, "B: \(first)")

            try a.call("history_edit", [("id", recorded["id"] ?? .null), ("note", .string("chapter 4"))])
            try copyAToB()
            try Self.eventually("B has A's new note") {
                let now = try onB()
                return now.count == fields.count && now[1] == .string("chapter 4")
            }
            let edited = try onB()
            #expect(edited == [recorded["uuid"], .string("chapter 4")] + fields.dropFirst(2).map { recorded[$0] }, "B: \(edited)")
        }
    }
}
