/// One device's side of a sync folder: its clock, the history it has merged and how far it
/// read each other device's journal. `record` writes a change of this device to its journal and
/// applies it; `merge` applies what the other journals hold that it has not read yet.
public final class Replica {
    public let folder: JournalFolder
    public private(set) var clock: HybridClock
    public private(set) var history = History()
    public private(set) var cursors: [String: JournalCursor] = [:]

    public init(folder: JournalFolder, clock: HybridClock = HybridClock()) {
        self.folder = folder
        self.clock = clock
    }

    /// Stamps `change` at wall time `now`, appends it to this device's journal and applies it.
    @discardableResult
    public func record(_ change: JournalChange, now: Double) throws(JournalReadError) -> JournalEntry {
        var stamped = clock
        let entry = JournalEntry(device: folder.device, hlc: stamped.stamp(now: now), change: change)
        try folder.append([entry])
        clock = stamped
        history.apply(entry)
        return entry
    }

    /// Reads the other journals past where it read them last and applies their lines at wall
    /// time `now`; returns the lines that changed the history and the lines or files that could
    /// not be read.
    @discardableResult
    public func merge(now: Double) -> (applied: [JournalEntry], problems: [JournalProblem]) {
        let read = folder.readOthers(cursors: &cursors)
        var applied: [JournalEntry] = []
        var problems = read.problems
        for (_, batch) in read.batches {
            problems += batch.problems
            for (_, entry) in batch.entries {
                clock.observe(entry.hlc, now: now)
                if history.apply(entry) { applied.append(entry) }
            }
        }
        return (applied, problems)
    }

    /// The live sessions of the merged history.
    public var sessions: [History.Session] {
        let (tasks, identity) = history.liveTasks()
        return history.liveSessions(identity: identity, liveTaskIDs: Set(tasks.map(\.id)))
    }
}
