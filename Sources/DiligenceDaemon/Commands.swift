import DiligenceCore
import DiligenceProtocol
import DiligenceStore

/// The control protocol's commands (docs/protocol.md), served on the daemon's queue.
extension Daemon {
    /// Task fields accepted by `task_add` and `task_edit` (TaskConfig.apply reads them).
    static let taskFields: Set<String> = [
        "description", "color", "work", "work_seconds", "short_break", "short_break_seconds",
        "long_break", "long_break_seconds", "long_break_every", "breaks", "autostart",
        "focus_mode", "goal", "reminder", "sound",
    ]

    /// Each command and the arguments it accepts: anything else is refused, so a typo
    /// (`"wrok": 30`) is an error rather than silently ignored.
    static let commands: [String: Set<String>] = [
        "status": [], "start": ["task"], "pause": [], "resume": [], "toggle": ["task"],
        "stop": [], "skip": [], "extend": ["duration"], "version": [], "reload": [], "watch": [],
        "task_list": [], "task_show": ["task"],
        "task_add": taskFields.union(["name"]),
        "task_edit": taskFields.union(["task", "new_name"]),
        "task_remove": ["task", "confirm"],
    ].merging(statsCommands) { own, _ in own }

    func handleLine(_ line: ArraySlice<UInt8>, from connection: ClientConnection) {
        let request: Request
        switch Request.parse(line: line) {
        case let .success(r): request = r
        case let .failure(failure):
            Log.info("Refused a request: \(failure.error.message)", fields: [("EVENT", "refused"), ("CODE", failure.error.code)])
            connection.send(Response.error(failure.error, id: failure.id))
            return
        }
        do {
            let result = try perform(request, from: connection)
            connection.send(Response.ok(result, id: request.id))
            if request.command == "watch" {
                connection.isWatcher = true
                let now = clocks.now
                connection.send(Response.event("status", status: statusJSON(at: now)))
                rearm()
            }
        } catch {
            Log.info("Refused \(request.command): \(error.message)", fields: [("EVENT", "refused"), ("CODE", error.code)])
            connection.send(Response.error(error, id: request.id))
        }
    }

    func perform(_ request: Request, from connection: ClientConnection) throws(DiligenceError) -> JSON {
        guard let allowed = Self.commands[request.command] else {
            throw DiligenceError("unknown_command", "Unknown command \(request.command.debugDescription). Commands: \(Self.commands.keys.sorted().joined(separator: ", ")).")
        }
        if case let .object(members) = request.body {
            for (key, _) in members where key != "command" && key != "id" && !allowed.contains(key) {
                throw DiligenceError("invalid_argument", "\"\(request.command)\" takes no argument \"\(key)\".")
            }
        }
        switch request.command {
        case "status":
            return statusJSON(at: observeClocks())
        case "version":
            return .object([("protocol", .int(ProtocolInfo.version)), ("version", .string(ProtocolInfo.release))])
        case "start":
            let task = try machine.state == .idle ? taskToStart(request) : namedTask(request)
            return try timerCommand { machine, now throws(DiligenceError) in try machine.start(task, at: now) }
        case "toggle":
            let task = try machine.state == .idle ? taskToStart(request) : nil
            return try timerCommand { machine, now throws(DiligenceError) in try machine.toggle(task, at: now) }
        case "pause": return try timerCommand { m, now throws(DiligenceError) in try m.pause(at: now) }
        case "resume": return try timerCommand { m, now throws(DiligenceError) in try m.resume(at: now) }
        case "stop": return try timerCommand { m, now throws(DiligenceError) in try m.stop(at: now) }
        case "skip": return try timerCommand { m, now throws(DiligenceError) in try m.skip(at: now) }
        case "extend":
            let seconds = try request.duration("duration") ?? 300
            return try timerCommand { m, now throws(DiligenceError) in try m.extend(by: seconds, at: now) }
        case "reload":
            switch reload() {
            case .success: return .object([("reloaded", .bool(true)), ("config", .string(paths.config))])
            case let .failure(error): throw error
            }
        case "watch":
            return .object([("watching", .bool(true))])
        case "task_list":
            return .object([("tasks", .array(try store.tasks().map(\.json)))])
        case "task_show":
            return try store.findTask(request.requiredString("task")).json
        case "task_add":
            var task = TaskConfig(name: try request.requiredString("name"))
            try task.apply(request)
            let added = try store.addTask(task)
            taskChanged(added, change: "added")
            return added.json
        case "task_edit":
            var task = try store.findTask(request.requiredString("task"))
            try task.apply(request)
            if let newName = try request.string("new_name") { task.name = newName }
            let updated = try store.updateTask(task)
            changeTimer(at: observeClocks()) { machine in
                machine.taskChanged(updated)
                return []
            }
            taskChanged(updated, change: "edited")
            return updated.json
        case "task_remove":
            let task = try store.findTask(request.requiredString("task"))
            guard try request.bool("confirm") == true else {
                throw DiligenceError("confirmation_required", "Removing \(task.name) deletes its recorded sessions too; send \"confirm\": true (diligencectl: --yes).")
            }
            let removed = try store.removeTask(id: task.id)
            if machine.task?.id == task.id {
                // Its sessions are gone with it: drop the phase without recording it.
                changeTimer(at: clocks.now) { machine in
                    machine.reset()
                    return []
                }
            }
            taskChanged(task, change: "removed")
            return .object([("removed", .string(task.name)), ("sessions_removed", .int(removed))])
        default:
            if let result = try performStats(request) { return result }
            throw DiligenceError("unknown_command", "Unknown command \(request.command.debugDescription).")
        }
    }

    /// Runs a timer command at this moment and answers the new status.
    func timerCommand(_ body: (inout TimerMachine, Now) throws(DiligenceError) -> [TimerEvent]) throws(DiligenceError) -> JSON {
        let now = observeClocks()
        try changeTimer(at: now) { machine throws(DiligenceError) in try body(&machine, now) }
        return statusJSON(at: now)
    }

    /// The task named by the optional `task` argument.
    private func namedTask(_ request: Request) throws(DiligenceError) -> TaskConfig? {
        guard let name = try request.string("task") else { return nil }
        return try store.findTask(name)
    }

    /// The task to start from idle: the one named, else today's planned one, else the last one
    /// used, else the first one.
    private func taskToStart(_ request: Request) throws(DiligenceError) -> TaskConfig? {
        if let named = try namedTask(request) { return named }
        if let planned = try plannedTaskToday() { return planned }
        if let id = try store.lastUsedTaskID(), let task = try store.task(id: id) { return task }
        return try store.tasks().first
    }

    private func taskChanged(_ task: TaskConfig, change: String) {
        updateReminders()
        Log.info("Task \(task.name) \(change).", fields: [("EVENT", "task_changed"), ("TASK", task.name)])
        broadcast("task_changed", now: clocks.now, extra: [("task", .string(task.name)), ("change", .string(change))])
    }
}
