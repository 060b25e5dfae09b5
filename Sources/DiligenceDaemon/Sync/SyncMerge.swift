import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceStore
import DiligenceSync
import DiligenceTime
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// The other devices' journals merged into this database (docs/sync.md, "Merging"). The merge
/// rule is `History`'s alone: every journal of the folder, this device's own included, is read
/// into one `History` (idempotent, order-independent), and the database is made to show what
/// it holds — its live tasks (same name, same task), sessions and plans — in one transaction
/// per batch whose notes are dropped (merged lines go to no journal). Other devices' sessions
/// enter through the recorder's door as `SessionSource.sync`.
///
/// The folder is watched with inotify (a journal created, written and closed, or renamed into
/// place): no polling, no wake-up while it is quiet. Each journal is read from where the last
/// read stopped. How far that was and the history's registers are kept in the database, in the
/// transaction that applies the lines, and restored at start: a restart
/// reads only what the journals gained. A folder not merged here before is read from its start.
final class SyncMerge {
    private let store: Store
    private let recorder: SessionRecorder
    private let journal: SyncJournal
    private let clocks: Clocks
    private let queue: DispatchQueue
    /// Today's date as reports count it (`StatsService.todayDate`): plans outside the dates
    /// diligence keeps around it are refused, as the plan command refuses them.
    private let today: () -> CalendarDay
    /// Called after a merge changed the database, with the task rows it merged into another (by
    /// the row kept): the timer follows its task, the daemon pushes the status.
    private var merged: ((_ folded: [Int64: Int64]) -> Void)?
    /// The task rows the merge in progress merged into another.
    private var folded: [Int64: Int64] = [:]

    private(set) var folder: String?
    private(set) var history = History()
    private var cursors: [String: JournalCursor] = [:]
    /// The registers lines changed since the merge state was last kept.
    private var unsaved = HistoryChanges()
    /// Journal lines read since the daemon started (logged at each follow).
    private var linesRead = 0
    /// Where this merge read the line that last set each session it changed: a session the
    /// store then refuses is logged with its line, as an unreadable one is.
    private var lineOf = LinePlaces()
    private var watch: DirectoryWatch?
    /// The journals' names that are not regular files (what each is), logged once each while
    /// they stay so.
    private var skippedFiles: [String: FileKind] = [:]
    /// Own changes still wait for the journal: merging now could undo them (logged once).
    private var heldBack = false
    /// Other devices' sessions refused only for ending more than a day after this device's now
    /// (their device's clock is ahead): each with the wall time from which it may be taken.
    private var notYet: [String: Double] = [:]
    /// Fires at the earliest of `notYet`; a merge then takes what came due.
    private var notYetTimer: DispatchSourceTimer?
    /// The latest reading each other device stamped from its own wall clock (`HybridClock.aheadMillis`):
    /// how far ahead of this device's its clock is, for `sync status` and the log.
    private var ownStamps: [String: Int64] = [:]
    /// The devices whose clock ahead was logged (once per device and run).
    private var skewLogged: Set<String> = []
    /// A clock ahead by more than this is reported (delivery is late, never early, and NTP keeps
    /// clocks within far less).
    static let reportedSkewMillis: Int64 = 5 * 60 * 1000

    init(
        store: Store, recorder: SessionRecorder, journal: SyncJournal, clocks: Clocks, queue: DispatchQueue,
        today: @escaping () -> CalendarDay
    ) {
        self.today = today
        self.store = store
        self.recorder = recorder
        self.journal = journal
        self.clocks = clocks
        self.queue = queue
    }

    /// Wires in who hears of a merge, once, before the folder is followed: the daemon that
    /// hears it holds this merge, so it cannot come through `init`.
    func connect(merged: @escaping (_ folded: [Int64: Int64]) -> Void) {
        precondition(self.merged == nil, "SyncMerge was connected twice")
        self.merged = merged
    }

    var isConnected: Bool { merged != nil }

    /// Follows the folder in force: a new one is watched, its history restored from what the
    /// database keeps for it and its journals read from the kept positions (from their start for
    /// a folder not merged here before).
    func follow(_ directory: String?) {
        // Sync off: enabling it again reads every journal anew (changes made meanwhile went to no journal).
        if directory == nil { forget() }
        guard directory != folder else { return }
        watch?.close()
        watch = nil
        folder = directory
        let restored = restore()
        guard let directory else { return }
        let own = journal.device
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE)
        do {
            watch = try DirectoryWatch(
                directory: directory, mask: mask, queue: queue,
                matching: { name in
                    let text = String(decoding: name, as: UTF8.self)
                    return JournalReader.device(ofFileName: text).map { $0 != own } ?? false
                },
                changed: { [unowned self] in self.merge() })
        } catch {
            Log.error("Cannot watch the sync folder \(directory) (\(error)); other devices' changes are merged at the next start.")
        }
        let read = linesRead
        merge()
        Log.info(
            "Sync: merging the journals of \(directory): \(restored) registers restored from the database, \(linesRead - read) lines read.",
            fields: [("EVENT", "sync_merge_started"), ("REGISTERS", "\(restored)"), ("LINES", "\(linesRead - read)")])
    }

    /// The history and reading positions the database keeps for the folder (none for a folder
    /// not merged here before: its journals are read from their start); how many registers.
    /// A session in the database comes back from its row, with no line to read again.
    @discardableResult
    private func restore() -> Int {
        history = History()
        cursors = [:]
        unsaved = HistoryChanges()
        notYet = [:]
        ownStamps = [:]
        defer { armNotYet() }
        guard let folder else { return 0 }
        let own = journal.device
        var restored = History()
        // The latest reading of another device: this device's clock stamps its next change later.
        var latest = HLC.zero
        let now = clocks.wall
        func apply(_ entry: JournalEntry) {
            restored.apply(entry)
            guard entry.device != own else { return }
            if latest < entry.hlc { latest = entry.hlc }
            noteStamp(entry)
        }
        do {
            // Room made first: growing by doubling moved every register again (a quarter of a
            // 100 000-session restore's perf samples).
            restored.reserveCapacity(sessions: try store.keptSessionCount())
            guard
                let state = try store.restoreMergeState(
                    folder: folder, device: own,
                    session: { session, version in
                        apply(JournalEntry(device: version.device, hlc: version.hlc, change: .sessionRecorded(session)))
                    })
            else { return 0 }
            for line in state.lines {
                let entry = try JournalEntry.parse(Array(line.utf8))
                apply(entry)
                // A session kept by its line is not in the database: one the rules take, now or once
                // its time comes (its device's clock ahead), is taken by the next merge from then.
                if case .sessionRecorded(let s) = entry.change, let due = Self.takable(s.work, now: now) { notYet[s.id] = due }
            }
            history = restored
            cursors = state.cursors
            journal.observe(latest, now: clocks.wall)
            return state.sessions + state.lines.count
        } catch {
            // A line kept by another version of diligence, or a database that cannot be read:
            // reading every journal again is always safe.
            Log.warning("Sync: what the merge reached cannot be restored (\(error)); reading the journals anew.")
            return 0
        }
    }

    /// Drops what the merge kept, when anything is kept.
    private func forget() {
        do {
            if try store.syncSetting(.merged) != nil { try store.forgetMergeState() }
        } catch {
            Log.error("Sync: what the merge reached cannot be dropped (\(error.message)).")
        }
    }

    func close() {
        watch?.close()
        watch = nil
        notYetTimer?.cancel()
        notYetTimer = nil
    }

    /// Reads what the journals hold past the cursors and, when it changed the history, makes
    /// the database show it.
    func merge() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let folder else { return }
        let now = clocks.wall
        journal.write(now: now)
        do {
            // Nor while another machine writes this device's journal: its lines are not this device's.
            guard journal.shared == nil, try store.journalBacklog() == 0 else {
                if !heldBack { Log.warning("Sync: not merging while this device's own changes wait for its journal.") }
                heldBack = true
                return
            }
            heldBack = false
            let reached = cursors
            lineOf = LinePlaces()
            defer { lineOf = LinePlaces() }
            var touched = try readJournals(folder, now: now)
            // Sessions whose time came (`notYet`) are projected with what the lines touched.
            let due = Set(notYet.filter { $0.value <= now }.keys)
            if !due.isEmpty {
                var more = touched ?? Touched(everything: false)
                more.sessions.formUnion(due)
                touched = more
            }
            defer { armNotYet() }
            guard touched != nil || cursors != reached else { return }
            folded = [:]
            try store.mergeTransaction { () throws(DiligenceError) in
                var absent: Set<String> = []
                if let touched { absent = try project(touched) }
                try keep(folder, absent: absent)
            }
            unsaved = HistoryChanges()
            if touched != nil {
                guard let merged else { preconditionFailure("SyncMerge.connect(merged:) was never called") }
                merged(folded)
            }
        } catch {
            Log.error("Sync: merging failed (\(error.message)); tried again at the next change of the folder.")
            // Back to what the database kept: the lines read since are read again.
            restore()
        }
    }

    /// Keeps how far the journals were read and the registers changed since the last time, in
    /// the merge's transaction. `absent`: the history's sessions the database does not show
    /// (their task not live, or refused here): each keeps a line holding its register.
    private func keep(_ folder: String, absent: Set<String>) throws(DiligenceError) {
        let held = absent.compactMap { id -> (KeptSession, line: String)? in
            guard let register = history.session(id) else { return nil }
            let version = register.version
            return (
                KeptSession(register), JournalEntry(device: version.device, hlc: version.hlc, change: .sessionRecorded(register.value)).line
            )
        }
        try store.saveMergeState(folder: folder, cursors: cursors, sessions: unsaved.sessions, held: held, lines: unsaved.lines)
    }

    /// Applies the new complete lines of every journal (read again while a read brought lines:
    /// one read takes at most `JournalReader.maxReadBytes`); what they changed, nil for nothing.
    private func readJournals(_ folder: String, now: Double) throws(DiligenceError) -> Touched? {
        let place = JournalFolder(directory: folder, device: journal.device)
        var changed = false
        var touched = Touched(everything: history.knownTaskIDs.isEmpty)
        var problems: [JournalProblem] = []
        var more = true
        while more {
            var batches: [(device: String, batch: JournalBatch)] = []
            if let own = try? JournalReader.read(path: place.ownPath, device: journal.device, from: cursors[journal.device] ?? .start) {
                cursors[journal.device] = own.cursor
                batches.append((journal.device, own))
            }
            var others = cursors
            let read = place.readOthers(cursors: &others)
            cursors = others
            batches += read.batches
            problems += read.problems
            noteSkipped(read.skipped)
            more = false
            for (device, batch) in batches {
                problems += batch.problems
                linesRead += batch.entries.count + batch.problems.count
                if !batch.entries.isEmpty { more = true }
                // Room for a batch of session lines at once: growing by doubling moved every
                // register again (8 % of a 100 000-session merge's perf samples, 4 % for the set).
                history.reserveCapacity(sessions: batch.entries.count)
                touched.sessions.reserveCapacity(touched.sessions.count + batch.entries.count)
                let path = place.path(of: device)
                for (line, entry) in batch.entries {
                    if device != journal.device {
                        journal.observe(entry.hlc, now: now)
                        noteStamp(entry)
                    }
                    if history.apply(entry) {
                        changed = true
                        touched.note(entry.change)
                        unsaved.note(entry, in: history)
                        switch entry.change {
                        case .sessionRecorded(let s), .sessionEdited(let s): lineOf.note(s.id, journal: path, line: line)
                        case .planSet(let day, _): lineOf.note(LinePlaces.plan(day), journal: path, line: line)
                        default: break
                        }
                    }
                }
            }
        }
        for problem in problems {
            Log.warning("Sync: \(problem); skipped.", fields: [("EVENT", "sync_line_skipped")])
        }
        logSkew(now: now)
        return changed ? touched : nil
    }

    /// Logs each journal name that is not a regular file once (again only once it was one in
    /// between, or became something else).
    private func noteSkipped(_ skipped: [FileError]) {
        var now: [String: FileKind] = [:]
        for file in skipped {
            guard case .notRegular(let kind) = file.problem else { continue }
            now[file.path] = kind
            if skippedFiles[file.path] != kind {
                Log.warning(
                    "Sync: \(file.description); it is skipped (not read, not waited on, not followed) until a journal is there.",
                    fields: [("EVENT", "sync_file_skipped"), ("CODE", DiligenceError.Code.notARegularFile.rawValue)])
            }
        }
        skippedFiles = now
    }
}

// MARK: Clocks that are wrong (docs/sync.md)

extension SyncMerge {
    /// When another device's session `s` may be taken by the rules of a session, whose only
    /// bound that moves is its end at most a day after now (`DateWindow.sessionLead`; a session
    /// of a device whose clock is ahead ends later): the wall time a day before it ends, which
    /// may have passed. Nil for a session another rule refuses.
    static func takable(_ s: WorkSession, now: Double) -> Double? {
        let window = DateWindow.sessions(now: now)
        let latest = max(s.start, s.end, window.upperBound)
        guard SessionRules.problem(with: s, window: window.lowerBound...latest) == nil else { return nil }
        return max(s.start, s.end) - DateWindow.sessionLead
    }

    /// Keeps the reading of `entry` when its device stamped it from its own wall clock.
    private func noteStamp(_ entry: JournalEntry) {
        guard entry.hlc.counter == 0, ownStamps[entry.device].map({ $0 < entry.hlc.millis }) ?? true else { return }
        ownStamps[entry.device] = entry.hlc.millis
    }

    /// How far ahead of this device's clock (at `now`) `device`'s clock is, by its latest own
    /// stamp; nil within `reportedSkewMillis`.
    func clockAhead(of device: String, now: Double) -> Int64? {
        guard let stamp = ownStamps[device], let ahead = HybridClock.aheadMillis(of: HLC(millis: stamp, counter: 0), now: now),
            ahead > Self.reportedSkewMillis
        else { return nil }
        return ahead
    }

    /// Logs, once per device and run, each device whose clock is ahead of this one's.
    private func logSkew(now: Double) {
        for device in ownStamps.keys.sorted() where !skewLogged.contains(device) {
            guard let ahead = clockAhead(of: device, now: now) else { continue }
            skewLogged.insert(device)
            let name = history.deviceNames[device].map { "\($0) (\(device))" } ?? device
            let aheadText = DurationText.format(Int(ahead / 1000))
            let bound = DurationText.format(Int(HybridClock.maxDriftMillis / 1000))
            let effect =
                ahead <= HybridClock.maxDriftMillis
                ? "a change made here after reading its changes still wins over them (clocks up to \(bound) ahead are followed)"
                : "that is more than the \(bound) this device's clock follows: its changes win over changes made here until this clock reaches their time"
            Log.warning(
                "Sync: the clock of device \(name) is \(aheadText) ahead of this device's; \(effect); its sessions ending more than a day ahead are taken once they end less than a day ahead. Set that machine's clock right.",
                fields: [("EVENT", "sync_clock_ahead"), ("DEVICE", device), ("AHEAD_SECONDS", "\(ahead / 1000)")])
        }
    }

    /// Arms the timer at the earliest session of `notYet` (a wall-clock timer: a clock set
    /// forward fires it at once); none while nothing waits.
    private func armNotYet() {
        guard let due = notYet.values.min() else {
            notYetTimer?.cancel()
            notYetTimer = nil
            return
        }
        if notYetTimer == nil {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { [unowned self] in self.merge() }
            timer.activate()
            notYetTimer = timer
        }
        // A second past it: the rule compares with the clock read when the merge runs.
        notYetTimer?.schedule(wallDeadline: .now() + max(0, due - clocks.wall) + 1, leeway: .seconds(1))
    }
}

// MARK: The devices

extension SyncMerge {
    /// The devices `--device` can name and `sync status` lists: this one first, then by id
    /// those whose sessions are recorded here (`recorded`), those the merged history holds lines
    /// of (`heard`) or a name of; each with its latest name (this one's: `SyncJournal.name()`).
    func knownDevices(recorded: some Sequence<String>, heard: some Sequence<String> = []) -> [KnownDevice] {
        let names = history.deviceNames
        let others = Set(names.keys).union(recorded).union(heard).subtracting([journal.device])
        return [KnownDevice(id: journal.device, name: journal.name(), isThis: true)]
            + others.sorted().map { KnownDevice(id: $0, name: names[$0], isThis: false) }
    }

    /// `sync status`'s `devices`: this one first, then the others by id; each with its name,
    /// the sessions it recorded that are here and the time of its latest line the merged
    /// history holds (null: none).
    func devicesJSON() throws(DiligenceError) -> JSON {
        let counts = try store.sessionsByDevice()
        let heard = history.latestReadings()
        let devices = knownDevices(recorded: counts.keys.compactMap { $0 }, heard: heard.keys)
        let now = clocks.wall
        return .array(
            devices.map { device in
                let key: String? = device.isThis ? nil : device.id
                let ahead = device.isThis ? nil : clockAhead(of: device.id, now: now)
                return .object([
                    ("id", .string(device.id)), ("name", .string(device.name)), ("this", .bool(device.isThis)),
                    ("sessions", .int(counts[key] ?? 0)),
                    ("last_line", .string(heard[device.id].map { RFC3339.format(Double($0.millis) / 1000) })),
                    ("clock_ahead_seconds", ahead.map { .int(Int($0 / 1000)) } ?? .null),
                ])
            })
    }
}

/// Where a merge read the line that last set each session (by its id) or day's plan (`plan(_:)`)
/// it changed (journal, line number). Noted in order, and looked up only once one is refused: a
/// dictionary of 100 000 places filled as the lines were read took 5 % of a merge's perf samples.
struct LinePlaces {
    private var noted: [(key: String, journal: String, line: Int)] = []
    private var byKey: [String: (journal: String, line: Int)]?

    /// The key of a day's plan.
    static func plan(_ day: CalendarDay) -> String { "plan \(day)" }

    mutating func note(_ key: String, journal: String, line: Int) {
        noted.append((key, journal, line))
        byKey = nil
    }

    /// Where the line that last set `key` was read; nil when no line of this merge did.
    mutating func place(of key: String) -> (journal: String, line: Int)? {
        if byKey == nil {
            var places: [String: (journal: String, line: Int)] = [:]
            // In reading order: the line read last is the one that set it.
            for place in noted { places[place.key] = (place.journal, place.line) }
            byKey = places
        }
        return byKey?[key]
    }

    /// `journal:line: ` of `key`'s line, else `otherwise`.
    mutating func prefix(of key: String, otherwise: String) -> String {
        place(of: key).map { "\($0.journal):\($0.line): " } ?? otherwise
    }
}

/// What a merge's lines changed: a task (everything is projected again: the tasks' identity may
/// have moved), or only these sessions and days.
struct Touched {
    var everything: Bool
    var sessions: Set<String> = []
    var days: Set<CalendarDay> = []

    mutating func note(_ change: JournalChange) {
        switch change {
        case .sessionRecorded(let s), .sessionEdited(let s): sessions.insert(s.id)
        case .sessionRemoved(let id): sessions.insert(id)
        case .planSet(let day, _), .planCleared(let day): days.insert(day)
        case .taskAdded, .taskEdited, .taskArchived, .taskRemoved: everything = true
        // A name is not in the database: the history holds it (`History.deviceNames`).
        case .deviceNamed: break
        }
    }
}

// MARK: Making the database show the history

extension SyncMerge {
    /// The database made to show the history's live tasks, sessions and plans (what no journal
    /// line named is left as it is).
    /// Only what `touched` names, unless a task changed (a line about one session costs a
    /// lookup of that session, not a pass over the history).
    /// Returns the sessions the database does not show that this merge changed or took out of it.
    private func project(_ touched: Touched) throws(DiligenceError) -> Set<String> {
        let (tasks, identity) = history.liveTasks()
        let liveIDs = Set(tasks.map(\.id))
        let rowOf = touched.everything ? try projectTasks(tasks) : try rows(of: tasks)
        // For what the recorder says of a session it refuses.
        let names = Dictionary(tasks.map { ($0.id, $0.config.name) }, uniquingKeysWith: { a, _ in a })
        let absent: Set<String>
        if touched.everything {
            absent = try projectSessions(
                history.liveSessions(identity: identity, liveTaskIDs: liveIDs), rowOf: rowOf,
                existing: try store.syncedSessionRows(device: journal.device), known: history.knownSessionIDs, changed: touched.sessions,
                names: names)
        } else {
            absent = try projectSessions(
                touched.sessions.compactMap { history.liveSession($0, identity: identity, liveTaskIDs: liveIDs) }, rowOf: rowOf,
                existing: try store.syncedSessionRows(device: journal.device, uuids: touched.sessions), known: touched.sessions,
                changed: touched.sessions, names: names)
        }
        let plans = Dictionary(
            history.livePlans(identity: identity, liveTaskIDs: liveIDs).map { ($0.day, $0.task) }, uniquingKeysWith: { a, _ in a })
        let today = today()
        for day in touched.everything ? history.plannedDays : Array(touched.days) {
            if let task = plans[day], let row = rowOf[task] {
                // The plan command's rule: a day outside the dates diligence keeps is refused.
                guard DateWindow.contains(day, today: today) else {
                    let place = lineOf.prefix(of: LinePlaces.plan(day), otherwise: "")
                    Log.warning(
                        "Sync: \(place)the plan of \(day) is refused here: it is outside the dates diligence keeps, "
                            + "\(DateWindow.description(today: today)).", fields: [("EVENT", "sync_line_skipped")])
                    continue
                }
                try store.setPlan(day: day, taskID: row)
            } else {
                try store.clearPlan(day: day)
            }
        }
        return absent
    }

    /// Each live task on one row (the row of one of its members, else a new one), rows of
    /// removed tasks deleted; returns the row of each live task's id.
    private func projectTasks(_ tasks: [History.Task]) throws(DiligenceError) -> [String: Int64] {
        // Rows of removed tasks go first, and rows whose name changes step aside: a name a task
        // takes may be held by a row that is deleted or renamed later in this pass.
        let live = Set(tasks.flatMap(\.members))
        let known = history.knownTaskIDs
        for row in try store.tasks() where known.contains(row.uuid) && !live.contains(row.uuid) {
            try store.deleteSyncedTask(id: row.id)
        }
        try stepAside(tasks)
        let rows = try store.tasks()
        let byUUID = Dictionary(rows.map { ($0.uuid, $0) }, uniquingKeysWith: { a, _ in a })
        var rowOf: [String: Int64] = [:]
        for task in tasks {
            let present = task.members.compactMap { byUUID[$0] }
            guard let keep = present.first(where: { $0.uuid == task.id }) ?? present.first else {
                var config = task.config
                config.archived = task.archived
                do { rowOf[task.id] = try store.addSyncedTask(config).id } catch {
                    Log.error("Sync: the task \(config.name) of another device cannot be added here: \(error.message)")
                }
                continue
            }
            for other in present where other.id != keep.id {
                try store.moveSyncedTask(from: other.id, to: keep.id)
                try store.deleteSyncedTask(id: other.id)
                folded[other.id] = keep.id
            }
            rowOf[task.id] = keep.id
            let shown = Self.adopt(task.config, into: keep)
            do {
                if shown != keep { _ = try store.updateTask(shown) }
                if keep.archived != task.archived { _ = try store.setArchived(id: keep.id, task.archived) }
            } catch {
                Log.error("Sync: the task \(keep.name) cannot take another device's edit here: \(error.message)")
            }
        }
        return rowOf
    }

    /// Each row whose task the history shows under another name takes a name no task has (its
    /// id) until `projectTasks` gives it its own: numbered names shift between rows when a
    /// task of lesser id takes a shared name, and no rename may meet a name a row still holds.
    private func stepAside(_ tasks: [History.Task]) throws(DiligenceError) {
        let byUUID = Dictionary(try store.tasks().map { ($0.uuid, $0) }, uniquingKeysWith: { a, _ in a })
        for task in tasks {
            for member in task.members {
                guard var row = byUUID[member], row.name != task.config.name, row.name != row.uuid else { continue }
                row.name = row.uuid
                _ = try store.updateTask(row)
            }
        }
    }

    /// The row of each live task, as `projectTasks` left them.
    private func rows(of tasks: [History.Task]) throws(DiligenceError) -> [String: Int64] {
        let byUUID = Dictionary(try store.tasks().map { ($0.uuid, $0.id) }, uniquingKeysWith: { a, _ in a })
        var rowOf: [String: Int64] = [:]
        for task in tasks { rowOf[task.id] = byUUID[task.id] ?? task.members.lazy.compactMap { byUUID[$0] }.first }
        return rowOf
    }

    /// `local` with the settings a journal carries taken from `synced` (the others, such as
    /// the away policy and do not disturb, are this device's own).
    static func adopt(_ synced: TaskConfig, into local: TaskConfig) -> TaskConfig {
        var task = local
        task.name = synced.name
        task.description = synced.description
        task.color = synced.color
        task.workSeconds = synced.workSeconds
        task.shortBreakSeconds = synced.shortBreakSeconds
        task.longBreakSeconds = synced.longBreakSeconds
        task.longBreakEvery = synced.longBreakEvery
        task.breaks = synced.breaks
        task.autostart = synced.autostart
        task.focusMode = synced.focusMode
        task.goal = synced.goal
        task.reminderMinute = synced.reminderMinute
        task.sound = synced.sound
        return task
    }

    /// The live sessions written (other devices' through the recorder's door as `sync`),
    /// changed ones rewritten, removed ones deleted; returns those of `known` the database does
    /// not show (not live, their task not here, or refused) that were in it or are `changed`.
    private func projectSessions(
        _ live: [History.Session], rowOf: [String: Int64], existing: [String: (id: Int64, taskRow: Int64, session: SyncedSession)],
        known: Set<String>, changed: Set<String>, names: [String: String]
    ) throws(DiligenceError) -> Set<String> {
        let own = journal.device
        var liveIDs: Set<String> = []
        liveIDs.reserveCapacity(live.count)
        var absent: Set<String> = []
        var new: [WorkSession] = []
        for item in live {
            let s = item.session
            guard let row = rowOf[item.task] else { continue }
            liveIDs.insert(s.id)
            if let have = existing[s.id] {
                var mine = have.session
                mine.task = s.task
                if have.taskRow != row || mine != s { try store.updateSyncedSession(id: have.id, taskRow: row, s, ownDevice: own) }
            } else {
                var session = s.work
                session.taskID = row
                session.taskName = names[item.task] ?? ""
                // This device's own sessions have no device (`sessions.device`), whatever journal held them.
                session.device = s.device == own ? nil : s.device
                new.append(session)
            }
        }
        for id in known where !liveIDs.contains(id) {
            if let have = existing[id] {
                try store.deleteSession(id: have.id)
                absent.insert(id)
            } else if changed.contains(id) {
                absent.insert(id)
            }
        }
        // One batch, each session written with its device.
        let admission = try recorder.admit(new, source: .sync, mode: .whatPasses)
        for id in changed { notYet[id] = nil }
        let now = clocks.wall
        for (index, error) in admission.refused {
            let id = new[index].uuid
            absent.insert(id)
            if let due = Self.takable(new[index], now: now), due > now {
                // Not refused for good: taken at the next merge from `due` on.
                if notYet.updateValue(due, forKey: id) == nil, changed.contains(id) {
                    let place = lineOf.prefix(of: id, otherwise: "device \(new[index].device ?? ""): ")
                    Log.info(
                        "Sync: \(place)the session \(id) ends more than a day after this device's clock (its device's clock is ahead); it is taken from \(RFC3339.format(due)).",
                        fields: [("EVENT", "sync_session_waits")])
                }
                continue
            }
            // Logged when its line is read; not again each time the tasks are projected anew.
            guard changed.contains(id) else { continue }
            let place = lineOf.prefix(of: id, otherwise: "device \(new[index].device ?? ""): ")
            Log.warning("Sync: \(place)the session \(id) is refused here: \(error.message)", fields: [("EVENT", "sync_line_skipped")])
        }
        return absent
    }
}
