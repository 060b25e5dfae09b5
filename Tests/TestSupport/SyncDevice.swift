import DiligenceSync

/// A device of a sync test: a replica on its own copy of the sync folder, a wall clock of its
/// own that each change moves on by `step` seconds, and the problems its merges met.
public final class SyncDevice {
    public let replica: Replica
    public var problems: [JournalProblem] = []
    public var wall = 1_764_000_000.0
    public let step: Double

    public init(id: String, directory: String, step: Double = 60) {
        replica = Replica(folder: JournalFolder(directory: directory, device: id))
        self.step = step
    }

    public var folder: JournalFolder { replica.folder }
    public var history: History { replica.history }
    public var taskNames: [String] { history.liveTasks().tasks.map(\.config.name) }

    public func change(_ change: JournalChange) throws {
        wall += step
        try replica.record(change, now: wall)
    }

    /// A completed 25-minute session of `task` starting now.
    public func session(_ id: String, task: String) -> SyncedSession {
        SyncedSession(
            id: id, task: task, device: folder.device, start: wall, end: wall + 1500, plannedSeconds: 1500, focusedSeconds: 1500, pauses: 0,
            outcome: .completed)
    }

    public func merge() {
        problems += replica.merge(now: wall).problems
    }
}
