import DiligenceCore
import DiligenceJSON
import DiligenceTime

// The merge rule (docs/sync.md, "How journals merge"): what the history is, given a set of
// journal lines. Applying a line is idempotent and commutative — the result depends on the set
// of lines applied, never on their order or on how often each came — so every device that has
// read the same lines holds the same history.
//
// - Sessions, tasks and day plans are each a register: the line with the greatest `Version`
//   (hybrid logical clock, then device id) holds the state. Every line carries the whole state.
// - A removal is a tombstone and final: a removed session or task stays removed whatever
//   edit of it another device made before hearing of the removal.
// - Tasks: the first task each device added under a name (normalized, case folded) is one task
//   with the first task every other device added under that name — the seven default tasks
//   of two devices, a "Reading" made on each — known by the least of their ids; an edit of
//   any of them (a rename) edits that one task. A task a device adds later under a name it used
//   before is a task of its own.
// - What must show two live tasks under one name (two devices renamed different tasks to it)
//   shows the one of least id under it and the others with " (2)", " (3)" after it.

/// Where a task came from: the `task_added` line of its id.
struct TaskBirth: Equatable {
    var version: Version
    var nameKey: String
}

/// The state of a synced history: every register with the version that holds it.
public struct History: Sendable {
    public struct Register<Value: Sendable>: Sendable {
        public var version: Version
        public var value: Value
    }

    private(set) var sessions: [String: Register<SyncedSession>] = [:]
    private(set) var removedSessions: [String: Version] = [:]
    private(set) var tasks: [String: Register<SyncedTask>] = [:]
    private(set) var births: [String: TaskBirth] = [:]
    private(set) var removedTasks: [String: Version] = [:]
    /// A day's plan: its task's id, nil once cleared.
    private(set) var plans: [CalendarDay: Register<String?>] = [:]
    /// Each device's name, by its id: only the device itself writes it (a line's `device`).
    private(set) var names: [String: Register<String>] = [:]

    public init() {}

    /// Makes room for `count` more sessions (a batch of lines about to be applied).
    public mutating func reserveCapacity(sessions count: Int) {
        sessions.reserveCapacity(sessions.count + count)
    }

    /// Takes in one line; returns whether it changed anything (false for a line applied before
    /// or one an applied line supersedes).
    @discardableResult
    public mutating func apply(_ entry: JournalEntry) -> Bool {
        let version = entry.version
        switch entry.change {
        case .sessionRecorded(let s), .sessionEdited(let s):
            return Self.write(&sessions, s.id, Register(version: version, value: s))
        case .sessionRemoved(let id):
            return Self.remove(&removedSessions, id, version)
        case .taskAdded(let t):
            let birth = TaskBirth(version: version, nameKey: Self.nameKey(t.config.name))
            var changed = false
            if births[t.id].map({ version < $0.version }) ?? true {
                births[t.id] = birth
                changed = true
            }
            return Self.write(&tasks, t.id, Register(version: version, value: t)) || changed
        case .taskEdited(let t), .taskArchived(let t):
            return Self.write(&tasks, t.id, Register(version: version, value: t))
        case .taskRemoved(let id):
            return Self.remove(&removedTasks, id, version)
        case .planSet(let day, let task):
            return Self.write(&plans, day, Register(version: version, value: task))
        case .planCleared(let day):
            return Self.write(&plans, day, Register(version: version, value: nil))
        case .deviceNamed(let name):
            return Self.write(&names, entry.device, Register(version: version, value: name))
        }
    }

    /// Keeps `register` under `key` when it is later than the one there.
    private static func write<Key: Hashable, Value>(_ registers: inout [Key: Register<Value>], _ key: Key, _ register: Register<Value>)
        -> Bool
    {
        if let held = registers[key], !(held.version < register.version) { return false }
        registers[key] = register
        return true
    }

    /// Keeps the earliest removal of `id` (the version is only kept to be shown).
    private static func remove(_ tombstones: inout [String: Version], _ id: String, _ version: Version) -> Bool {
        if let held = tombstones[id], held <= version { return false }
        tombstones[id] = version
        return true
    }

    /// Names two devices would take for the same task: normalized, case folded.
    static func nameKey(_ name: String) -> String { TaskName.key(name) }

    // MARK: What it shows

    /// Every session id a line named (recorded, edited or removed).
    public var knownSessionIDs: Set<String> { Set(sessions.keys).union(removedSessions.keys) }
    /// Every task id a line named.
    public var knownTaskIDs: Set<String> { Set(tasks.keys).union(births.keys).union(removedTasks.keys) }
    /// Every day a plan line named (set or cleared).
    public var plannedDays: [CalendarDay] { Array(plans.keys) }
    /// The name each device last gave itself, by device id.
    public var deviceNames: [String: String] { names.mapValues(\.value) }
    /// Every removal held (tombstones), as lines' changes: sessions, then tasks, each by id.
    public var removals: [JournalChange] {
        removedSessions.keys.sorted().map { .sessionRemoved(id: $0) } + removedTasks.keys.sorted().map { .taskRemoved(id: $0) }
    }

    /// The clock reading of the latest line of each device that the history holds (a line
    /// another line superseded is not held): when the device was last heard of.
    public func latestReadings() -> [String: HLC] {
        var latest: [String: HLC] = [:]
        func note(_ version: Version) {
            if latest[version.device].map({ $0 < version.hlc }) ?? true { latest[version.device] = version.hlc }
        }
        sessions.values.forEach { note($0.version) }
        tasks.values.forEach { note($0.version) }
        births.values.forEach { note($0.version) }
        plans.values.forEach { note($0.version) }
        names.values.forEach { note($0.version) }
        removedSessions.values.forEach(note)
        removedTasks.values.forEach(note)
        return latest
    }

    /// A task as the history shows it.
    public struct Task: Equatable, Sendable {
        /// The least id of the tasks it is made of: what sessions and plans name it by.
        public var id: String
        /// Every id it is made of (each device's own), `id` among them.
        public var members: [String]
        public var config: TaskConfig
        public var archived: Bool
    }

    /// A session as the history shows it: its task is the merged task's id.
    public struct Session: Equatable, Sendable {
        public var session: SyncedSession
        public var task: String
    }

    /// The merged task each task id belongs to (`Task.id`): the first task of each device under
    /// a name share the least of their ids; any other task keeps its own.
    public func taskIdentity() -> [String: String] {
        var canonical: [String: String] = [:]
        var firstOfDevice: [String: [String: (Version, String)]] = [:] // device → name key → first add
        for (id, birth) in births {
            let device = birth.version.device
            if let first = firstOfDevice[device]?[birth.nameKey], first.0 < birth.version || (first.0 == birth.version && first.1 < id) {
                continue
            }
            firstOfDevice[device, default: [:]][birth.nameKey] = (birth.version, id)
        }
        var shared: [String: String] = [:] // name key → least id among the devices' first adds
        for byName in firstOfDevice.values {
            for (key, first) in byName where shared[key].map({ first.1 < $0 }) ?? true { shared[key] = first.1 }
        }
        for byName in firstOfDevice.values {
            for (key, first) in byName { canonical[first.1] = shared[key] }
        }
        for id in tasks.keys where canonical[id] == nil { canonical[id] = id }
        for id in births.keys where canonical[id] == nil { canonical[id] = id }
        return canonical
    }

    /// The live tasks (neither they nor any task they are made of removed), ordered by id,
    /// each with the settings of the latest line of any of its members; and the identity map.
    public func liveTasks() -> (tasks: [Task], identity: [String: String]) {
        let identity = taskIdentity()
        var groups: [String: [String]] = [:]
        for (id, merged) in identity { groups[merged, default: []].append(id) }
        var live: [Task] = []
        for (merged, members) in groups {
            if members.contains(where: { removedTasks[$0] != nil }) { continue }
            guard let latest = members.compactMap({ tasks[$0] }).max(by: { $0.version < $1.version }) else { continue }
            var config = latest.value.config
            config.id = 0
            config.uuid = merged
            live.append(Task(id: merged, members: members.sorted(), config: config, archived: latest.value.archived))
        }
        live.sort { $0.id < $1.id }
        // One name, one task: a name taken by a task of lesser id gets a number.
        var taken: Set<String> = []
        for index in live.indices {
            let name = live[index].config.name
            var candidate = name
            var number = 2
            while taken.contains(Self.nameKey(candidate)) {
                candidate = Self.numbered(name, number)
                number += 1
            }
            live[index].config.name = candidate
            taken.insert(Self.nameKey(candidate))
        }
        return (live, identity)
    }

    /// `name (number)`, the name shortened (and trimmed) as far as it takes to keep within the
    /// length of a name (`TaskName.maxLength`): a task must stay one a person can name.
    static func numbered(_ name: String, _ number: Int) -> String {
        let suffix = " (\(number))"
        var base = name.prefix(TaskName.maxLength - suffix.count)
        while let last = base.last, last.isWhitespace { base.removeLast() }
        return base + suffix
    }

    /// The live sessions (not removed, their task live), ordered by start then id.
    public func liveSessions(identity: [String: String], liveTaskIDs: Set<String>) -> [Session] {
        var out = sessions.keys.compactMap { liveSession($0, identity: identity, liveTaskIDs: liveTaskIDs) }
        out.sort { ($0.session.start, $0.session.id) < ($1.session.start, $1.session.id) }
        return out
    }

    /// The session `id` when it is live (not removed, its task live), else nil.
    public func liveSession(_ id: String, identity: [String: String], liveTaskIDs: Set<String>) -> Session? {
        guard removedSessions[id] == nil, let register = sessions[id], let task = identity[register.value.task],
            liveTaskIDs.contains(task)
        else { return nil }
        return Session(session: register.value, task: task)
    }

    /// The days planned for a live task, with that task's merged id.
    public func livePlans(identity: [String: String], liveTaskIDs: Set<String>) -> [(day: CalendarDay, task: String)] {
        var out: [(day: CalendarDay, task: String)] = []
        for (day, register) in plans {
            guard let id = register.value, let task = identity[id], liveTaskIDs.contains(task) else { continue }
            out.append((day, task))
        }
        return out.sorted { $0.day < $1.day }
    }

    /// The history as text, one line per task, session and plan in a fixed order: two histories
    /// are the same when their dumps are.
    public var canonicalDump: String {
        let (tasks, identity) = liveTasks()
        let ids = Set(tasks.map(\.id))
        var lines: [String] = []
        for task in tasks {
            lines.append("task \(task.id) \(task.members.joined(separator: ",")) archived=\(task.archived) \(task.config.json.serialized)")
        }
        for s in liveSessions(identity: identity, liveTaskIDs: ids) {
            lines.append("session \(s.session.id) task=\(s.task) \(JournalEntry.json(s.session).serialized)")
        }
        for plan in livePlans(identity: identity, liveTaskIDs: ids) {
            lines.append("plan \(plan.day) \(plan.task)")
        }
        for (device, name) in deviceNames.sorted(by: { $0.key < $1.key }) {
            lines.append("device \(device) \(JSON.string(name).serialized)")
        }
        return lines.joined(separator: "\n")
    }
}
