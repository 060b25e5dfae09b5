import DiligenceCore
import DiligenceJSON
import DiligenceSync
import DiligenceTime

/// Values where conversions and range checks break, as JSON text: the integer boundaries of
/// every width, 2^53, ±1e308, -0, fractions, a number too large for a double. Shared by the
/// request fuzzer (SchemaRequestGenerator) and the journal fuzzer (JournalLineGenerator).
public enum BoundaryValues {
    public static let numbers: [String] = [
        "0", "1", "-1", "2", "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967296",
        "9007199254740992", "9007199254740993", "-9007199254740992", "1099511627776", "-1099511627776",
        "9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809",
        "18446744073709551616", "1e308", "-1e308", "1.7976931348623157e308", "5e-324", "-0", "-0.0", "0.5", "-0.5",
        "1E2", "1e19", "-1e19", "100000", "100001", "-100000", "-100001", "86400", "86401", "1e400",
    ]

    /// A JSON value of the wrong kind for most members.
    public static let otherKinds: [String] = [
        "null", "true", "false", "[]", "{}", "[1,2]", "{\"a\":1}", "\"\"", "0", "\"0\"", "[[[[[[]]]]]]",
    ]
}

/// Lines of a device's journal generated from the line format (docs/sync.md, "The journal";
/// `JournalChange`): sound lines, each built by the real writer (`JournalEntry.line`) within
/// every documented range, and hostile ones, a sound line of any change kind with one member
/// at or just past a boundary of its range, of another type, missing, duplicated or added, or
/// the line damaged as another version or a sync tool would leave it (an unknown change, CRLF,
/// NUL, invalid UTF-8, cut short, nested deep, around `JournalEntry.maxLineBytes`).
///
/// Sound lines keep to ids, names, days and times of their own, so that no hostile line, even
/// one the reader accepts, changes what they say: hostile ids start with "f", sound ones with
/// "5"; sound sessions start at `soundStart` an hour apart, hostile ones at the date window's
/// edges, in 2099 or in 2022; sound plans are in November 2026.
public struct JournalLineGenerator {
    public var random: SeededRandom
    /// The device whose journal this is (every line's `device`).
    public let device: String
    /// Sound sessions start here, one an hour: 20 000 of them are still in the past in 2026.
    public static let soundStart = 1_700_000_000.0 // 2023-11-14T22:13:20Z
    /// 9999-12-31T23:59:59.999Z, the latest clock reading a line may carry.
    public static let maxMillis = HLC.millisRange.upperBound

    private var made = 0
    private var clock: Int64
    /// Sound tasks and sessions still live, to edit, archive, remove or record on.
    private var tasks: [SyncedTask] = []
    private var sessions: [SyncedSession] = []
    private var slot = 0

    /// `clock`: the first sound line's clock reading, in milliseconds (the next each a few
    /// seconds later); a daemon's clock follows readings up to a day ahead of its own.
    public init(seed: UInt64, device: String, clock: Int64 = Int64(soundStart * 1000)) {
        random = SeededRandom(seed: seed)
        self.device = device
        self.clock = clock
    }

    public mutating func int(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
    public mutating func chance(_ percent: Int) -> Bool { int(100) < percent }
    public mutating func pick<T>(_ items: [T]) -> T { items[int(items.count)] }

    /// A line (without its newline): sound (`sound`) `soundPercent` of the time, else hostile.
    public mutating func next(soundPercent: Int = 50) -> (bytes: [UInt8], sound: Bool) {
        if chance(soundPercent) { return (Array(soundLine().line.utf8), true) }
        return (hostileLine(), false)
    }

    // MARK: Ids

    /// A fresh lowercase UUID whose first digit is `lead` ("5" sound, "f" hostile).
    public mutating func freshID(lead: Character) -> String {
        made += 1
        let hex = String(made, radix: 16)
        let tail = String(repeating: "0", count: 12 - hex.count) + hex
        let r = String(random.next() % 0x1000_0000, radix: 16)
        return "\(lead)\(String(repeating: "0", count: 7 - r.count))\(r)-0000-4000-8000-\(tail)"
    }

    // MARK: Sound lines

    /// A change every reader takes, stamped later than the last.
    public mutating func soundLine() -> JournalEntry {
        clock += Int64(1 + int(5000))
        return JournalEntry(device: device, hlc: HLC(millis: clock, counter: Int64(int(3))), change: soundChange())
    }

    /// A sound line at the next clock reading with the greatest counter a line may hold: a
    /// reader's clock that takes it in must still stamp readings others read.
    public mutating func soundLineAtCounterEdge() -> JournalEntry {
        var entry = soundLine()
        entry.hlc.counter = HLC.counterRange.upperBound
        return entry
    }

    private mutating func soundChange() -> JournalChange {
        let live = tasks.filter { !$0.archived }
        switch int(12) {
        case 0...1 where tasks.count < 40, _ where live.isEmpty:
            let t = SyncedTask(id: freshID(lead: "5"), config: soundConfig())
            tasks.append(t)
            return .taskAdded(t)
        case 2:
            let index = int(tasks.count)
            tasks[index].config = soundConfig(keepingName: chance(50) ? tasks[index].config.name : nil)
            tasks[index].config.archived = tasks[index].archived
            tasks[index].config.uuid = tasks[index].id
            return .taskEdited(tasks[index])
        case 3 where tasks.count > 3:
            let index = int(tasks.count)
            if chance(30) {
                let gone = tasks.remove(at: index)
                sessions.removeAll { $0.task == gone.id }
                return .taskRemoved(id: gone.id)
            }
            tasks[index] = SyncedTask(id: tasks[index].id, config: tasks[index].config, archived: !tasks[index].archived)
            return .taskArchived(tasks[index])
        case 4 where !sessions.isEmpty:
            let index = int(sessions.count)
            if chance(30) { return .sessionRemoved(id: sessions.remove(at: index).id) }
            sessions[index].pauses = int(SessionRules.maxPauses + 1)
            sessions[index].note = chance(50) ? soundNote() : nil
            return .sessionEdited(sessions[index])
        case 5:
            let day = CalendarDay(year: 2026, month: 11, day: 1 + int(30))!
            return chance(70) ? .planSet(day: day, task: pick(tasks).id) : .planCleared(day: day)
        case 6:
            return .deviceNamed(name: pick(["laptop", "Büro", "desk top", String(repeating: "d", count: DeviceName.maxLength)]))
        default:
            let s = soundSession(task: pick(tasks).id)
            sessions.append(s)
            return .sessionRecorded(s)
        }
    }

    /// Settings within every range `TaskConfig.validate` checks, often at its ends.
    private mutating func soundConfig(keepingName name: String? = nil) -> TaskConfig {
        var c = TaskConfig(name: name ?? soundName())
        c.description = pick(["", "Read a chapter", String(repeating: "é", count: TaskConfig.maxDescriptionLength)])
        c.color = pick(TaskColor.allCases)
        c.autostart = pick(Autostart.allCases)
        c.workSeconds = pick([1, 1500, DurationText.maxSeconds])
        c.shortBreakSeconds = pick([1, 300, DurationText.maxSeconds])
        c.longBreakSeconds = pick([1, 900, DurationText.maxSeconds])
        c.longBreakEvery = pick([0, 4, TaskConfig.maxLongBreakEvery])
        c.goal = pick([0, 8, TaskConfig.maxGoal])
        c.breaks = chance(50)
        c.focusMode = chance(50)
        c.reminderMinute = pick([nil, 0, 9 * 60, 24 * 60 - 1])
        c.sound = pick([nil, "bell", String(repeating: "s", count: TaskConfig.maxNameLength)])
        return c
    }

    /// A name no other sound task has: up to 64 characters, some combining or emoji.
    private mutating func soundName() -> String {
        let base = "Fuzz \(made + 1)"
        switch int(4) {
        case 0: return base + " " + String(repeating: "x", count: TaskName.maxLength - base.count - 1)
        case 1: return base + " Café"
        case 2: return base + " 👩‍💻"
        default: return base
        }
    }

    private mutating func soundNote() -> String? {
        pick([nil, "went well", String(repeating: "n", count: SessionNote.maxLength), "ça ira 🎉"])
    }

    /// A session in the next free hour from `soundStart`: within every rule, often at its ends.
    private mutating func soundSession(task: String) -> SyncedSession {
        let start = Self.soundStart + Double(slot) * 3600 + pick([0, 0.25, 0.999])
        slot += 1
        let span = pick([1.0, 1500, 3599])
        let planned = pick([1, 1500, DurationText.maxSeconds])
        var s = SyncedSession(
            id: freshID(lead: "5"), task: task, device: device, start: start, end: start + span, plannedSeconds: planned,
            focusedSeconds: pick([0, Int(span), Int(span.rounded(.up)) + 1]), pauses: pick([0, 3, SessionRules.maxPauses]),
            outcome: pick([.completed, .skipped, .abandoned]))
        s.note = soundNote()
        s.awaySeconds = pick([0, Int(span) / 2])
        s.reason = chance(20) ? pick(EndReason.allCases) : nil
        if chance(30) { s.interruptions = soundInterruptions(from: start, to: start + span) }
        // Often two stretches around a pause, as the timer records them (else one from the start).
        if s.focusedSeconds >= 2, Double(s.focusedSeconds) + 0.5 <= span, chance(40) {
            let first = s.focusedSeconds / 2
            s.segments = [
                FocusSegment(start: start, seconds: first),
                FocusSegment(start: start + Double(first) + pick([0, 0.5]), seconds: s.focusedSeconds - first),
            ]
        }
        return s
    }

    /// Interruptions inside the session, up to the most one holds; with many, no notes, so
    /// that the line keeps them whole (a line too long drops their notes, never the session).
    private mutating func soundInterruptions(from start: Double, to end: Double) -> [Interruption] {
        let count = pick([1, 2, Interruption.maxPerSession])
        return (0..<count).map { i in
            let at = start + (end - start) * Double(i) / Double(count)
            return Interruption(kind: pick(InterruptionKind.allCases), at: at, note: count > 2 ? nil : soundNote())
        }
    }
}

// MARK: Hostile lines

extension JournalLineGenerator {
    /// A member of a line as text: its key and its value's JSON text (any text: "-0", "1e400").
    public typealias Member = (key: String, value: String)

    /// The first second of the date window (`DateWindow.firstDay`), and the last a line may name.
    static let windowStart = LocalDay.start(of: DateWindow.firstDay, dayStartsAt: 0)
    static let windowEnd = Double(maxMillis) / 1000

    /// A line of any change kind with one thing wrong, or at the very edge of right. `newer`:
    /// also formats above this build's (a reader stops at such a line and waits).
    public mutating func hostileLine(newer: Bool = false) -> [UInt8] {
        var members = hostileBase()
        for _ in 0..<int(4) { mutate(&members, newer: newer) } // none: a line at the very edge of right
        var bytes = Array(Self.render(members).utf8)
        if chance(15) { damage(&bytes) }
        // A flipped byte can make `"v":1` a newer format, which stops a read: only when asked.
        if !newer {
            do { _ = try JournalEntry.parse(bytes) } catch { if error.newer { return hostileLine(newer: false) } }
        }
        // One line: a newline inside would make two.
        return bytes.map { $0 == UInt8(ascii: "\n") ? UInt8(ascii: " ") : $0 }
    }

    /// `{"k":v,...}` of `members`, each value as it is.
    public static func render(_ members: [Member]) -> String {
        "{" + members.map { JSON.string($0.key).serialized + ":" + $0.value }.joined(separator: ",") + "}"
    }

    /// The members of `json` (an object), each value serialized.
    static func members(of json: JSON) -> [Member] {
        guard case .object(let members) = json else { return [] }
        return members.map { ($0.0, $0.1.serialized) }
    }

    /// A sound-shaped line of any change kind about hostile ids (and now and then a sound task),
    /// its session at an edge of the date window: the starting point of a hostile line.
    private mutating func hostileBase() -> [Member] {
        let task = chance(50) && !tasks.isEmpty ? pick(tasks).id : freshID(lead: "f")
        let change: JournalChange
        switch int(10) {
        case 0: change = .sessionRecorded(hostileSession(task: task))
        case 1: change = .sessionEdited(hostileSession(task: task))
        case 2: change = .sessionRemoved(id: freshID(lead: "f"))
        case 3: change = .taskAdded(SyncedTask(id: freshID(lead: "f"), config: TaskConfig(name: pick(Array(Self.names.prefix(5))))))
        case 4: change = .taskEdited(SyncedTask(id: freshID(lead: "f"), config: TaskConfig(name: "Hostile \(made)")))
        case 5: change = .taskArchived(SyncedTask(id: freshID(lead: "f"), config: TaskConfig(name: "Hostile \(made)"), archived: true))
        case 6: change = .taskRemoved(id: freshID(lead: "f"))
        case 7: change = .planSet(day: CalendarDay(year: 2027, month: 1, day: 1)!, task: task)
        case 8: change = .planCleared(day: CalendarDay(year: 2027, month: 1, day: 2)!)
        default: change = .deviceNamed(name: "hostile")
        }
        clock += 1
        let line = JournalEntry(device: device, hlc: HLC(millis: clock, counter: 0), change: change).line
        return Self.members(of: (try? JSON.parse(Array(line.utf8))) ?? .null)
    }

    /// A session at the edges of the date window, in 2099, or in 2022 (never a sound session's hour).
    private mutating func hostileSession(task: String) -> SyncedSession {
        // 2099: a line may say it, the store takes a session ending at most a day from now.
        let start = pick([Self.windowStart, Self.windowEnd - 1500, 4_070_908_800, 1_650_000_000 + Double(int(5000)) * 3600])
        var s = SyncedSession(
            id: freshID(lead: "f"), task: task, device: device, start: start, end: start + 1500, plannedSeconds: 1500,
            focusedSeconds: 1500, pauses: 0, outcome: .completed)
        // Members for the mutations to break: interruptions, and `voided` with its reason.
        if chance(30) { s.interruptions = [Interruption(kind: .external, at: start + 60, note: "phone")] }
        if chance(10) { s.reason = .interrupted }
        if chance(30) { s.segments = [FocusSegment(start: start, seconds: 750), FocusSegment(start: start + 750, seconds: 750)] }
        return s
    }

    /// Something wrong with one member: a boundary value, another type, gone, twice, one more,
    /// or the same in the session or task object inside.
    private mutating func mutate(_ members: inout [Member], newer: Bool) {
        if let nested = members.firstIndex(where: { $0.key == "session" || $0.key == "task" && $0.value.hasPrefix("{") }), chance(60),
            case let json? = try? JSON.parse(Array(members[nested].value.utf8))
        {
            var inner = Self.members(of: json)
            if members[nested].key == "session" && chance(30) {
                timing(&inner)
            } else {
                mutateMember(&inner, newer: newer)
            }
            members[nested].value = Self.render(inner)
            return
        }
        mutateMember(&members, newer: newer)
    }

    private mutating func mutateMember(_ members: inout [Member], newer: Bool) {
        guard !members.isEmpty else { return }
        let at = int(members.count)
        let key = members[at].key
        switch int(10) {
        case 0: members.remove(at: at)
        case 1: members.insert((key, value(for: key, newer: newer)), at: int(members.count + 1)) // duplicated
        case 2: members.append((pick(["extra", "v2", "Device", "", "session", "note", "segments"]), pick(BoundaryValues.otherKinds)))
        case 3: members[at].value = pick(BoundaryValues.otherKinds)
        case 4: members[at].value = deep()
        case 5: members.shuffle(using: &random)
        default: members[at].value = value(for: key, newer: newer)
        }
    }

    /// Nested arrays around the parser's depth limit (`JSON.maxDepth`).
    private mutating func deep() -> String {
        let depth = pick([JSON.maxDepth - 2, JSON.maxDepth - 1, JSON.maxDepth, JSON.maxDepth + 1, 500])
        return String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    /// A value of `key`'s own kind at or just past a boundary of its range.
    public mutating func value(for key: String, newer: Bool = false) -> String {
        if chance(15), !["change", "v"].contains(key) { return pick(BoundaryValues.numbers) }
        switch key {
        case "v":
            return pick(["1", "1.0", "1e0", "0", "-1", "-0", "\"1\"", "null", "1e308"] + (newer ? ["2", "9223372036854775807"] : []))
        case "device", "id", "task": return quoted(idText())
        case "hlc": return hlc()
        case "change":
            return quoted(pick(["session_merged", "", "SESSION_RECORDED", "task_renamed", "plan_set ", "device_named\u{0}"]))
        case "day":
            return quoted(
                pick([
                    "1990-01-01", "1989-12-31", "2024-02-29", "2025-02-29", "2026-02-30", "9999-12-31", "0000-01-01", "2026-13-01",
                    "2026-1-1", " 2026-11-01", "20261101", "-2026-11-01", "99999-01-01",
                ]))
        case "name": return quoted(pick(Self.names))
        default: return sessionValue(for: key) ?? taskValue(for: key) ?? pick(BoundaryValues.numbers)
        }
    }

    /// Names at and past the rules of names (`TaskName`, `DeviceName`): 64 and 65 characters,
    /// empty, blank, hidden characters, combining marks, a character not in NFC.
    static let names: [String] = [
        "Work", "work", "Fuzz", "Café", String(repeating: "n", count: TaskName.maxLength),
        String(repeating: "n", count: TaskName.maxLength + 1), String(repeating: "é", count: TaskName.maxLength),
        String(repeating: "e\u{301}", count: TaskName.maxLength + 1), "", "   ", "\u{7}bell", "a\u{200B}b", "Cafe\u{301}",
        "\u{202E}krow", "  padded  ", "x\u{0}y", "\u{FEFF}bom", "\u{E000}", "👩‍💻 code", "\u{301}lead", "tab\there", "\u{A0}nbsp\u{A0}",
    ]

    private mutating func idText() -> String {
        let id = freshID(lead: "f")
        return pick([
            id, id.uppercased(), String(id.dropLast()), id + "0", id.replacingOccurrences("-", ""), "{" + id + "}",
            id.replacingOccurrences("a", "g"), "", " " + id, String(repeating: "0", count: 36), "00000000-0000-0000-0000-000000000000",
        ])
    }

    private mutating func hlc() -> String {
        // The clock of the sound lines: a reading another device's clock takes in.
        let millis = pick([
            String(clock), String(clock), "0", "1", String(Self.maxMillis), String(Self.maxMillis + 1), "-1", "-0", "9007199254740992",
            "1e308", "0.5", "1.5e3",
        ])
        let counter = pick(["0", "1", String(Int32.max), String(HLC.counterRange.upperBound + 1), "-1", "0.5", "1e308"])
        return pick(["[\(millis),\(counter)]", "[\(millis),\(counter)]", "[\(millis)]", "[\(millis),\(counter),0]", "{}", "\"\(millis)\""])
    }

    private mutating func sessionValue(for key: String) -> String? {
        switch key {
        case "planned_seconds": return pick(["0", "1", "86400", "86401", "-1", "1500.5", "\"1500\""])
        case "focused_seconds": return pick(["-1", "0", "1500", "1501", "1502", "86401", "1e308"])
        case "pauses": return pick(["0", "1000", "1001", "-1", "2147483648"])
        case "away_seconds": return pick(["0", "86400", "86401", "-1", "1.5", "null"])
        case "outcome": return quoted(pick(["completed", "skipped", "abandoned", "won", "Completed", ""]))
        case "note":
            return pick([
                quoted(String(repeating: "n", count: SessionNote.maxLength)),
                quoted(String(repeating: "n", count: SessionNote.maxLength + 1)),
                quoted(" " + String(repeating: "é", count: SessionNote.maxLength) + " "), quoted(""), quoted("   "), quoted("a\u{1}b"),
                quoted("\u{200B}"), quoted("e\u{301}"), quoted("line\nbreak"), "null",
            ])
        case "reason": return pick([quoted("left"), quoted("interrupted"), quoted("bogus"), quoted(""), "null"])
        case "voided": return pick(["true", "false", "\"true\"", "1", "null"])
        case "interruptions":
            let one = #"{"kind":"internal","at":1650000000}"#
            return pick([
                "null", "[]", "{}", "[\(one)]", #"[{"kind":"sideways","at":1650000000}]"#, #"[{"kind":"external"}]"#,
                #"[{"kind":"external","at":"2022-04-15T05:20:00Z"}]"#, #"[{"kind":"external","at":1e400}]"#,
                #"[{"kind":"internal","at":1650000000,"note":7}]"#,
                "[" + [String](repeating: one, count: Interruption.maxPerSession + 1).joined(separator: ",") + "]",
                #"[{"kind":"internal","at":1650000000,"note":""# + String(repeating: "n", count: SessionNote.maxLength + 1) + #""}]"#,
            ])
        case "segments":
            return pick([
                "[]", "[[0,1]]", "[[1e308,1500]]", "[[-1e308,9223372036854775807]]", "[[1650000000,\"750\"]]", "[[1650000000]]",
                "[[1650000000,750],[1650000000,750]]", "[[1650000000,-1],[1650000000,1501]]", "{}", "null",
            ])
        case "start", "end":
            return pick(BoundaryValues.numbers + [String(Self.windowStart), String(Self.windowEnd), "\"2026-01-01T00:00:00Z\""])
        default: return nil
        }
    }

    private mutating func taskValue(for key: String) -> String? {
        switch key {
        case "description":
            let limit = TaskConfig.maxDescriptionLength
            return quoted(pick([String(repeating: "d", count: limit), String(repeating: "d", count: limit + 1), "bell\u{7}", ""]))
        case "work_seconds", "short_break_seconds", "long_break_seconds":
            return pick(["0", "1", String(DurationText.maxSeconds), String(DurationText.maxSeconds + 1), "-1", "1.5", "\"25m\""])
        case "long_break_every": return pick(["0", "100", "101", "-1", "4.0"])
        case "goal": return pick(["0", "1000", "1001", "-1", "1e3"])
        case "reminder": return pick([quoted("00:00"), quoted("23:59"), quoted("24:00"), quoted("9:00"), quoted("-1:00"), "null", "540"])
        case "sound":
            let limit = TaskConfig.maxNameLength
            return pick([
                "null", quoted(""), quoted(String(repeating: "s", count: limit)), quoted(String(repeating: "s", count: limit + 1)),
                quoted("a\u{7}"),
            ])
        case "color": return quoted(pick(["red", "RED", "mauve", ""]))
        case "autostart": return quoted(pick(Autostart.allCases.map(\.rawValue) + ["sometimes", ""]))
        case "breaks", "focus_mode", "archived": return pick(["true", "false", "\"true\"", "1", "null"])
        case "away": return quoted(pick(["default", "bogus", ""] + AwayPolicy.allCases.map(\.rawValue)))
        case "dnd": return pick([quoted("on"), quoted("off"), quoted("default"), quoted("maybe"), "true", "null"])
        // Flow and overtime (optional even on a journal line: an older version's has none).
        case "mode": return pick([quoted("pomodoro"), quoted("flow"), quoted("stopwatch"), quoted(""), "true", "null"])
        case "break_ratio":
            return quoted(pick(["1/5", "1/1", "100/100", "0/5", "6/5", "1/0", "<25m=5m,<50m=8m,else=15m", "<25m=5m", "", "0.2"]))
        case "min_break_seconds", "max_break_seconds":
            return pick(["1", "60", "1800", String(DurationText.maxSeconds), "0", String(DurationText.maxSeconds + 1), "\"5m\"", "-1"])
        case "flow_nudge_seconds": return pick(["null", "5400", "0", String(DurationText.maxSeconds + 1), "\"90m\"", "true"])
        case "overtime": return pick(["true", "false", "\"yes\"", "1", "null"])
        case "uuid": return quoted(pick(["", "nope"]))
        default: return nil
        }
    }

    /// Start and end at the date window's edges and past them, end before start, a day's span
    /// and a second more, focused time longer than the span.
    private mutating func timing(_ members: inout [Member]) {
        let s = pick([Self.windowStart, Self.windowStart - 1, Self.windowStart - 0.001, Self.windowEnd - 86400, 1_735_689_600.5])
        let end = pick([s + 1500, s, s - 1, s + 86400, s + 86401, s + 86400.5, Self.windowEnd, Self.windowEnd + 1])
        let span = end - s
        let focused = pick([Int(span), Int(span) + 2, 0, -1])
        for (key, value) in [("start", String(s)), ("end", String(end)), ("focused_seconds", String(focused))] {
            if let at = members.firstIndex(where: { $0.key == key }) { members[at].value = value }
        }
    }

    private func quoted(_ text: String) -> String { JSON.string(text).serialized }

    /// The bytes as another version or a sync tool leaves them: CRLF, NUL, invalid UTF-8, a
    /// byte-order mark, cut short, a byte flipped, padded around `JournalEntry.maxLineBytes`.
    private mutating func damage(_ bytes: inout [UInt8]) {
        let at = int(bytes.count + 1)
        switch int(8) {
        case 0: bytes.append(UInt8(ascii: "\r"))
        case 1: bytes.insert(0, at: at)
        case 2:
            bytes.insert(
                contentsOf: pick([[0xFF], [0xC0, 0x80], [0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82]]), at: at)
        case 3: bytes.insert(contentsOf: [0xEF, 0xBB, 0xBF], at: 0)
        case 4: bytes = Array(bytes.prefix(at))
        case 5: if at < bytes.count { bytes[at] ^= UInt8(truncatingIfNeeded: 1 << int(8)) }
        default:
            // An extra member that brings the line to just under, at or just over the limit.
            let target = JournalEntry.maxLineBytes + pick([-1, 0, 1])
            let padding = target - bytes.count - #","pad":"""#.utf8.count
            if padding > 0, bytes.last == UInt8(ascii: "}") {
                bytes.removeLast()
                bytes += Array(#","pad":""#.utf8) + Array(repeating: UInt8(ascii: "p"), count: padding) + Array(#""}"#.utf8)
            }
        }
    }
}

extension String {
    fileprivate func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        split(separator: Character(target), omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
