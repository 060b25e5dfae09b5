import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceStore
import Dispatch
import Synchronization

/// The control protocol's commands (docs/protocol.md), served on the daemon's queue.
extension Daemon {
    func handleLine(_ line: ArraySlice<UInt8>, from connection: ClientConnection) {
        let request: Request
        let command: ControlCommand
        do {
            switch Request.parse(line: line) {
            case .success(let r): request = r
            case .failure(let failure):
                Log.info(
                    "Refused a request: \(failure.error.message)", fields: [("EVENT", "refused"), ("CODE", failure.error.code.rawValue)])
                connection.send(Response.error(failure.error, id: failure.id))
                return
            }
            command = try ControlCommand(request)
        } catch {
            refuse(request, error, on: connection)
            return
        }
        serve(command, request, on: connection, until: .now() + Self.writeLockWait)
    }

    /// How long a command that writes waits for another process's lock on the database before
    /// it answers `database_locked`, and how often it tries meanwhile. It waits off the queue:
    /// its connection reads no further request until it is answered (answers keep their
    /// order), while every other client is served as usual (docs/reliability.md).
    static let writeLockWait = 2.0
    static let lockRetryInterval = 0.05

    /// Runs `command` and answers it; a write that finds the database locked by another process
    /// is tried again every `lockRetryInterval` until `deadline`.
    private func serve(_ command: ControlCommand, _ request: Request, on connection: ClientConnection, until deadline: DispatchTime) {
        // A copy of the whole database, and an export, are made off the queue.
        if case .backup(let path) = command { return backup(to: path, request, on: connection) }
        if case .timewarriorSync(let dryRun) = command { return timewarriorSync(dryRun: dryRun, request, on: connection) }
        // A database in memory (tests) has no second connection: its export runs here.
        if case .export = command, store.path != ":memory:" {
            serveExport(command, request, on: connection, database: store.path)
            return
        }
        if case .history(_, _, _, _, _, stream: true) = command { return serveHistoryStream(command, request, on: connection) }
        // The most frequent request: its object is kept encoded while it is unchanged.
        if command == .status {
            connection.send(statusAnswer(id: request.id, at: driver.observeClocks()))
            if connection.isHeld { connection.resume() }
            return
        }
        do {
            let result = try perform(command, from: connection)
            connection.send(Response.ok(result, id: request.id))
            if command == .watch {
                connection.becomeWatcher()
                let now = clocks.now
                connection.send(Response.event("status", status: statusJSON(at: now)))
                driver.rearm()
            }
        } catch  where error.code == .databaseLocked && CommandSpec.named(request.command)?.writes == true && .now() < deadline {
            connection.hold()
            let held = QueueBound((daemon: self, connection: connection), on: queue)
            queue.asyncAfter(deadline: .now() + Self.lockRetryInterval) {
                let (daemon, waiting) = held.value
                guard !waiting.closed else { return }
                daemon.serve(command, request, on: waiting, until: deadline)
            }
            return
        } catch {
            refuse(request, error, on: connection)
        }
        if connection.isHeld { connection.resume() }
    }

    /// `export`, read off the queue and sent as it is read (docs/performance.md): its plan is
    /// checked here, then the export queue reads it on a connection of its own, in one read
    /// transaction, and hands the answer's line to the queue in pieces, each once the client
    /// took the one before (`ExportPacing`): memory holds a page of sessions and a piece or two,
    /// never the whole answer. Meanwhile this connection reads no further request (answers keep
    /// their order) and every other client and timer is served. A failure before the answer
    /// began is answered; after, the line cannot be finished: the connection is closed.
    private func serveExport(_ command: ControlCommand, _ request: Request, on connection: ClientConnection, database: String) {
        let plan: StatsService.ExportPlan
        do { plan = try records.stats.exportPlan(command) } catch {
            refuse(request, error, on: connection)
            return
        }
        connection.hold()
        let waiting = QueueBound(connection, on: queue)
        let reader = records.exports
        let stop = records.exportStop
        reader.queue.async { [queue] in
            let pacing = ExportPacing(stop: stop)
            // The answer's line is `{"ok":true,"result":{"format":…,"count":N,"content":"` + the
            // content's pieces, escaped + `"},"id":…}` and its newline.
            var closing = ""
            var began = false
            let failure: DiligenceError?
            do throws(DiligenceError) {
                try StatsService.export(
                    plan, from: try reader.value.connection(to: database),
                    started: { count in
                        let frame = Response.ok(
                            .object([
                                ("format", .string(plan.format.rawValue)), ("count", .int(count)), ("content", .string("")),
                            ]), id: request.id)
                        let cut = frame.firstRange(of: #""content":"""#)!.upperBound
                        let quote = frame.index(before: cut)
                        closing = String(frame[quote...])
                        began = true
                        return pacing.send(String(frame[..<quote]), to: waiting)
                    },
                    piece: { text in pacing.send(String(JSON.string(text).serialized.dropFirst().dropLast()), to: waiting)
                    })
                if began { _ = pacing.send(closing, to: waiting) }
                failure = nil
            } catch {
                failure = error
            }
            let answered = began
            queue.async {
                let waiting = waiting.value
                if let failure {
                    Log.info(
                        "Refused export: \(failure.message.prefix(400))", fields: [("EVENT", "refused"), ("CODE", failure.code.rawValue)])
                    if answered { waiting.close() } else { waiting.send(Response.error(failure, id: request.id)) }
                }
                if waiting.isHeld { waiting.resume() }
            }
        }
    }

    /// A streamed `history` (docs/protocol.md, "Streamed history"): a line per session, read
    /// off the queue on the export queue's connection and paced like an export (memory holds a
    /// page and a piece or two), then the one answer, `{"count": N}`, or the error that ended
    /// it. Meanwhile this connection reads no further request; every other client and timer is
    /// served. A database in memory (tests) has no second connection: it is read here.
    private func serveHistoryStream(_ command: ControlCommand, _ request: Request, on connection: ClientConnection) {
        let plan: StatsService.HistoryPlan
        do { plan = try records.stats.historyPlan(command) } catch {
            return refuse(request, error, on: connection)
        }
        if store.path == ":memory:" {
            do throws(DiligenceError) {
                let count = try StatsService.streamHistory(plan, from: store, id: request.id) { text in
                    connection.send(text)
                    return !connection.closed
                }
                if let count { connection.send(Response.ok(.object([("count", .int(count))]), id: request.id)) }
            } catch {
                refuse(request, error, on: connection)
            }
            return
        }
        connection.hold()
        let waiting = QueueBound(connection, on: queue)
        let reader = records.exports
        let database = store.path
        let stop = records.exportStop
        reader.queue.async { [queue] in
            let pacing = ExportPacing(stop: stop)
            let ending: String?
            do throws(DiligenceError) {
                let count = try StatsService.streamHistory(
                    plan, from: try reader.value.connection(to: database), id: request.id, piece: { pacing.send($0, to: waiting) })
                ending = count.map { Response.ok(.object([("count", .int($0))]), id: request.id) }
            } catch {
                Log.info(
                    "Refused history: \(error.message.prefix(400))", fields: [("EVENT", "refused"), ("CODE", error.code.rawValue)])
                ending = Response.error(error, id: request.id)
            }
            queue.async {
                let waiting = waiting.value
                if let ending { waiting.send(ending) }
                if waiting.isHeld { waiting.resume() }
            }
        }
    }

    private func refuse(_ request: Request, _ error: DiligenceError, on connection: ClientConnection) {
        Log.info(
            "Refused \(request.command.prefix(64)): \(error.message.prefix(400))",
            fields: [("EVENT", "refused"), ("CODE", error.code.rawValue)])
        connection.send(Response.error(error, id: request.id))
    }

    /// Serves one checked command. Statistics, the plan, history, export and import are
    /// `StatsService`'s.
    func perform(_ command: ControlCommand, from connection: ClientConnection) throws(DiligenceError) -> JSON {
        switch command {
        case .status:
            return statusJSON(at: driver.observeClocks())
        case .version:
            return .object([("protocol", .int(ProtocolInfo.version)), ("version", .string(ProtocolInfo.release))])
        case .doctor:
            return doctorReport()
        case .start, .note, .interrupt, .toggle, .pause, .resume, .stop, .skip, .away, .back, .discardAway, .extend:
            return try performTimerCommand(command)
        case .reload:
            switch reload() {
            case .success(let file):
                // The lines `on_bad_config = defaults` skipped, said once here (status only points to them).
                let skipped = config.problems.isEmpty ? [] : [("problems", JSON.array(config.problems.map(JSON.string)))]
                return .object([("reloaded", .bool(true)), ("config", .string(paths.config)), ("file", .bool(file))] + skipped)
            case .failure(let error): throw error
            }
        case .watch:
            return .object([("watching", .bool(true))])
        case .taskList, .taskShow, .taskAdd, .taskEdit, .taskRemove, .taskArchive:
            return try performTaskCommand(command)
        case .syncEnable(let directory, let name, let newDevice):
            let status = try sync.journal.enable(directory, name: name, newDevice: newDevice, now: clocks.wall)
            // A new device reads every journal anew, the former id's as another device's.
            if newDevice { sync.merge.follow(nil) }
            sync.merge.follow(sync.journal.directory())
            return try withDevices(status)
        case .syncStatus:
            return try withDevices(try sync.journal.status())
        case .syncDisable:
            let status = try sync.journal.disable()
            sync.merge.follow(nil)
            return try withDevices(status)
        case .stats, .week, .planSet, .planClear, .history, .historyAdd, .historyRemove, .historyEdit, .export, .importChunk:
            return try records.stats.perform(command)
        case .backup, .timewarriorSync:
            preconditionFailure("serve runs backup and timewarrior_sync itself, off the queue")
        }
    }

    /// The timer's commands: each changes the machine through `timerCommand`.
    private func performTimerCommand(_ command: ControlCommand) throws(DiligenceError) -> JSON {
        switch command {
        case .start(let given, let note, let link):
            let name = try taskwarriorTaskName(given, link: link)
            let named = try name.map { name throws(DiligenceError) in try findMappedTask(name, link: link, given: given) }
            var task = named
            if task == nil, machine.state == .idle { task = try taskToStart(nil) }
            // The work follows the Taskwarrior task named; other work named, or from idle, not.
            let followed = desktop.taskwarrior.following
            if let link {
                desktop.taskwarrior.following = UUIDText.parse(link.uuid)
            } else if given != nil || machine.state == .idle {
                desktop.taskwarrior.following = nil
            }
            do {
                return try timerCommand { machine, now throws(DiligenceError) in
                    // On a copy: a note the started phase cannot take refuses the whole command.
                    var started = machine
                    let events = try started.start(task, at: now)
                    if let note, !note.isEmpty { try started.setNote(note) }
                    machine = started
                    return events
                }
            } catch {
                desktop.taskwarrior.following = followed
                throw error
            }
        case .note(let text):
            return try timerCommand { machine, _ throws(DiligenceError) in
                try machine.setNote(text.isEmpty ? nil : text)
                return []
            }
        case .interrupt(let kind, let note):
            return try timerCommand { m, now throws(DiligenceError) in try m.interrupt(kind, note: note, at: now) }
        case .toggle(let name):
            let task = try machine.state == .idle ? taskToStart(name) : nil
            // Work started from idle follows no Taskwarrior task, as `start` from idle does.
            let followed = desktop.taskwarrior.following
            if machine.state == .idle { desktop.taskwarrior.following = nil }
            do {
                return try timerCommand { machine, now throws(DiligenceError) in try machine.toggle(task, at: now) }
            } catch {
                desktop.taskwarrior.following = followed
                throw error
            }
        case .pause: return try timerCommand { m, now throws(DiligenceError) in try m.pause(at: now) }
        case .resume: return try timerCommand { m, now throws(DiligenceError) in try m.resume(at: now) }
        case .stop: return try timerCommand { m, now throws(DiligenceError) in try m.stop(at: now) }
        case .skip: return try timerCommand { m, now throws(DiligenceError) in try m.skip(at: now) }
        case .away: return presenceCommand(away: true)
        case .back: return presenceCommand(away: false)
        case .discardAway: return try timerCommand { m, now throws(DiligenceError) in try m.discardAway(at: now) }
        case .extend(let seconds):
            return try timerCommand { m, now throws(DiligenceError) in try m.extend(by: seconds, at: now) }
        default:
            preconditionFailure("perform routes only the timer's commands here")
        }
    }

    /// The task commands: the store changes, watchers hear of it (`taskChanged`).
    private func performTaskCommand(_ command: ControlCommand) throws(DiligenceError) -> JSON {
        switch command {
        case .taskList(let recentDays, let archived):
            return try taskList(recentDays: recentDays, archived: archived)
        case .taskShow(let name):
            return try store.findTask(name).json
        case .taskAdd(let name, let changes):
            var task = TaskConfig(name: name)
            changes.apply(to: &task)
            let added = try store.addTask(task)
            taskChanged(added, change: "added")
            return added.json
        case .taskEdit(let name, let newName, let changes):
            var task = try store.findTask(name)
            changes.apply(to: &task)
            if let newName { task.name = newName }
            let updated = try store.updateTask(task)
            runningTaskChanged(id: updated.id, to: updated)
            taskChanged(updated, change: "edited")
            return updated.json
        case .taskRemove(let name, let confirm, let dryRun):
            return try removeTask(name, confirm: confirm, dryRun: dryRun)
        case .taskArchive(let name, let archived):
            let task = try store.findTask(name, scope: archived ? .active : .archived)
            guard task.archived != archived else { return task.json }
            let changed = try store.setArchived(id: task.id, archived)
            runningTaskChanged(id: changed.id, to: changed)
            taskChanged(changed, change: archived ? "archived" : "unarchived")
            return changed.json
        default:
            preconditionFailure("perform routes only the task commands here")
        }
    }

    /// Runs a timer command at this moment and answers the new status.
    func timerCommand(_ body: (inout TimerMachine, Now) throws(DiligenceError) -> [TimerEvent]) throws(DiligenceError) -> JSON {
        let now = driver.observeClocks()
        let events = try driver.changeTimer(at: now) { machine throws(DiligenceError) in try body(&machine, now) }
        let status = statusJSON(at: now)
        // Work that min_session drops is said where the user looks: in the answer of the command.
        let dropped = events.lazy.compactMap { event -> JSON? in
            guard case .sessionEnded(let session) = event, let reason = self.records.recorder.whyNotRecorded(session) else { return nil }
            return .object([
                ("reason", .string(reason)), ("focused_seconds", .int(Int64(session.focusedSeconds))),
                ("min_session", .int(Int64(self.records.recorder.minSession))),
            ])
        }.first
        guard let dropped, case .object(let members) = status else { return status }
        return .object(members + [("not_recorded", dropped)])
    }

    /// The task to start from idle: the one named, else today's planned one, else the last one
    /// used, else the first one; never an archived one (a name of one is refused).
    private func taskToStart(_ name: String?) throws(DiligenceError) -> TaskConfig? {
        if let name { return try store.findTask(name, scope: .active) }
        if let planned = try records.stats.plannedTaskToday(), !planned.archived { return planned }
        if let id = try store.lastUsedTaskID(), let task = try store.task(id: id), !task.archived { return task }
        return try store.tasks().first { !$0.archived }
    }

    /// `task_list`: the tasks `archived` lets through, with their recent focus when asked.
    private func taskList(recentDays: Int, archived: ArchivedTasks) throws(DiligenceError) -> JSON {
        let tasks = try store.tasks().filter { archived.lists(archived: $0.archived) }
        guard recentDays > 0 else { return .object([("tasks", .array(tasks.map(\.json)))]) }
        // Focused seconds per task and day, today last (a sparkline in `task list`).
        let today = records.stats.todayDate
        let acc = try records.stats.accumulate(records.stats.grid(today.adding(days: 1 - recentDays), today), tasks: tasks)
        return .object([
            (
                "tasks",
                .array(
                    tasks.indices.map { t in
                        guard case .object(let members) = tasks[t].json else { return tasks[t].json }
                        return .object(members + [("recent", .array((0..<recentDays).map { .int(acc.tally(day: $0, task: t).seconds) }))])
                    })
            )
        ])
    }

    /// `task_remove`: says what it erases (sessions and focused time) before (`dry_run`, and
    /// the refusal without `confirm`) and after, and offers archiving instead.
    private func removeTask(_ name: String, confirm: Bool, dryRun: Bool) throws(DiligenceError) -> JSON {
        // The whole name: a prefix never removes anything.
        let task = try store.findTask(name, wholeName: true)
        let recorded = try store.recordedTotals(taskID: task.id)
        if dryRun {
            return .object([
                ("task", .string(task.name)), ("sessions", .int(recorded.sessions)),
                ("focused_seconds", .int(recorded.focusedSeconds)), ("removed", .bool(false)),
            ])
        }
        guard confirm else {
            throw DiligenceError(
                .confirmationRequired,
                "Removing \(task.name) erases its \(recorded.sessions) recorded session\(recorded.sessions == 1 ? "" : "s") "
                    + "(\(DurationText.format(recorded.focusedSeconds))) too; send \"confirm\": true (diligencectl: --yes), "
                    + "or archive it instead (task_archive): hidden, its history kept.")
        }
        let removed = try store.removeTask(id: task.id)
        runningTaskChanged(id: task.id, to: nil)
        taskChanged(task, change: "removed")
        return .object([
            ("removed", .string(task.name)), ("sessions_removed", .int(removed)),
            ("focused_seconds_removed", .int(recorded.focusedSeconds)),
        ])
    }

    /// The sync status with the devices known here (`SyncMerge.devicesJSON`).
    private func withDevices(_ status: JSON) throws(DiligenceError) -> JSON {
        guard case .object(let members) = status else { return status }
        return .object(members + [("devices", try sync.merge.devicesJSON())])
    }

    /// The timer's copy of task row `id` made to follow the database after the task changed there,
    /// whatever changed it (a command here, a merge of another device's change): an edited or
    /// archived task's name shows at once and its settings apply from the next phase
    /// (`TimerMachine.taskChanged`); a removed one (`task` nil) drops the phase without recording
    /// it, as its sessions are gone with it. `task` may be on another row (two rows of one task
    /// merged into one).
    func runningTaskChanged(id: Int64, to task: TaskConfig?) {
        guard machine.task?.id == id else { return }
        driver.changeTimer(at: clocks.now) { machine in
            if let task { machine.taskChanged(task, replacing: id) } else { machine.reset() }
            return []
        }
    }

    /// Another device's changes were merged: the running task follows its row (`folded`: rows
    /// merged into another, by the row kept), reminders follow the tasks, watchers get the status.
    func syncMerged(folded: [Int64: Int64]) {
        runningTaskReread(folded: folded)
        desktop.reminders.reload(from: store, now: clocks.wall)
        broadcast("task_changed", now: clocks.now, extra: [("task", .null), ("change", .string("merged"))])
    }

    /// An import restored task definitions (`export --with-tasks`): the running task follows
    /// its row, reminders re-read, watchers told.
    func tasksImported() {
        runningTaskReread(folded: [:])
        desktop.reminders.reload(from: store, now: clocks.wall)
        broadcast("task_changed", now: clocks.now, extra: [("task", .null), ("change", .string("imported"))])
    }

    /// The running task as the database shows it after tasks changed there without a task
    /// command (a merge, an import), through `runningTaskChanged`.
    private func runningTaskReread(folded: [Int64: Int64]) {
        guard let running = machine.task else { return }
        do {
            let row = try store.task(id: folded[running.id] ?? running.id)
            // SQLite gives a new row the id of a deleted one: a row that is another task now
            // means the running task's row went.
            let same = folded[running.id] != nil || running.uuid.isEmpty || row?.uuid == running.uuid
            runningTaskChanged(id: running.id, to: same ? row : nil)
        } catch {
            Log.error("The running task cannot be read after its tasks changed (\(error.message)); the timer keeps its copy.")
        }
    }

    private func taskChanged(_ task: TaskConfig, change: String) {
        desktop.reminders.reload(from: store, now: clocks.wall)
        Log.info("Task \(task.name) \(change).", fields: [("EVENT", "task_changed"), ("TASK", task.name)])
        broadcast("task_changed", now: clocks.now, extra: [("task", .string(task.name)), ("change", .string(change))])
    }
}

/// The pace of an answer sent in pieces from the export queue: each piece is queued on the
/// connection and the next one waits until the client took it down to `low` bytes, or left.
private final class ExportPacing: @unchecked Sendable {
    /// Output a connection may still hold when the next piece is made: the next page is read
    /// while this is written.
    static let low = 1 << 20
    private let room = DispatchSemaphore(value: 0)
    private let stop: ExportStop

    init(stop: ExportStop) { self.stop = stop }
    /// The client is still there (set on the daemon's queue, read after `room` is signalled).
    private var open = true

    /// Sends `text` on `connection` from its queue and waits until there is room for the next
    /// piece; false once the connection is closed.
    func send(_ text: String, to bound: QueueBound<ClientConnection>) -> Bool {
        bound.queue.async { [self] in
            let connection = bound.value
            var signalled = false
            // Only ever called on `queue`.
            func check() {
                guard !signalled, connection.closed || connection.pendingOutput <= Self.low else { return }
                signalled = true
                connection.stopWatchingWrites()
                open = !connection.closed
                room.signal()
            }
            connection.watchWrites(check)
            connection.send(text)
            check()
        }
        // A stopping daemon's queue waits for this one (`Daemon.stop`): the room would never come.
        while room.wait(timeout: .now() + ExportStop.pollSeconds) == .timedOut {
            if stop.isSet { return false }
        }
        return open
    }
}

/// Set when the daemon stops, so that an answer in pieces waiting for room gives up.
final class ExportStop: Sendable {
    private let flag = Atomic<Bool>(false)
    static let pollSeconds = 0.1

    func set() { flag.store(true, ordering: .releasing) }
    var isSet: Bool { flag.load(ordering: .acquiring) }
}

/// The export queue's own connection to the database, opened at the first export.
final class ExportReader {
    private var opened: Store?

    /// The connection to the database at `path`.
    func connection(to path: String) throws(DiligenceError) -> Store {
        if let opened { return opened }
        let store = try Store(location: .path(path))
        opened = store
        return store
    }

    /// Closes the connection (daemon exit).
    func close() { opened = nil }
}
