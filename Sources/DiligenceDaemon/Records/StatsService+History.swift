import CLinux
import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceStore
import DiligenceTime

// The recorded history: listing, sessions entered by hand, corrections, export and import.

extension StatsService {
    // MARK: history

    /// `--device` (docs/sync.md, "Reports by device"): `this`, a device's name or the
    /// beginning of its id, among the devices known here (`DeviceFilter.resolve`).
    func deviceFilter(_ text: String?) throws(DiligenceError) -> DeviceFilter? {
        guard let text else { return nil }
        return try DeviceFilter.resolve(text) { () throws(DiligenceError) in devices(Set(try store.otherDevices())) }
    }

    /// The name of the device that recorded each of `sessions` (`history`, exports), by the
    /// session's `device` (nil: this device's own, under its own name).
    func deviceNames(of sessions: [WorkSession]) -> [String?: String] {
        var names: [String?: String] = [:]
        for device in devices(Set(sessions.compactMap(\.device))) {
            if let name = device.name { names[device.isThis ? nil : device.id] = name }
        }
        return names
    }

    /// `since`/`until`: a day (its whole statistics day; `until` includes it) or a moment
    /// (`DateText.bound`).
    private func timeBound(_ text: String?, _ key: String, endOfDay: Bool) throws(DiligenceError) -> Double? {
        guard let text else { return nil }
        let today = today(at: clocks.now)
        let wall: Double
        do {
            wall = try DateText.bound(text, endOfDay: endOfDay, today: today, dayStartsAt: dayStartsAt)
        } catch {
            throw DiligenceError(DiligenceError.Code(error.code), "\"\(key)\": \(error.message)")
        }
        let day = DateText.day(text, today: today.date) ?? LocalDay.date(containing: wall, dayStartsAt: dayStartsAt)
        guard DateWindow.contains(day, today: today.date) else { throw outsideWindow(key, text) }
        return wall
    }

    /// `since` and `until` as bounds; a range that holds no time (since at or after until) is
    /// refused: answered with nothing, it would read as no session recorded.
    private func timeRange(_ since: String?, _ until: String?) throws(DiligenceError) -> (from: Double?, to: Double?) {
        let from = try timeBound(since, "since", endOfDay: false)
        let to = try timeBound(until, "until", endOfDay: true)
        if let from, let to, let since, let until, from >= to {
            throw DiligenceError(
                .invertedRange,
                "\"since\" (\(since), \(RFC3339.format(from))) is not before \"until\" (\(until), \(RFC3339.format(to))): the range holds no time; swap them?"
            )
        }
        return (from, to)
    }

    func history(task name: String?, since: String?, until: String?, limit: Int?, device: DeviceFilter?) throws(DiligenceError) -> JSON {
        let task = try name.map { name throws(DiligenceError) in try store.findTask(name) }
        let range = try timeRange(since, until)
        let sessions = try store.history(taskID: task?.id, device: device, from: range.from, to: range.to, limit: limit)
        let names = deviceNames(of: sessions)
        return .object([("sessions", .array(sessions.map { $0.json(deviceName: names[$0.device] ?? nil) }))])
    }

    /// What a streamed `history` reads, checked on the daemon's queue and read off it.
    struct HistoryPlan: Sendable {
        var taskID: Int64?
        var device: DeviceFilter?
        var from: Double?
        var to: Double?
        var limit: Int?
        /// Every known device's name (this one's under nil).
        var deviceNames: [String?: String]
    }

    func historyPlan(_ command: ControlCommand) throws(DiligenceError) -> HistoryPlan {
        guard case .history(let name, let since, let until, let limit, let device, _) = command else {
            throw DiligenceError(.invalidArgument, "Not a history: \(command).")
        }
        let filter = try deviceFilter(device)
        let task = try name.map { name throws(DiligenceError) in try store.findTask(name) }
        let range = try timeRange(since, until)
        var names: [String?: String] = [:]
        for known in devices([]) {
            if let name = known.name { names[known.isThis ? nil : known.id] = name }
        }
        return HistoryPlan(taskID: task?.id, device: filter, from: range.from, to: range.to, limit: limit, deviceNames: names)
    }

    /// Sessions of the first page of a streamed history: small, so its first line is out at once.
    static let firstHistoryPage = 100

    /// The history `plan` asks for, read from `store` in one read transaction, page by page:
    /// `piece` gets a line per session (`{"session":…,"id":…}`, `id` the request's), false
    /// from it stops (the client is gone). Returns the count sent, nil when stopped.
    static func streamHistory(
        _ plan: HistoryPlan, from store: Store, id: JSON?, piece: (String) -> Bool
    ) throws(DiligenceError) -> Int? {
        try store.reading { () throws(DiligenceError) -> Int? in
            // The newest `limit`, oldest first: from the limit-th newest on ((start, id) > (s, id - 1)).
            var after = try plan.limit.flatMap { n throws(DiligenceError) in
                try store.latest(n, taskID: plan.taskID, device: plan.device, from: plan.from, to: plan.to)
            }.map { (start: $0.start, id: $0.id - 1) }
            let tail = id.map { #","id":"# + $0.serialized + "}\n" } ?? "}\n"
            var count = 0
            var size = firstHistoryPage
            while true {
                let page = try store.sessions(
                    taskID: plan.taskID, device: plan.device, from: plan.from, to: plan.to, after: after, limit: size)
                var text = ""
                for session in page {
                    text += #"{"session":"#
                    session.json(deviceName: plan.deviceNames[session.device] ?? nil).write(to: &text)
                    text += tail
                }
                count += page.count
                guard piece(text) else { return nil }
                guard page.count == size, let last = page.last else { return count }
                after = (last.start, last.id)
                size = exportPage
            }
        }
    }

    /// A moment (`DateText.moment`): `HH:MM` is the moment of `day`'s statistics day that reads
    /// so (today's unless given), `now` this moment.
    private func moment(_ text: String, _ key: String, day: StatisticsDay? = nil) throws(DiligenceError) -> Double {
        do {
            let now = clocks.now
            return try DateText.moment(text, today: day ?? today(at: now), dayStartsAt: dayStartsAt, now: now.wall)
        } catch {
            throw DiligenceError(DiligenceError.Code(error.code), "\"\(key)\": \(error.message)")
        }
    }

    /// `history add`: a completed session whose focused and planned time is its length, through
    /// the one door (`Store.admit`) like every other session.
    func addSession(task name: String, start startText: String, end endText: String, pauses: Int) throws(DiligenceError) -> JSON {
        let task = try store.findTask(name)
        let start = try moment(startText, "start")
        let end = try moment(endText, "end")
        try checkHappened(end)
        let seconds = Int(saturating: (end - start).rounded())
        let session = WorkSession(
            taskID: task.id, taskName: task.name, start: start, end: end,
            plannedSeconds: seconds, focusedSeconds: seconds, pauses: pauses, outcome: .completed)
        let admission = try recorder.admit([session], source: .manual, reserved: runningWork(clocks.now), mode: .allOrNothing)
        if let refusal = admission.refused.first { throw refusal.error }
        guard let id = admission.recorded[0] else {
            let existing = admission.alreadyRecorded[0]
            throw DiligenceError(.overlappingSession, "This session is recorded already\(existing.map { " (session \($0))" } ?? "").")
        }
        Log.info("Added a session of \(task.name) by hand.", fields: [("EVENT", "session_added"), ("TASK", task.name)])
        var added = session
        added.id = id
        added.uuid = admission.uuids[0] ?? ""
        return added.json
    }

    /// What a person enters by hand has happened (`history add`, `history edit`): a rule of
    /// these requests, stricter than the session rules' window (which leaves a day for clocks
    /// that differ between machines).
    private func checkHappened(_ end: Double) throws(DiligenceError) {
        guard end <= clocks.now.wall + 60 else {
            throw DiligenceError(
                .invalidSession, "The session ends in the future (\(RFC3339.format(end))); enter sessions that have happened.")
        }
    }

    /// `history edit`: the session with a new task, start, end or note, through the same door
    /// and rules as `history add` (`Store.replaceSession`: the session rules, no overlap with
    /// another session or the running work). A new span keeps the focused and planned time
    /// that filled the old one (a session entered by hand: its length) and cuts the rest to it.
    func editSession(id: Int64, _ changes: SessionChanges) throws(DiligenceError) -> WorkSession {
        guard !changes.isEmpty else {
            throw DiligenceError(
                .missingArgument, "Nothing to change: give task, start, end or note (diligencectl: --task, --start, --end, --note).")
        }
        let old = try store.session(id: id)
        var edited = old
        if let name = changes.task {
            let task = try store.findTask(name)
            edited.taskID = task.id
            edited.taskName = task.name
        }
        // A time alone is of the session's own day: `--start 10:00` on yesterday's session is yesterday's 10:00.
        let day = LocalDay.day(containing: old.start, dayStartsAt: dayStartsAt)
        if let text = changes.start { edited.start = try moment(text, "start", day: day) }
        if let text = changes.end { edited.end = try moment(text, "end", day: day) }
        if let note = changes.note { edited.note = note.isEmpty ? nil : note }
        if changes.start != nil || changes.end != nil {
            try checkHappened(edited.end)
            let oldLength = Int(saturating: (old.end - old.start).rounded())
            let newLength = Int(saturating: (edited.end - edited.start).rounded())
            func follow(_ seconds: Int) -> Int { seconds == oldLength ? newLength : min(seconds, max(0, newLength)) }
            edited.focusedSeconds = follow(old.focusedSeconds)
            edited.plannedSeconds = old.plannedSeconds == oldLength ? max(1, newLength) : old.plannedSeconds
            edited.segments = Self.segments(of: old, editedTo: edited)
        }
        let changed = try recorder.replace(id, with: edited, reserved: runningWork(clocks.now))
        Log.info("Edited session \(id) of \(changed.taskName).", fields: [("EVENT", "session_edited"), ("TASK", changed.taskName)])
        return changed
    }

    /// The focus segments of `old` edited to `edited`'s span and focus: moved with a session
    /// moved as a whole, else fitted to the new span (`FocusSegment.fit`, docs/protocol.md).
    static func segments(of old: WorkSession, editedTo edited: WorkSession) -> [FocusSegment] {
        let shift = edited.start - old.start
        if abs((edited.end - old.end) - shift) < 1, edited.focusedSeconds == old.focusedSeconds {
            return old.segments.map { FocusSegment(start: $0.start + shift, seconds: $0.seconds) }
        }
        return FocusSegment.fit(old.segments, start: edited.start, end: edited.end, focused: edited.focusedSeconds)
    }

    // MARK: export and import

    /// What an export reads, checked on the queue (its task, bounds and device resolved), so
    /// that reading and writing it can run off the queue (`export(_:from:)`).
    struct ExportPlan: Sendable {
        var format: ExportFormat
        var taskID: Int64?
        var device: DeviceFilter?
        var from: Double?
        var to: Double?
        var withTasks: Bool
        /// ics: one event per focus segment.
        var segments = false
        var stamp: Double
        var lastPlannedDay: CalendarDay
        /// Every known device's name (this one's under nil).
        var deviceNames: [String?: String]
    }

    func exportPlan(
        format: ExportFormat, task name: String?, since: String?, until: String?, withTasks: Bool, device: DeviceFilter?
    ) throws(DiligenceError) -> ExportPlan {
        guard !withTasks || format == .jsonl else {
            throw DiligenceError(.invalidArgument, "\"with_tasks\" goes with the jsonl format only (what import reads).")
        }
        let task = try name.map { name throws(DiligenceError) in try store.findTask(name) }
        var names: [String?: String] = [:]
        for known in devices([]) {
            if let name = known.name { names[known.isThis ? nil : known.id] = name }
        }
        let range = try timeRange(since, until)
        return ExportPlan(
            format: format, taskID: task?.id, device: device, from: range.from, to: range.to, withTasks: withTasks, stamp: clocks.now.wall,
            lastPlannedDay: DateWindow.lastDay(today: todayDate), deviceNames: names)
    }

    /// The export `plan` asks for as one answer (a database in memory, which has no second
    /// connection to stream it from).
    static func export(_ plan: ExportPlan, from store: Store) throws(DiligenceError) -> JSON {
        var count = 0
        var content = ""
        try export(
            plan, from: store,
            started: {
                count = $0
                return true
            },
            piece: {
                content += $0
                return true
            })
        return .object([("format", .string(plan.format.rawValue)), ("count", .int(count)), ("content", .string(content))])
    }

    /// Sessions read per page of an export: a bounded slice of the rows in memory at a time.
    static let exportPage = 2000

    /// The export `plan` asks for, read from `store` in one read transaction and handed over as
    /// it is read: `started` gets the sessions' count (the answer says it before the content),
    /// `piece` the content in pieces (the setup lines and the format's head with the first page,
    /// then a page of sessions each, the tail with the last); either returning false stops it
    /// (the client is gone). The daemon runs it off its queue, on a connection of its own, and
    /// sends the pieces as the client takes them (`serveExport`): on the queue,
    /// whole, it held every request and phase end for as long as it took, and held the whole
    /// answer in memory (docs/performance.md).
    static func export(
        _ plan: ExportPlan, from store: Store, started: (Int) -> Bool, piece: (String) -> Bool
    ) throws(DiligenceError) {
        try store.reading { () throws(DiligenceError) in
            guard started(try store.sessionCount(taskID: plan.taskID, device: plan.device, from: plan.from, to: plan.to)) else { return }
            var text = plan.format.head + (plan.withTasks ? try setupLines(store, through: plan.lastPlannedDay) : "")
            var after: (start: Double, id: Int64)?
            while true {
                let page = try store.sessions(
                    taskID: plan.taskID, device: plan.device, from: plan.from, to: plan.to, after: after, limit: exportPage)
                text += plan.format.body(page, stamp: plan.stamp, deviceNames: plan.deviceNames, segments: plan.segments)
                guard page.count == exportPage, let last = page.last else { break }
                guard piece(text) else { return }
                text = ""
                after = (last.start, last.id)
            }
            _ = piece(text + plan.format.tail)
        }
    }

    /// `export --with-tasks`: a line per task (`{"type":"task","task":{...}}`, the task object,
    /// archived ones too) and per planned day (`{"type":"plan","day":…,"task":NAME}`), before
    /// the sessions, so that an import creates the tasks its sessions name.
    private static func setupLines(_ store: Store, through last: CalendarDay) throws(DiligenceError) -> String {
        let tasks = try store.tasks()
        let names = Dictionary(tasks.map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a })
        var out = ""
        for task in tasks {
            JSON.object([("type", .string("task")), ("task", task.json)]).write(to: &out)
            out += "\n"
        }
        let plans = try store.plans(from: DateWindow.firstDay, through: last)
        for (day, id) in plans.sorted(by: { $0.key < $1.key }) {
            guard let name = names[id] else { continue }
            JSON.object([("type", .string("plan")), ("day", .string(day.description)), ("task", .string(name))]).write(to: &out)
            out += "\n"
        }
        return out
    }

    /// One chunk of a JSON-lines import: the first chunk has no `import_id`; `more: true` says
    /// another chunk follows (answer: `import_id`, `received`); the last one passes every
    /// session of every chunk through the one door at once and writes them all in one
    /// transaction (answer: `imported`, `skipped`), or none: every line that could not be read
    /// or that the session rules refuse is named in one `invalid_import`.
    func importChunk(content: String, importID: Int64?, more: Bool, replaceTasks: Bool) throws(DiligenceError) -> JSON {
        let id: Int64
        if let given = importID {
            id = given
        } else {
            id = store.beginImport()
        }
        let firstLine = try store.importNextLine(id)
        do throws(DiligenceError) {
            // The last chunk again after its commit found the database locked: staged already.
            var stagedAlready = false
            if importID != nil && !more { stagedAlready = try store.importIsCommitting(id) }
            if !stagedAlready {
                let chunk = try parseImport(content, firstLine: firstLine, staged: try store.importStagedTasks(id))
                try store.stageImportSetup(id, tasks: chunk.tasks, plans: chunk.plans)
                try store.stageImport(id, sessions: chunk.sessions, rejected: chunk.rejected, lines: chunk.lines)
                if more {
                    return .object([("import_id", .int(id)), ("received", .int(chunk.sessions.count))])
                }
            }
            let done = try recorder.commitImport(id, reserved: runningWork(clocks.now), replaceTasks: replaceTasks)
            Self.returnFreedMemory()
            Log.info(
                "Imported \(done.imported) sessions (\(done.skipped) already recorded), \(done.tasksAdded) tasks added, \(done.tasksReplaced) replaced, \(done.plansSet) plans set.",
                fields: [("EVENT", "imported")])
            if done.tasksAdded + done.tasksReplaced > 0 { tasksImported() }
            return .object([
                ("imported", .int(done.imported)), ("skipped", .int(done.skipped)), ("tasks_added", .int(done.tasksAdded)),
                ("tasks_replaced", .int(done.tasksReplaced)), ("plans_set", .int(done.plansSet)),
            ])
        } catch {
            // A locked database is waited for (`serve` sends the chunk again): keep what is staged.
            if error.code != .databaseLocked {
                store.discardImport()
                Self.returnFreedMemory()
            }
            throw error
        }
    }

    /// Gives the memory a large import staged back to the system: the daemon's one malloc arena
    /// keeps what is freed otherwise, and an import of 100 000 sessions would leave it some
    /// 30 MiB larger for good (docs/performance.md, memory).
    static func returnFreedMemory() {
        clinux_malloc_trim()
    }

    /// Reads JSON lines (what `export --format jsonl` writes), numbered from `firstLine`; blank
    /// lines are skipped. A line is a session of an existing task or of one defined earlier in
    /// the import (`staged`, or a task line before it), a task definition, or a plan; one that
    /// is none of these is returned with why. The session rules are the door's to apply, to
    /// every line of every chunk at once.
    private func parseImport(_ content: String, firstLine: Int, staged: [TaskConfig]) throws(DiligenceError) -> ImportChunk {
        var chunk = ImportChunk()
        var exact: [String: TaskConfig] = [:]
        var folded: [String: [TaskConfig]] = [:]
        func know(_ t: TaskConfig) {
            exact[t.name] = t
            folded[t.name.lowercased(), default: []].append(t)
        }
        try store.tasks().forEach(know)
        // A task defined by the import and not stored yet: its sessions carry its placeholder id.
        var placeholders = staged.count
        for t in staged where folded[t.name.lowercased()] == nil { know(t) }
        var number = firstLine - 1
        // One copy of the chunk into contiguous bytes, split by index: a String's UTF-8 view
        // is walked byte by byte, which showed up as a third of an import's time.
        let content = Array(content.utf8)
        var lines = content.split(separator: 0x0A, omittingEmptySubsequences: false)
        if content.last == 0x0A { lines.removeLast() }
        for line in lines {
            number += 1
            var bytes = line
            if bytes.last == 0x0D { bytes = bytes.dropLast() }
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            switch Self.importedLine(bytes, exact: exact, folded: folded) {
            case .success(.session(let session)): chunk.sessions.append((number, session))
            case .success(.task(var task)):
                placeholders += 1
                task.id = -Int64(placeholders)
                chunk.tasks.append(task)
                if folded[task.name.lowercased()] == nil { know(task) }
            case .success(.plan(let day, let name)): chunk.plans.append((number, day, name))
            case .failure(let problem): chunk.rejected.append((number, problem.message))
            }
        }
        chunk.lines = lines.count
        return chunk
    }

    /// What one chunk of an import holds.
    struct ImportChunk {
        var sessions: [(line: Int, session: WorkSession)] = []
        var rejected: [(line: Int, reason: String)] = []
        var tasks: [TaskConfig] = []
        var plans: [(line: Int, day: CalendarDay, task: String)] = []
        var lines = 0
    }

    enum ImportLine {
        case session(WorkSession)
        case task(TaskConfig)
        case plan(CalendarDay, String)
    }

    /// One line of an import: a session of a known task, a task definition, a plan; or why it
    /// is none of these.
    private static func importedLine(
        _ bytes: ArraySlice<UInt8>, exact: [String: TaskConfig],
        folded: [String: [TaskConfig]]
    ) -> Result<ImportLine, DiligenceError> {
        let json: JSON
        do { json = try JSON.parse(bytes) } catch { return .failure(DiligenceError(.invalidImport, "not JSON (\(error.message))")) }
        switch json["type"]?.stringValue {
        case "task"?:
            return TaskConfig.exported(json["task"] ?? .null).map(ImportLine.task)
        case "plan"?:
            guard let day = json["day"]?.stringValue.flatMap(CalendarDay.init), let name = json["task"]?.stringValue else {
                return .failure(DiligenceError(.invalidImport, "a plan line has a \"day\" (YYYY-MM-DD) and a \"task\""))
            }
            return .success(.plan(day, name))
        case let other?:
            return .failure(DiligenceError(.invalidImport, "unknown \"type\" \(other.debugDescription): a task, a plan, or a session"))
        case nil:
            break
        }
        return WorkSession.exported(json).flatMap { session in
            let name = session.taskName
            guard let task = exact[name] ?? folded[name.lowercased()].flatMap({ $0.count == 1 ? $0[0] : nil }) else {
                return .failure(
                    DiligenceError(
                        .invalidImport,
                        "no task named \(name.debugDescription) (add it first: diligencectl task add \(name.debugDescription), or export with --with-tasks)"
                    ))
            }
            var found = session
            found.taskID = task.id
            found.taskName = task.name
            return .success(.session(found))
        }
    }
}
