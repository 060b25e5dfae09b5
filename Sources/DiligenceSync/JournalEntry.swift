import DiligenceCore
import DiligenceJSON
import DiligenceTime

// One line of a device's journal (docs/sync.md, "The journal"): one JSON object per change, the
// whole state of the thing changed (not a difference), so a line alone says what the thing is
// after it and the last writer's line wins wherever lines arrive in another order.
//
//   {"v":1,"device":D,"hlc":[MILLIS,COUNTER],"change":"session_recorded","session":{...}}
//   {"v":1,"device":D,"hlc":[...],"change":"task_edited","task":{...}}
//   {"v":1,"device":D,"hlc":[...],"change":"plan_set","day":"2026-12-01","task":ID}
//   {"v":1,"device":D,"hlc":[...],"change":"device_named","name":"laptop"}

/// A work session as journals carry it: the session's figures (`work`; its `uuid` is the stable
/// id, the store's `id`, `taskID` and `taskName` are not carried), its task's stable id and the
/// device whose timer or hand recorded it. `s.start`, `s.outcome`…: the figures of `work`.
@dynamicMemberLookup
public struct SyncedSession: Equatable, Hashable, Sendable {
    public var work: WorkSession
    public var task: String
    public var device: String

    /// The session's stable id (`work.uuid`).
    public var id: String { work.uuid }

    public subscript<Value>(dynamicMember figure: WritableKeyPath<WorkSession, Value>) -> Value {
        get { work[keyPath: figure] }
        set { work[keyPath: figure] = newValue }
    }

    public init(work: WorkSession, task: String, device: String) {
        self.work = work
        self.work.id = 0
        self.work.taskID = 0
        self.work.taskName = ""
        self.work.device = nil
        self.task = task
        self.device = device
    }

    public init(
        id: String, task: String, device: String, start: Double, end: Double, plannedSeconds: Int, focusedSeconds: Int,
        pauses: Int, outcome: Outcome
    ) {
        let work = WorkSession(
            taskID: 0, taskName: "", start: start, end: end, plannedSeconds: plannedSeconds, focusedSeconds: focusedSeconds,
            pauses: pauses, outcome: outcome, uuid: id)
        self.init(work: work, task: task, device: device)
    }
}

/// A task as journals carry it: its stable id (also `config.uuid`), its settings (the store's
/// `config.id` is not carried) and whether it is archived.
public struct SyncedTask: Equatable, Sendable {
    public var id: String
    public var config: TaskConfig
    public var archived: Bool

    public init(id: String, config: TaskConfig, archived: Bool = false) {
        self.id = id
        self.config = config
        self.config.id = 0
        self.config.uuid = id
        self.config.archived = archived
        self.archived = archived
    }
}

/// What one line says changed.
public enum JournalChange: Equatable, Sendable {
    case sessionRecorded(SyncedSession)
    case sessionEdited(SyncedSession)
    case sessionRemoved(id: String)
    case taskAdded(SyncedTask)
    case taskEdited(SyncedTask)
    case taskArchived(SyncedTask)
    case taskRemoved(id: String)
    case planSet(day: CalendarDay, task: String)
    case planCleared(day: CalendarDay)
    /// The writing device's name (`DeviceName`): each device names only itself.
    case deviceNamed(name: String)

    /// The `change` member's value.
    public var name: String {
        switch self {
        case .sessionRecorded: "session_recorded"
        case .sessionEdited: "session_edited"
        case .sessionRemoved: "session_removed"
        case .taskAdded: "task_added"
        case .taskEdited: "task_edited"
        case .taskArchived: "task_archived"
        case .taskRemoved: "task_removed"
        case .planSet: "plan_set"
        case .planCleared: "plan_cleared"
        case .deviceNamed: "device_named"
        }
    }
}

/// One line of a journal: who wrote it, when (hybrid logical clock), and what changed.
public struct JournalEntry: Equatable, Sendable {
    /// The journal format this build writes and reads (`v`).
    public static let format: Int64 = 1
    /// The longest line a journal may hold, newline excluded: a task with a 1000-character
    /// description is some 4 KiB.
    public static let maxLineBytes = 64 * 1024

    public var device: String
    public var hlc: HLC
    public var change: JournalChange

    public init(device: String, hlc: HLC, change: JournalChange) {
        self.device = device
        self.hlc = hlc
        self.change = change
    }

    public var version: Version { Version(hlc: hlc, device: device) }

    // MARK: Writing

    /// The line, without its newline.
    public var line: String {
        var members: [(String, JSON)] = [
            ("v", .int(Self.format)), ("device", .string(device)), ("hlc", .array([.int(hlc.millis), .int(hlc.counter)])),
            ("change", .string(change.name)),
        ]
        switch change {
        case .sessionRecorded(var s), .sessionEdited(var s):
            // A line holds 64 KiB: interruptions' notes are what gives way, never the session.
            if !s.interruptions.isEmpty, Self.json(s).serialized.utf8.count > Self.maxLineBytes - 512 {
                s.work.interruptions = s.interruptions.map { Interruption(kind: $0.kind, at: $0.at) }
            }
            members.append(("session", Self.json(s)))
        case .sessionRemoved(let id), .taskRemoved(let id): members.append(("id", .string(id)))
        case .taskAdded(let t), .taskEdited(let t), .taskArchived(let t): members.append(("task", Self.json(t)))
        case .planSet(let day, let task): members += [("day", .string(day.description)), ("task", .string(task))]
        case .planCleared(let day): members.append(("day", .string(day.description)))
        case .deviceNamed(let name): members.append(("name", .string(name)))
        }
        return JSON.object(members).serialized
    }

    static func json(_ s: SyncedSession) -> JSON {
        .object(
            [
                ("id", .string(s.id)), ("task", .string(s.task)), ("device", .string(s.device)),
                // Numbers, not RFC 3339 text: wall seconds with their fraction, exactly as recorded,
                // so every device holds the same value.
                ("start", .double(s.start)), ("end", .double(s.end)),
                ("planned_seconds", .int(s.plannedSeconds)), ("focused_seconds", .int(s.focusedSeconds)),
                ("pauses", .int(s.pauses)), ("outcome", .string(s.outcome.rawValue)),
            ] + extras(s))
    }

    /// The session's members a line holds only when there is something to say (a line without
    /// them, as an older diligence wrote, is a session without a note, time away, reason or
    /// interruptions, and one focus segment from its start). Readers before interruptions ignore
    /// `interruptions` and `voided`, and refuse a `reason` they do not know: a voided session
    /// says `"voided": true` instead, so they keep it, as abandoned. Readers before segments
    /// ignore `segments`.
    static func extras(_ s: SyncedSession) -> [(String, JSON)] {
        var members: [(String, JSON)] = []
        if let note = s.note { members.append(("note", .string(note))) }
        if s.awaySeconds != 0 { members.append(("away_seconds", .int(s.awaySeconds))) }
        if s.reason == .interrupted {
            members.append(("voided", .bool(true)))
        } else if let reason = s.reason {
            members.append(("reason", .string(reason.rawValue)))
        }
        if !s.interruptions.isEmpty {
            members.append(("interruptions", .array(s.interruptions.map { $0.json(wire: false) })))
        }
        if s.segments != FocusSegment.whole(start: s.start, focused: s.focusedSeconds) {
            members.append(("segments", FocusSegment.pairs(s.segments)))
        }
        return members
    }

    static func json(_ t: SyncedTask) -> JSON {
        // The protocol's task object (task_list), with the stable id in place of the store's.
        guard case .object(let members) = t.config.json else { return .null }
        return .object(
            [("id", .string(t.id))] + members.filter { !["id", "uuid", "archived"].contains($0.0) } + [("archived", .bool(t.archived))])
    }

    // MARK: Reading

    /// The entry `line` holds; throws `JournalLineError` saying what is wrong with it.
    public static func parse<Bytes: Collection<UInt8>>(_ line: Bytes) throws(JournalLineError) -> JournalEntry {
        let json: JSON
        do { json = try JSON.parse(line) } catch { throw JournalLineError("not JSON: \(error.message)") }
        guard case .object = json else { throw JournalLineError("expected an object, got \(json.typeName.withArticle)") }
        guard let format = json["v"]?.intValue else { throw JournalLineError("\"v\" (the format) is missing") }
        guard format == Self.format else {
            throw JournalLineError("format \(format) (this diligence reads format \(Self.format))", newer: format > Self.format)
        }
        let device = try id(json, "device")
        guard let clock = json["hlc"]?.arrayValue, clock.count == 2, let millis = clock[0].intValue, let counter = clock[1].intValue,
            HLC.millisRange.contains(millis), HLC.counterRange.contains(counter)
        else {
            throw JournalLineError("\"hlc\" is not [milliseconds since 1970 (to year 9999), counter (0 to \(HLC.counterRange.upperBound))]")
        }
        guard let name = json["change"]?.stringValue else { throw JournalLineError("\"change\" is not a string") }
        let change: JournalChange
        switch name {
        case "session_recorded": change = .sessionRecorded(try session(json["session"]))
        case "session_edited": change = .sessionEdited(try session(json["session"]))
        case "session_removed": change = .sessionRemoved(id: try id(json, "id"))
        case "task_added": change = .taskAdded(try task(json["task"]))
        case "task_edited": change = .taskEdited(try task(json["task"]))
        case "task_archived": change = .taskArchived(try task(json["task"]))
        case "task_removed": change = .taskRemoved(id: try id(json, "id"))
        case "plan_set": change = .planSet(day: try day(json), task: try id(json, "task"))
        case "plan_cleared": change = .planCleared(day: try day(json))
        case "device_named": change = .deviceNamed(name: try deviceName(json))
        default: throw JournalLineError("unknown change \(name.debugDescription)")
        }
        return JournalEntry(device: device, hlc: HLC(millis: millis, counter: counter), change: change)
    }

    /// The id in `json[key]`: a UUID (8-4-4-4-12 hexadecimal digits), in lowercase.
    static func id(_ json: JSON, _ key: String) throws(JournalLineError) -> String {
        guard let text = json[key]?.stringValue, let id = SyncID.parse(text) else {
            throw JournalLineError("\"\(key)\" is not an id (8-4-4-4-12 hexadecimal digits)")
        }
        return id
    }

    static func day(_ json: JSON) throws(JournalLineError) -> CalendarDay {
        guard let text = json["day"]?.stringValue, let day = CalendarDay(text), day >= DateWindow.firstDay else {
            throw JournalLineError("\"day\" is not a date YYYY-MM-DD from \(DateWindow.firstDay)")
        }
        return day
    }

    static func deviceName(_ json: JSON) throws(JournalLineError) -> String {
        guard let text = json["name"]?.stringValue else { throw JournalLineError("\"name\" is not a string") }
        do { return try DeviceName.normalize(text) } catch { throw JournalLineError("\"name\": \(error.message)") }
    }

    /// Latest end a journal's session may have: 9999-12-31. (Whether it lies in the date window
    /// now is for the store to say when it records it.)
    static let sessionBounds = DateWindow.sessions(now: 0).lowerBound...Double(HLC.millisRange.upperBound / 1000)

    static func session(_ json: JSON?) throws(JournalLineError) -> SyncedSession {
        guard let json, case .object = json else { throw JournalLineError("\"session\" is not an object") }
        guard let start = json["start"]?.doubleValue, let end = json["end"]?.doubleValue else {
            throw JournalLineError("the session's \"start\" and \"end\" are each a number (seconds since 1970)")
        }
        var numbers: [Int] = []
        for key in ["planned_seconds", "focused_seconds", "pauses"] {
            guard let number = json[key]?.intValue else { throw JournalLineError("the session's \"\(key)\" is not a whole number") }
            numbers.append(Int(number))
        }
        guard let outcomeText = json["outcome"]?.stringValue, let outcome = Outcome(rawValue: outcomeText) else {
            throw JournalLineError("the session's \"outcome\" is not completed, skipped or abandoned")
        }
        var s = SyncedSession(
            id: try id(json, "id"), task: try id(json, "task"), device: try id(json, "device"), start: start, end: end,
            plannedSeconds: numbers[0], focusedSeconds: numbers[1], pauses: numbers[2], outcome: outcome)
        try readExtras(json, into: &s)
        // A line is read the same on every device, whatever its now: its last moment is the
        // end of 9999, not a day after now (the store says that when it records the session).
        if max(start, end) > sessionBounds.upperBound {
            throw JournalLineError("the session is refused: it ends after 9999-12-31, the last day a line may name")
        }
        if let problem = SessionRules.problem(with: s.work, window: sessionBounds) {
            throw JournalLineError("the session is refused: \(problem)")
        }
        return s
    }

    /// The members `extras` writes, each optional: the note under the rule of every note
    /// (`SessionNote`), the time away a whole number (its range is `SessionRules`'), the reason
    /// an `EndReason`.
    static func readExtras(_ json: JSON, into s: inout SyncedSession) throws(JournalLineError) {
        switch json["note"] {
        case nil, .null?: break
        case .string(let text)?:
            do { s.note = try SessionNote.normalize(text, label: "the session's \"note\"") } catch { throw JournalLineError(error.message) }
        default: throw JournalLineError("the session's \"note\" is not a string or null")
        }
        if let value = json["away_seconds"] {
            guard let seconds = value.intValue, let whole = Int(exactly: seconds) else {
                throw JournalLineError("the session's \"away_seconds\" is not a whole number")
            }
            s.awaySeconds = whole
        }
        switch json["reason"] {
        case nil, .null?: break
        case .string(let text)? where EndReason(rawValue: text) != nil: s.reason = EndReason(rawValue: text)
        default:
            throw JournalLineError("the session's \"reason\" is not \(EndReason.allCases.map(\.rawValue).joined(separator: ", ")) or null")
        }
        switch json["voided"] {
        case nil, .bool(false)?: break
        case .bool(true)?: s.reason = .interrupted
        default: throw JournalLineError("the session's \"voided\" is not true or false")
        }
        switch Interruption.list(json["interruptions"], wire: false) {
        case .success(let list): s.interruptions = list
        case .failure(let error): throw JournalLineError("the session's \(error.message)")
        }
        if let value = json["segments"], value != .null {
            guard let list = FocusSegment.list(pairs: value) else {
                throw JournalLineError("the session's \"segments\" is not a list of [start, seconds]")
            }
            // Every device reads a line the same: what does not fit is fitted the same everywhere.
            s.work.segments = FocusSegment.accepted(list, start: s.start, end: s.end, focused: s.focusedSeconds)
        }
    }

    /// The task object of a line: the protocol's task object (`TaskConfig.exported`, every
    /// setting present) with the stable id as `id`. Its `away` and `dnd` are read but not
    /// carried: they follow each device's presence and notification server (`SyncMerge.adopt`).
    static func task(_ json: JSON?) throws(JournalLineError) -> SyncedTask {
        guard let json, case .object = json else { throw JournalLineError("\"task\" is not an object") }
        let id = try id(json, "id")
        switch TaskConfig.exported(json, complete: true) {
        case .success(var config):
            config.awayPolicy = nil
            config.doNotDisturb = nil
            return SyncedTask(id: id, config: config, archived: config.archived)
        case .failure(let error): throw JournalLineError(error.message)
        }
    }
}

/// Why a journal line cannot be applied.
public struct JournalLineError: Error, Equatable, Sendable {
    public var message: String
    /// Written by a newer diligence: the reader stops before it (it is not lost; a newer
    /// diligence reads it) instead of skipping it.
    public var newer: Bool

    public init(_ message: String, newer: Bool = false) {
        self.message = message
        self.newer = newer
    }
}

/// Ids of devices, sessions and tasks in journals: UUIDs as text, lowercase (`UUIDText`, the
/// ids sessions and tasks are given when they are stored).
public enum SyncID {
    /// `text` in lowercase when it is 32 hexadecimal digits in groups of 8-4-4-4-12, else nil.
    public static func parse(_ text: String) -> String? { UUIDText.parse(text) }
}
