// What a database keeps of a merged `History` so that a restart builds it again without reading
// the journals from their start (docs/sync.md, "Merging the other devices' journals"). Applying the kept registers to an empty history, in any order, through
// `History.apply` (the one merge rule), gives the history again.

/// The registers that lines changed since they were last kept, each with the line that holds it now.
///
/// - A session's register (the 100 000 of a long history) is noted compact (`KeptSession`): its
///   version, task and device, without its value, which the database shows when the session is
///   there; no line to keep or to read again.
/// - Every other register — a tombstone, a task, a task's birth, a day's plan, and any kind a
///   new `JournalChange` brings — is small and few: kept as its line's text, by register name.
public struct HistoryChanges: Sendable {
    /// The sessions whose register changed, in the order lines changed them (a session changed
    /// twice is there twice, the later last).
    public private(set) var sessions: [KeptSession] = []
    /// Register name (`History.registers(heldBy:)`) → the text of the line holding it now.
    public private(set) var lines: [String: String] = [:]

    public init() {}

    public var isEmpty: Bool { sessions.isEmpty && lines.isEmpty }

    /// Notes what `entry`, just applied to `history`, holds there now (nothing when a line held
    /// before supersedes it).
    public mutating func note(_ entry: JournalEntry, in history: History) {
        switch entry.change {
        case .sessionRecorded(let s), .sessionEdited(let s):
            // No register name to build: one per line of 100 000 counts.
            if history.sessions[s.id]?.version == entry.version {
                sessions.append(KeptSession(id: s.id, version: entry.version, task: s.task, device: s.device))
            }
        default:
            for name in history.registers(heldBy: entry) { lines[name] = entry.line }
        }
    }
}

/// A session's register as a database keeps it: the version of the line holding it, and the
/// session's id, task id (as its journal names it) and recording device.
public struct KeptSession: Equatable, Sendable {
    public var id: String
    public var version: Version
    public var task: String
    public var device: String

    public init(id: String, version: Version, task: String, device: String) {
        self.id = id
        self.version = version
        self.task = task
        self.device = device
    }

    public init(_ register: History.Register<SyncedSession>) {
        self.init(id: register.value.id, version: register.version, task: register.value.task, device: register.value.device)
    }
}

extension History {
    /// The register of session `id`: the version and session of the line holding it.
    public func session(_ id: String) -> Register<SyncedSession>? { sessions[id] }

    /// The registers `entry` holds now (those whose version is its), each by a name of its own
    /// (`session <id>`, `birth <id>`, `plan <day>` …).
    public func registers(heldBy entry: JournalEntry) -> [String] {
        let version = entry.version
        switch entry.change {
        case .sessionRecorded(let s), .sessionEdited(let s):
            return sessions[s.id]?.version == version ? ["session \(s.id)"] : []
        case .sessionRemoved(let id):
            return removedSessions[id] == version ? ["session_removed \(id)"] : []
        case .taskAdded(let t):
            return (births[t.id]?.version == version ? ["birth \(t.id)"] : [])
                + (tasks[t.id]?.version == version ? ["task \(t.id)"] : [])
        case .taskEdited(let t), .taskArchived(let t):
            return tasks[t.id]?.version == version ? ["task \(t.id)"] : []
        case .taskRemoved(let id):
            return removedTasks[id] == version ? ["task_removed \(id)"] : []
        case .planSet(let day, _), .planCleared(let day):
            return plans[day]?.version == version ? ["plan \(day)"] : []
        case .deviceNamed:
            return names[entry.device]?.version == version ? ["device_name \(entry.device)"] : []
        }
    }
}
