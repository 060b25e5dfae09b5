import DiligenceCore
import DiligenceJSON
import DiligenceSync
import DiligenceTime
import Testing

@Suite("Journal lines") struct JournalEntryTests {
    static let examples: [JournalEntry] = [
        entry(deviceA, 1_764_569_662_123, 0, .sessionRecorded(session(uuid(1), task: uuid(9), device: deviceA, start: 1_764_569_000.375))),
        entry(
            deviceA, 1_764_569_662_123, 1,
            .sessionEdited(session(uuid(1), task: uuid(9), device: deviceA, start: 1_764_569_000.375, minutes: 20))),
        entry(deviceB, 1_764_569_700_000, 7, .sessionRemoved(id: uuid(1))),
        entry(deviceA, 1, 0, .taskAdded(task(uuid(9), "Écrire 📝"))),
        entry(
            deviceA, 2, 0,
            .taskEdited(
                SyncedTask(
                    id: uuid(9),
                    config: TaskConfig(
                        name: "Write", description: "long \"quoted\"\nform", color: .green, workSeconds: 50 * 60, longBreakEvery: 0,
                        breaks: false, autostart: .all, focusMode: true, goal: 8, reminderMinute: 9 * 60 + 30, sound: "rain")))),
        entry(deviceA, 3, 0, .taskArchived(SyncedTask(id: uuid(9), config: TaskConfig(name: "Write"), archived: true))),
        entry(deviceB, 4, 0, .taskRemoved(id: uuid(9))),
        entry(deviceB, 5, 0, .planSet(day: CalendarDay(year: 2026, month: 12, day: 1)!, task: uuid(9))),
        entry(deviceB, 6, 0, .planCleared(day: CalendarDay(year: 2026, month: 12, day: 1)!)),
        entry(deviceA, 7, 0, .deviceNamed(name: "Laptop de Zoé 💻")),
    ]

    @Test("every change round-trips through its line, which is one line of JSON")
    func roundTrip() throws {
        for example in Self.examples {
            let line = example.line
            #expect(!line.contains("\n"))
            #expect(try JournalEntry.parse(Array(line.utf8)) == example)
        }
    }

    @Test("a session line carries its times as numbers, exactly")
    func exactTimes() throws {
        let line = Self.examples[0].line
        #expect(line.contains("\"start\":1764569000.375"))
        #expect(line.hasPrefix("{\"v\":1,\"device\":\"\(deviceA)\",\"hlc\":[1764569662123,0],\"change\":\"session_recorded\""))
    }

    @Test(
        "a line that is not a change is refused, saying why",
        arguments: [
            ("", "not JSON"),
            ("[1]", "expected an object"),
            (#"{"device":"x"}"#, "\"v\""),
            (#"{"v":1,"device":"nope","hlc":[1,0],"change":"plan_cleared","day":"2026-01-01"}"#, "\"device\""),
            (#"{"v":1,"device":"DEV","hlc":[-1,0],"change":"plan_cleared","day":"2026-01-01"}"#, "\"hlc\""),
            (#"{"v":1,"device":"DEV","hlc":[1,0,0],"change":"plan_cleared","day":"2026-01-01"}"#, "\"hlc\""),
            (#"{"v":1,"device":"DEV","hlc":[1,0],"change":"plan_wiped","day":"2026-01-01"}"#, "unknown change"),
            (#"{"v":1,"device":"DEV","hlc":[1,0],"change":"plan_cleared","day":"1989-12-31"}"#, "\"day\""),
            (#"{"v":1,"device":"DEV","hlc":[1,0],"change":"plan_set","day":"2026-02-30","task":"DEV"}"#, "\"day\""),
            (#"{"v":1,"device":"DEV","hlc":[1,0],"change":"session_removed"}"#, "\"id\""),
            (#"{"v":1,"device":"DEV","hlc":[1,0],"change":"session_recorded","session":[]}"#, "not an object"),
        ])
    func refused(line: String, says: String) {
        let text = line.replacing("DEV", with: deviceA)
        #expect(throws: JournalLineError.self) { try JournalEntry.parse(Array(text.utf8)) }
        do {
            _ = try JournalEntry.parse(Array(text.utf8))
        } catch {
            #expect(error.message.contains(says), "\(error.message)")
            #expect(!error.newer)
        }
    }

    @Test("a device's name is one line of JSON: its own; a name no device could have taken is refused, saying so")
    func deviceNamed() throws {
        let named = entry(deviceA, 7, 0, .deviceNamed(name: "laptop"))
        #expect(named.line == #"{"v":1,"device":"\#(deviceA)","hlc":[7,0],"change":"device_named","name":"laptop"}"#)
        // Read as `sync enable --name` takes it: trimmed, NFC.
        let spaced = named.line.replacing(#""laptop""#, with: #""  Zoe\u0301  ""#)
        #expect(try JournalEntry.parse(Array(spaced.utf8)).change == .deviceNamed(name: "Zoé"))
        let bad = [#""""#, #""   ""#, #""two\nlines""#, #""zero\u200bwidth""#, "\"\(String(repeating: "x", count: 65))\"", "7", "null"]
        for value in bad {
            let line = named.line.replacing(#""laptop""#, with: value)
            do {
                _ = try JournalEntry.parse(Array(line.utf8))
                Issue.record("read: \(line)")
            } catch {
                #expect(error.message.contains("\"name\""), "\(error.message)")
                #expect(!error.newer)
            }
        }
    }

    @Test("a session or task a diligence could not have recorded is refused by the same rules as any other door")
    func rules() throws {
        // Each refusal is an ordinary bad line (not one of a newer diligence, which waits) and
        // says which rule, in the words the sync status shows.
        func refusal(_ entry: JournalEntry) throws -> JournalLineError {
            try #require(throws: JournalLineError.self) { try JournalEntry.parse(Array(entry.line.utf8)) }
        }
        var long = session(uuid(1), task: uuid(9), device: deviceA, start: 1_764_569_000)
        long.end = long.start + 2 * 86400
        var bad = JournalEntry(device: deviceA, hlc: HLC(millis: 1, counter: 0), change: .sessionRecorded(long))
        let tooLong = try refusal(bad)
        #expect(tooLong.message == "the session is refused: it lasts 48h; a session lasts at most 24h" && !tooLong.newer, "\(tooLong)")
        var early = session(uuid(1), task: uuid(9), device: deviceA, start: 100)
        early.end = 200
        bad.change = .sessionRecorded(early)
        let tooEarly = try refusal(bad)
        #expect(
            tooEarly.message == "the session is refused: it lies before \(DateWindow.firstDay), the first day diligence keeps"
                && !tooEarly.newer,
            "\(tooEarly)")
        var goal = task(uuid(9), "Write")
        goal.config.goal = 5000
        bad.change = .taskEdited(goal)
        let badGoal = try refusal(bad)
        #expect(badGoal.message == "the task Write: goal must be between 0 (none) and 1000; got 5000." && !badGoal.newer, "\(badGoal)")
        bad.change = .taskAdded(task(uuid(9), "  "))
        let badName = try refusal(bad)
        #expect(badName.message == "the task's name: A task name cannot be empty." && !badName.newer, "\(badName)")
    }

    @Test("a session's note, time away and why it ended travel with it; a line without them (an older diligence) has none")
    func noteAwayAndReason() throws {
        var s = session(uuid(1), task: uuid(9), device: deviceA, start: 1_764_569_000, outcome: .abandoned)
        s.note = "chapter 3, \"draft\" ✍️"
        s.awaySeconds = 120
        s.reason = .left
        let entry = JournalEntry(device: deviceA, hlc: HLC(millis: 1, counter: 0), change: .sessionRecorded(s))
        #expect(try JournalEntry.parse(Array(entry.line.utf8)) == entry)
        #expect(entry.line.contains(#""away_seconds":120"#) && entry.line.contains(#""reason":"left""#), "\(entry.line)")

        let old = entry.line.replacing(#","note":"chapter 3, \"draft\" ✍️""#, with: "").replacing(#","away_seconds":120"#, with: "")
            .replacing(#","reason":"left""#, with: "")
        guard case .sessionRecorded(let read) = try JournalEntry.parse(Array(old.utf8)).change else {
            Issue.record("not a session: \(old)")
            return
        }
        #expect(read.note == nil && read.awaySeconds == 0 && read.reason == nil, "\(old)")
        #expect(read.start == s.start && read.outcome == .abandoned)
    }

    @Test(
        "a session's note, time away or reason out of its range is refused, saying which",
        arguments: [
            (#""note":"two\nlines""#, "note"), (#""note":7"#, "note"), ("\"note\":\"\(String(repeating: "x", count: 501))\"", "note"),
            (#""away_seconds":-1"#, "time away"), (#""away_seconds":86401"#, "time away"), (#""away_seconds":"2m""#, "away_seconds"),
            (#""reason":"bored""#, "reason"), (#""reason":1"#, "reason"),
        ])
    func noteAwayAndReasonRefused(member: String, says: String) {
        let s = session(uuid(1), task: uuid(9), device: deviceA, start: 1_764_569_000)
        let line = JournalEntry(device: deviceA, hlc: HLC(millis: 1, counter: 0), change: .sessionRecorded(s)).line
            .replacing(#""outcome":"completed""#, with: #""outcome":"completed","# + member)
        do {
            _ = try JournalEntry.parse(Array(line.utf8))
            Issue.record("read: \(line)")
        } catch {
            #expect(error.message.contains(says), "\(error.message)")
        }
    }

    @Test("a line of a newer format is told apart: it waits rather than being skipped")
    func newer() {
        let line = #"{"v":2,"device":"x"}"#
        do {
            _ = try JournalEntry.parse(Array(line.utf8))
            Issue.record("parsed")
        } catch {
            #expect(error.newer)
        }
    }

    @Test("ids are UUIDs, read in any case and kept in lowercase")
    func ids() {
        #expect(SyncID.parse("0000000A-0000-4000-8000-ABCDEF012345") == "0000000a-0000-4000-8000-abcdef012345")
        #expect(SyncID.parse("0000000a00004000800000000000000a") == nil)
        #expect(SyncID.parse("0000000g-0000-4000-8000-abcdef012345") == nil)
        #expect(JournalReader.device(ofFileName: "\(deviceA).jsonl") == deviceA)
        #expect(JournalReader.device(ofFileName: "\(deviceA).jsonl.sync-conflict") == nil)
        #expect(JournalReader.device(ofFileName: "\(deviceA.uppercased()).jsonl") == nil)
    }
}

@Suite("Hybrid logical clock") struct HybridClockTests {
    @Test("stamps grow even when the wall clock stands still or steps back")
    func monotonic() {
        var clock = HybridClock()
        let a = clock.stamp(now: 1000)
        let b = clock.stamp(now: 1000)
        let c = clock.stamp(now: 999)
        let d = clock.stamp(now: 1001)
        #expect(a == HLC(millis: 1_000_000, counter: 0))
        #expect(a < b && b < c && c < d)
        #expect(d == HLC(millis: 1_001_000, counter: 0))
    }

    @Test("a change made after reading another device's later change is stamped later than it")
    func observe() {
        var clock = HybridClock()
        _ = clock.stamp(now: 1000)
        let remote = HLC(millis: 5_000_000, counter: 3)
        clock.observe(remote, now: 1000)
        #expect(clock.stamp(now: 1000) == HLC(millis: 5_000_000, counter: 4))
    }

    @Test("a device whose clock runs more than a week ahead does not drag this clock along; 30 h ahead does")
    func drift() {
        var clock = HybridClock()
        clock.observe(HLC(millis: (1000 + 7 * 86400 + 1) * 1000, counter: 0), now: 1000)
        #expect(clock.stamp(now: 1000) == HLC(millis: 1_000_000, counter: 0))
        // Issue 26, finding 4: a change made after reading one of a clock 30 h fast wins over it.
        let fast = HLC(millis: (1000 + 30 * 3600) * 1000, counter: 0)
        clock.observe(fast, now: 1000)
        #expect(clock.stamp(now: 1001) == HLC(millis: fast.millis, counter: 1))
    }

    @Test("a reading says its writer's clock was ahead only when stamped from that clock (counter 0)")
    func ahead() {
        #expect(HybridClock.aheadMillis(of: HLC(millis: 1_000_000 + 5_000, counter: 0), now: 1000) == 5_000)
        #expect(HybridClock.aheadMillis(of: HLC(millis: 1_000_000 + 5_000, counter: 2), now: 1000) == nil, "carried along")
        #expect(HybridClock.aheadMillis(of: HLC(millis: 999_000, counter: 0), now: 1000) == nil, "behind")
    }

    @Test("equal clocks are ordered by device id")
    func ties() {
        let hlc = HLC(millis: 5, counter: 0)
        #expect(Version(hlc: hlc, device: deviceA) < Version(hlc: hlc, device: deviceB))
        #expect(Version(hlc: HLC(millis: 4, counter: 9), device: deviceB) < Version(hlc: hlc, device: deviceA))
    }
}

@Suite("Journal lines: interruptions") struct JournalInterruptionTests {
    static func marked(reason: EndReason?) -> SyncedSession {
        var s = session(uuid(1), task: uuid(9), device: deviceA, start: 1_764_569_000, outcome: reason == nil ? .completed : .abandoned)
        s.reason = reason
        s.interruptions = [
            Interruption(kind: .internal, at: 1_764_569_100.25, note: "idea"), Interruption(kind: .external, at: 1_764_569_200),
        ]
        return s
    }

    @Test("a session's interruptions travel with it; a voided one says so in a member older readers ignore")
    func roundTrip() throws {
        for reason in [nil, .left, .interrupted] as [EndReason?] {
            let entry = JournalEntry(
                device: deviceA, hlc: HLC(millis: 1, counter: 0), change: .sessionRecorded(Self.marked(reason: reason)))
            #expect(try JournalEntry.parse(Array(entry.line.utf8)) == entry, "\(entry.line)")
            #expect(entry.line.contains(#""interruptions":[{"kind":"internal","at":1764569100.25,"note":"idea"}"#), "\(entry.line)")
            #expect(!entry.line.contains(#""reason":"interrupted""#))
            #expect(entry.line.contains(#""voided":true"#) == (reason == .interrupted))
        }
    }

    @Test("a line with a bad interruption is refused, saying so; one without any has none")
    func refusedOrAbsent() throws {
        let plain = JournalEntry(device: deviceA, hlc: HLC(millis: 1, counter: 0), change: .sessionRecorded(Self.marked(reason: nil)))
        let without = plain.line.replacing(/,"interruptions":\[[^\]]*\]/, with: "")
        guard case .sessionRecorded(let read) = try JournalEntry.parse(Array(without.utf8)).change else { return }
        #expect(read.interruptions.isEmpty, "\(without)")
        for bad in [#""interruptions":[{"kind":"lunch","at":1764569100}]"#, #""interruptions":7"#, #""voided":"yes""#] {
            let line = without.replacing(#""outcome":"completed""#, with: #""outcome":"completed","# + bad)
            #expect(throws: JournalLineError.self) { try JournalEntry.parse(Array(line.utf8)) }
        }
        // Outside its session: the same rules as every other door.
        let stray = without.replacing(
            #""outcome":"completed""#, with: #""outcome":"completed","interruptions":[{"kind":"internal","at":1}]"#)
        #expect(throws: JournalLineError.self) { try JournalEntry.parse(Array(stray.utf8)) }
    }

    @Test("a line stays within 64 KiB: the interruptions' notes give way, never the session")
    func bounded() throws {
        var s = Self.marked(reason: nil)
        s.end = s.start + 3000
        s.interruptions = (0..<Interruption.maxPerSession).map {
            Interruption(kind: .internal, at: s.start + Double($0), note: String(repeating: "ü", count: 500))
        }
        let entry = JournalEntry(device: deviceA, hlc: HLC(millis: 1, counter: 0), change: .sessionRecorded(s))
        #expect(entry.line.utf8.count <= JournalEntry.maxLineBytes)
        guard case .sessionRecorded(let read) = try JournalEntry.parse(Array(entry.line.utf8)).change else { return }
        #expect(read.interruptions.count == Interruption.maxPerSession && read.interruptions.allSatisfy { $0.note == nil })
    }
}
