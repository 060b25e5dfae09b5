import DiligenceSync

/// A device of a sync test, without a daemon: its own copy of the sync folder, its hybrid clock,
/// the history it merged and how far it read each other journal (what the daemon's SyncJournal
/// and SyncMerge keep), a wall clock of its own that each change moves on by `step` seconds, and
/// the problems its merges met.
public final class SyncDevice {
    public let folder: JournalFolder
    public private(set) var clock = HybridClock()
    public private(set) var history = History()
    public private(set) var cursors: [String: JournalCursor] = [:]
    public var problems: [JournalProblem] = []
    public var wall = 1_764_000_000.0
    public let step: Double

    public init(id: String, directory: String, step: Double = 60) {
        folder = JournalFolder(directory: directory, device: id)
        self.step = step
    }

    public var taskNames: [String] { history.liveTasks().tasks.map(\.config.name) }

    /// The live sessions of the merged history.
    public var sessions: [History.Session] {
        let (tasks, identity) = history.liveTasks()
        return history.liveSessions(identity: identity, liveTaskIDs: Set(tasks.map(\.id)))
    }

    /// Stamps `change` a `step` later, appends it to this device's journal and applies it.
    public func change(_ change: JournalChange) throws {
        wall += step
        var stamped = clock
        let entry = JournalEntry(device: folder.device, hlc: stamped.stamp(now: wall), change: change)
        try folder.append([entry])
        clock = stamped
        history.apply(entry)
    }

    /// A completed 25-minute session of `task` starting now.
    public func session(_ id: String, task: String) -> SyncedSession {
        SyncedSession(
            id: id, task: task, device: folder.device, start: wall, end: wall + 1500, plannedSeconds: 1500, focusedSeconds: 1500, pauses: 0,
            outcome: .completed)
    }

    /// Reads the other journals past where it read them last and applies their lines.
    public func merge() {
        let read = folder.readOthers(cursors: &cursors)
        problems += read.problems
        for (_, batch) in read.batches {
            problems += batch.problems
            for (_, entry) in batch.entries {
                clock.observe(entry.hlc, now: wall)
                history.apply(entry)
            }
        }
    }
}
