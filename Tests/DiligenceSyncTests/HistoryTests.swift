import DiligenceCore
import DiligenceSync
import DiligenceTestSupport
import DiligenceTime
import Testing

@Suite("Merging journals") struct HistoryTests {
    @Test("the latest change of a session wins, whatever order the lines come in")
    func lastWriterWins() {
        let record = entry(deviceA, 10, 0, .sessionRecorded(session(uuid(1), task: uuid(9), device: deviceA, start: 1_764_000_000)))
        let editA = entry(
            deviceA, 20, 0, .sessionEdited(session(uuid(1), task: uuid(9), device: deviceA, start: 1_764_000_000, minutes: 20)))
        let editB = entry(
            deviceB, 30, 0, .sessionEdited(session(uuid(1), task: uuid(9), device: deviceA, start: 1_764_000_000, minutes: 15)))
        let add = entry(deviceA, 1, 0, .taskAdded(task(uuid(9), "Work")))
        for order in [[add, record, editA, editB], [editB, editA, record, add], [add, editB, record, editA]] {
            let h = history(order)
            let (tasks, identity) = h.liveTasks()
            let sessions = h.liveSessions(identity: identity, liveTaskIDs: Set(tasks.map(\.id)))
            #expect(sessions.map(\.session.plannedSeconds) == [15 * 60])
        }
    }

    @Test("the same clock on two devices: the greater device id wins, on every device")
    func tieBreak() {
        let a = entry(deviceA, 20, 0, .taskEdited(task(uuid(9), "From A")))
        let b = entry(deviceB, 20, 0, .taskEdited(task(uuid(9), "From B")))
        let add = entry(deviceA, 1, 0, .taskAdded(task(uuid(9), "Work")))
        #expect(history([add, a, b]).liveTasks().tasks.map(\.config.name) == ["From B"])
        #expect(history([add, b, a]).liveTasks().tasks.map(\.config.name) == ["From B"])
    }

    @Test("a removal is final: an edit another device made later, not having heard of it, does not bring it back")
    func tombstones() {
        let add = entry(deviceA, 1, 0, .taskAdded(task(uuid(9), "Work")))
        let record = entry(deviceA, 10, 0, .sessionRecorded(session(uuid(1), task: uuid(9), device: deviceA, start: 1_764_000_000)))
        let remove = entry(deviceA, 20, 0, .sessionRemoved(id: uuid(1)))
        let lateEdit = entry(
            deviceB, 30, 0, .sessionEdited(session(uuid(1), task: uuid(9), device: deviceA, start: 1_764_000_000, minutes: 5)))
        for order in [[add, record, remove, lateEdit], [lateEdit, remove, add, record]] {
            let h = history(order)
            #expect(h.liveSessions(identity: h.taskIdentity(), liveTaskIDs: [uuid(9)]).isEmpty)
        }
        // A task removed takes its sessions and plans with it.
        let plan = entry(deviceB, 5, 0, .planSet(day: CalendarDay(year: 2026, month: 12, day: 1)!, task: uuid(9)))
        let other = entry(deviceA, 2, 0, .taskAdded(task(uuid(8), "Study")))
        let h = history([add, other, record, plan, entry(deviceB, 40, 0, .taskRemoved(id: uuid(9)))])
        let (tasks, identity) = h.liveTasks()
        #expect(tasks.map(\.config.name) == ["Study"])
        #expect(h.liveSessions(identity: identity, liveTaskIDs: Set(tasks.map(\.id))).isEmpty)
        #expect(h.livePlans(identity: identity, liveTaskIDs: Set(tasks.map(\.id))).isEmpty)
    }

    @Test("each device's default tasks are the same tasks; a rename on one renames the one task")
    func sameNameSameTask() {
        var lines: [JournalEntry] = []
        for (n, config) in TaskConfig.defaults.enumerated() {
            lines.append(entry(deviceA, Int64(n), 0, .taskAdded(SyncedTask(id: uuid(0x100 + n), config: config))))
            var lower = config
            lower.name = config.name.lowercased() // names are taken ignoring case
            lines.append(entry(deviceB, Int64(n), 0, .taskAdded(SyncedTask(id: uuid(0x200 + n), config: lower))))
        }
        lines.append(entry(deviceA, 10, 0, .sessionRecorded(session(uuid(1), task: uuid(0x100), device: deviceA, start: 1_764_000_000))))
        lines.append(entry(deviceB, 11, 0, .sessionRecorded(session(uuid(2), task: uuid(0x200), device: deviceB, start: 1_764_000_000))))
        var renamed = TaskConfig.defaults[0]
        renamed.name = "Job"
        lines.append(entry(deviceB, 12, 0, .taskEdited(SyncedTask(id: uuid(0x200), config: renamed))))
        let h = history(lines)
        let (tasks, identity) = h.liveTasks()
        #expect(tasks.count == 7)
        #expect(tasks.map(\.config.name).contains("Job"))
        #expect(!tasks.map(\.config.name).contains("Work"))
        let sessions = h.liveSessions(identity: identity, liveTaskIDs: Set(tasks.map(\.id)))
        // Overlapping sessions of two devices are both kept (reports count the time once).
        #expect(sessions.map(\.task) == [uuid(0x100), uuid(0x100)])
        #expect(Set(sessions.map(\.session.device)) == [deviceA, deviceB])
    }

    @Test("a task a device adds again under a name it used before is a task of its own")
    func laterTaskOfSameName() {
        let h = history([
            entry(deviceA, 1, 0, .taskAdded(task(uuid(1), "Reading"))),
            entry(deviceA, 2, 0, .taskEdited(task(uuid(1), "Novels"))),
            entry(deviceA, 3, 0, .taskAdded(task(uuid(2), "Reading"))),
            entry(deviceB, 1, 0, .taskAdded(task(uuid(3), "reading"))),
        ])
        let names = h.liveTasks().tasks.map(\.config.name)
        #expect(names == ["Novels", "Reading"])
        #expect(h.taskIdentity()[uuid(3)] == uuid(1))
        #expect(h.taskIdentity()[uuid(2)] == uuid(2))
    }

    @Test("two tasks renamed to one name on two devices both stay, the later id numbered")
    func nameCollision() {
        let h = history([
            entry(deviceA, 1, 0, .taskAdded(task(uuid(1), "One"))),
            entry(deviceA, 1, 1, .taskAdded(task(uuid(2), "Two"))),
            entry(deviceA, 5, 0, .taskEdited(task(uuid(1), "Same"))),
            entry(deviceB, 5, 0, .taskEdited(task(uuid(2), "same"))),
        ])
        #expect(h.liveTasks().tasks.map(\.config.name) == ["Same", "same (2)"])
    }

    @Test("a device's name is the latest of its own name lines, whatever order they come in; each device names only itself")
    func deviceNames() {
        let first = entry(deviceA, 10, 0, .deviceNamed(name: "laptop"))
        let renamed = entry(deviceA, 20, 0, .deviceNamed(name: "old laptop"))
        let other = entry(deviceB, 15, 0, .deviceNamed(name: "desktop"))
        for order in [[first, renamed, other], [renamed, other, first], [other, renamed, first, renamed]] {
            let h = history(order)
            #expect(h.deviceNames == [deviceA: "old laptop", deviceB: "desktop"], "\(order.map(\.line))")
        }
        var h = history([renamed])
        let older = h.apply(first)
        let newer = h.apply(other)
        #expect(!older && newer, "an older name changes nothing; another device's is its own")
        #expect(history([first]).canonicalDump != history([renamed]).canonicalDump, "the name is part of the history")
    }

    @Test("applying a line again changes nothing and says so")
    func idempotent() {
        var h = History()
        let line = entry(deviceA, 1, 0, .taskAdded(task(uuid(1), "One")))
        let first = h.apply(line)
        let before = h.canonicalDump
        let again = h.apply(line)
        let older = h.apply(entry(deviceA, 0, 5, .taskEdited(task(uuid(1), "Older"))))
        #expect(first && !again && !older)
        #expect(h.canonicalDump == before)
    }

    // MARK: Property: any interleaving and duplication of the same lines, the same history

    /// Devices making random changes, each reading some of the others' lines now and then: a
    /// journal per device, as they would write them.
    static func journals(seed: UInt64, devices: [String], changes: Int) -> [[JournalEntry]] {
        var random = SeededRandom(seed: seed)
        var clocks = devices.map { _ in HybridClock() }
        var journals: [[JournalEntry]] = devices.map { _ in [] }
        var known: [History] = devices.map { _ in History() }
        var nextID = 1
        var wall = 1_764_000_000.0
        func fresh() -> String {
            defer { nextID += 1 }
            return uuid(nextID)
        }
        // Every device starts with the same default tasks under ids of its own.
        for d in devices.indices {
            for config in TaskConfig.defaults.prefix(3) {
                let e = JournalEntry(
                    device: devices[d], hlc: clocks[d].stamp(now: wall), change: .taskAdded(SyncedTask(id: fresh(), config: config)))
                journals[d].append(e)
                known[d].apply(e)
            }
        }
        let names = ["Work", "Study", "Exercise", "Reading", "Piano", "Taxes"]
        for _ in 0..<changes {
            wall += Double(Int.random(in: -30...600, using: &random)) // clocks step back too
            let d = Int.random(in: 0..<devices.count, using: &random)
            if Int.random(in: 0..<4, using: &random) == 0 { // read another device's journal so far
                let other = Int.random(in: 0..<devices.count, using: &random)
                for e in journals[other] {
                    known[d].apply(e)
                    clocks[d].observe(e.hlc, now: wall)
                }
                continue
            }
            let (tasks, identity) = known[d].liveTasks()
            let sessions = known[d].liveSessions(identity: identity, liveTaskIDs: Set(tasks.map(\.id)))
            guard let someTask = tasks.randomElement(using: &random) else { continue }
            let change: JournalChange
            switch Int.random(in: 0..<11, using: &random) {
            case 0...3:
                change = .sessionRecorded(
                    session(
                        fresh(), task: someTask.members.randomElement(using: &random)!, device: devices[d], start: wall,
                        minutes: Int.random(in: 1...50, using: &random)))
            case 4:
                guard var s = sessions.randomElement(using: &random)?.session else { continue }
                s.pauses += 1
                change = .sessionEdited(s)
            case 5:
                guard let s = sessions.randomElement(using: &random)?.session else { continue }
                change = .sessionRemoved(id: s.id)
            case 6:
                change = .taskAdded(SyncedTask(id: fresh(), config: TaskConfig(name: names.randomElement(using: &random)!)))
            case 7:
                var config = someTask.config
                config.name = names.randomElement(using: &random)! + (Bool.random(using: &random) ? "" : " 2")
                config.goal = Int.random(in: 0...8, using: &random)
                change = .taskEdited(SyncedTask(id: someTask.members.randomElement(using: &random)!, config: config))
            case 8:
                change =
                    tasks.count > 2 && Bool.random(using: &random)
                    ? .taskRemoved(id: someTask.id) : .taskArchived(SyncedTask(id: someTask.id, config: someTask.config, archived: true))
            case 9:
                change = .deviceNamed(name: ["laptop", "desktop", "Laptop"].randomElement(using: &random)!)
            default:
                let day = CalendarDay(year: 2026, month: 12, day: Int.random(in: 1...5, using: &random))!
                change = Bool.random(using: &random) ? .planSet(day: day, task: someTask.id) : .planCleared(day: day)
            }
            let e = JournalEntry(device: devices[d], hlc: clocks[d].stamp(now: wall), change: change)
            journals[d].append(e)
            known[d].apply(e)
        }
        return journals
    }

    @Test("any interleaving and duplication of the same lines gives the same history", arguments: 1...40)
    func anyOrder(seed: UInt64) throws {
        let journals = Self.journals(seed: seed, devices: [deviceA, deviceB, deviceC], changes: 120)
        // Through the line format, as a device reads them.
        let lines = try journals.flatMap { $0 }.map { try JournalEntry.parse(Array($0.line.utf8)) }
        let reference = history(lines).canonicalDump
        #expect(reference.contains("session "), "the generated history holds sessions")
        #expect(reference.contains("device "), "the generated history names devices")
        var random = SeededRandom(seed: seed &* 7919)
        for _ in 0..<6 {
            var shuffled = lines + (0..<Int.random(in: 0...lines.count, using: &random)).map { _ in lines.randomElement(using: &random)! }
            shuffled.shuffle(using: &random)
            #expect(history(shuffled).canonicalDump == reference)
        }
        // A device that reads its own journal then the others' in any split holds the same.
        #expect(history(journals.reversed().flatMap { $0 }).canonicalDump == reference)
    }

    @Test(
        "kept at any point (sessions as version and value, the other registers as lines) and restored, then the rest applied: the same history",
        arguments: 1...20)
    func restoredFromKeptState(seed: UInt64) throws {
        let journals = Self.journals(seed: seed, devices: [deviceA, deviceB, deviceC], changes: 120)
        var random = SeededRandom(seed: seed &* 104_729)
        var lines = journals.flatMap { $0 }
        lines += (0..<Int.random(in: 0...lines.count / 4, using: &random)).map { _ in lines.randomElement(using: &random)! }
        lines.shuffle(using: &random)
        let cut = Int.random(in: 0...lines.count, using: &random)
        // Read up to the cut in batches, each batch's changes kept as a database keeps them (the
        // later row of a register replacing the earlier).
        var before = History()
        var changes = HistoryChanges()
        var keptSessions: [String: KeptSession] = [:]
        var keptLines: [String: String] = [:]
        for (index, entry) in lines[..<cut].enumerated() {
            if before.apply(entry) { changes.note(entry, in: before) }
            if index == cut - 1 || Int.random(in: 0..<10, using: &random) == 0 {
                for kept in changes.sessions { keptSessions[kept.id] = kept }
                keptLines.merge(changes.lines) { _, new in new }
                changes = HistoryChanges()
            }
        }
        // Restored: each session from its kept row (version, task, device) and its values as the
        // database shows them, the rest from its line's text.
        var restored = History()
        for kept in keptSessions.values.shuffled(using: &random) {
            let register = try #require(before.session(kept.id))
            #expect(KeptSession(register) == kept, "the row kept is the register's")
            restored.apply(JournalEntry(device: kept.version.device, hlc: kept.version.hlc, change: .sessionRecorded(register.value)))
        }
        for line in keptLines.values.shuffled(using: &random) { restored.apply(try JournalEntry.parse(Array(line.utf8))) }
        #expect(restored.canonicalDump == before.canonicalDump)
        #expect(restored.knownSessionIDs == before.knownSessionIDs && restored.knownTaskIDs == before.knownTaskIDs)
        #expect(Set(restored.plannedDays) == Set(before.plannedDays))
        // The lines after the cut change both alike (tombstones and task births were kept too),
        // and both end as the history of every line applied straight.
        for entry in lines[cut...] {
            #expect(restored.apply(entry) == before.apply(entry), "\(entry.line)")
        }
        #expect(restored.canonicalDump == history(lines).canonicalDump)
        #expect(before.canonicalDump == restored.canonicalDump)
    }
}
