import DiligenceCore
import DiligenceJSON
import DiligenceTime

// Every command of the control protocol, declared once: its fields (name, type, range, default,
// one line of doc) and the typed value a handler receives. docs/protocol.md shows these tables;
// `DocumentationTests` keeps it in step.

/// The fields of the protocol's commands. A field used by several commands with the same meaning
/// is declared once (`task fields`); the same name with another meaning or range is another field.
public enum Fields {
    /// Longest text accepted where a task is named (a name has at most 64 characters; this
    /// leaves room for any spelling of an existing one).
    static let referenceLength = 256

    // MARK: Naming a task

    static let task = Field<String>.text(
        "task", maxLength: referenceLength, "the task: its name in any case, or the unique beginning of one (stu for Study)")
    static let taskToStart = Field<String?>.text(
        "task", maxLength: referenceLength,
        trNoop("the task to start (default: the pending phase, else today's planned task, else the last task used, else the first)"))
    static let taskFilter = Field<String?>.text("task", maxLength: referenceLength, "only this task's sessions")
    /// A device: `this`, a device's name, or a device's id (36 characters) or a unique beginning of it.
    static let deviceFilter = Field<String?>.text(
        "device", maxLength: DeviceName.maxLength,
        "only one device's sessions: this (this device's own), a device's name, or a device's id or its unique beginning")

    // MARK: Timer

    static let noteToStart = Field<String?>.note("note", trNoop("a note for the work session it starts (history, exports, hooks)"))
    /// A Taskwarrior task the work phase follows; diligencectl resolves an ID to its UUID.
    static let taskwarrior = Field<String?>.text(
        "taskwarrior", maxLength: 36, "a Taskwarrior task's UUID: its work phases run task start/stop, its sessions annotate it")
    static let taskwarriorProject = Field<String?>.text(
        "taskwarrior_project", maxLength: referenceLength,
        "that task's project: without task, [taskwarrior] map (else default) picks the diligence task")
    static let note = Field<String>.note("text", "the note of the running or paused work phase; empty removes it")

    static let extendBy = Field<Int>.duration("duration", default: 300, "how much to add to the phase")

    static let interruptionKind = Field<InterruptionKind>.choice(
        "kind", default: .internal, "internal (your own thought, marked ') or external (someone else, marked -)")
    static let interruptionNote = Field<String?>.note("note", "what it was (history, exports, hooks)")

    // MARK: Task fields (task_add, task_edit)

    static let name = Field<String>.taskName("name", "the new task's name (see Task names)")
    static let newName = Field<String?>.taskName("new_name", "rename the task (see Task names)")
    static let description = Field<String?>.text("description", maxLength: TaskConfig.maxDescriptionLength, "free text (new task: empty)")
    static let color = Field<TaskColor?>.choice("color", optional: TaskColor.self, "the task's colour (new task: blue)")
    static let work = Field<Int?>.duration("work", "work phase length (new task: 25m)")
    static let workSeconds = Field<Int?>.duration("work_seconds", "the same as work")
    static let shortBreak = Field<Int?>.duration("short_break", "short break length (new task: 5m)")
    static let shortBreakSeconds = Field<Int?>.duration("short_break_seconds", "the same as short_break")
    static let longBreak = Field<Int?>.duration("long_break", "long break length (new task: 15m)")
    static let longBreakSeconds = Field<Int?>.duration("long_break_seconds", "the same as long_break")
    static let longBreakEvery = Field<Int?>.integer(
        "long_break_every", 0...Int64(TaskConfig.maxLongBreakEvery), "work rounds before a long break; 0 = never (new task: 4)")
    static let breaks = Field<Bool?>.boolean("breaks", "false: work follows work (new task: true)")
    static let autostart = Field<Autostart?>.choice(
        "autostart", optional: Autostart.self, "which phases start by themselves (new task: none)")
    static let focusMode = Field<Bool?>.boolean(
        "focus_mode", "strict: pause and skip refused during work, a suspend abandons it (new task: false)")
    static let goal = Field<Int?>.integer("goal", 0...Int64(TaskConfig.maxGoal), "completed work sessions per day; 0 = none (new task: 0)")
    static let reminder = Field<Setting<Int>?>.timeOfDay("reminder", "a daily reminder at this local time (new task: off)")
    static let sound = Field<Setting<String>?>.nameOrOff(
        "sound", maxLength: TaskConfig.maxNameLength, "ambient sound during work (new task: off)")

    static let away = Field<Setting<AwayPolicy>?>.policyOrDefault(
        "away", "what leaving the computer does to work: pause, continue, abandon, or default ([presence] on_away) (new task: default)")

    static let dnd = Field<Setting<Bool>?>.onOffOrDefault(
        "dnd", "do not disturb during work: on, off, or default ([focus] do_not_disturb) (new task: default)")

    static let mode = Field<TaskMode?>.choice(
        "mode", optional: TaskMode.self, "pomodoro: work to a deadline; flow: work counts up until ended (new task: pomodoro)")
    static let breakRatio = Field<FlowBreakRule?>.breakRule(
        "break_ratio", "flow: the break earned, a ratio of the work (1/5) or a table (<25m=5m,<50m=8m,else=15m) (new task: 1/5)")
    static let minBreak = Field<Int?>.duration("min_break", "flow: the shortest break earned (new task: 1m)")
    static let maxBreak = Field<Int?>.duration("max_break", "flow: the longest break earned (new task: 30m)")
    static let flowNudge = Field<Setting<Int>?>.durationOrOff(
        "flow_nudge", "flow: a notification after this much work, no stop (new task: off)")
    static let overtime = Field<Bool?>.boolean(
        "overtime", "pomodoro: work goes on past the bell, counting up, until stopped (new task: false)")
    static let voidOnInterrupt = Field<Bool?>.boolean(
        "void_on_interrupt", "true: an external interruption ends its work as abandoned, reason interrupted (new task: false)")

    /// Every task field, in the order help and docs list them.
    static let taskFields: [any FieldDeclaration] = [
        description, color, work, workSeconds, shortBreak, shortBreakSeconds, longBreak, longBreakSeconds,
        longBreakEvery, breaks, autostart, focusMode, goal, reminder, sound, away, dnd,
        mode, breakRatio, minBreak, maxBreak, flowNudge, overtime, voidOnInterrupt,
    ]

    static let confirm = Field<Bool>.boolean("confirm", default: false, "must be true: the task's sessions are removed too")
    static let timewarriorDryRun = Field<Bool>.boolean(
        "dry_run", default: false, "true: change nothing in Timewarrior, answer what would be deleted and tracked")
    static let dryRun = Field<Bool>.boolean(
        "dry_run", default: false, "true: remove nothing, answer what would be erased (sessions, focused seconds)")
    static let archivedTasks = Field<ArchivedTasks>.choice(
        "archived", default: .hidden, code: .invalidValue, "archived tasks: hidden, included, or only they")

    // MARK: Statistics and the plan

    /// Periods away from this one, for every period kind; the date window bounds the result.
    static let offsetRange: ClosedRange<Int64> = -100_000...100_000
    static let period = Field<StatsPeriod>.choice("period", default: .today, code: .invalidPeriod, "which period")
    static let statsOffset = Field<Int>.integer("offset", offsetRange, default: 0, "periods from this one: -1 the previous, 1 the next")
    static let statsDate = Field<String?>.text(
        "date", maxLength: 32,
        "a day of the period: today, yesterday, -3d, YYYY-MM-DD, or a weekday (monday, mon: the latest) (default today); offset counts from its period"
    )
    /// Days of recent focus per task that `task_list` adds (a sparkline's worth; at most a year).
    static let recentDays = Field<Int>.integer(
        "recent_days", 0...366, default: 0, "add each task's focused seconds of the last N days, today last (recent)")
    static let weekOffset = Field<Int>.integer("offset", offsetRange, default: 0, "weeks from this one: -1 the previous, 1 the next")
    static let day = Field<String>.text(
        "day", maxLength: 32, "today, tomorrow, yesterday, +2d, -1d, YYYY-MM-DD, or a weekday (monday, mon) of the week offset")
    static let planOffset = Field<Int>.integer(
        "offset", offsetRange, default: 0, "the week a weekday in day belongs to: -1 the previous, 1 the next")
    static let plannedTask = Field<String>.text("task", maxLength: referenceLength, "the task to plan")

    // MARK: History

    static let since = Field<String?>.text(
        "since", maxLength: 64,
        "from this day on (today, yesterday, monday, -3d, YYYY-MM-DD: its whole day), or this moment (as start)")
    static let until = Field<String?>.text(
        "until", maxLength: 64, "up to and including this day (as since), or up to this moment (as start)")
    static let limit = Field<Int?>.integer("limit", 1...1_000_000, "only the most recent N sessions")
    static let stream = Field<Bool>.boolean(
        "stream", default: false, "true: a line per session as it is read, then the answer {\"count\": N} (see Streamed history)")
    static let start = Field<String>.text(
        "start", maxLength: 64,
        "when it started: HH:MM (today), a day and a time (yesterday 14:00, 2026-03-01 09:30), or RFC 3339; a local time may end in its offset (+02:00, Z)"
    )
    static let end = Field<String>.text("end", maxLength: 64, "when it ended: as start")
    static let pauses = Field<Int>.integer("pauses", 0...1_000, default: 0, "pauses taken")
    static let sessionID = Field<Int64>.id("id", 1...Int64.max, "the session's id, as history lists it")
    static let newTask = Field<String?>.text("task", maxLength: referenceLength, "the task the session moves to")
    static let newStart = Field<String?>.text("start", maxLength: 64, "a new start: as history_add's start")
    static let newEnd = Field<String?>.text("end", maxLength: 64, "a new end: as history_add's end")
    static let newNote = Field<String?>.note("note", "a new note; empty removes it")

    // MARK: Export and import

    static let format = Field<ExportFormat>.choice("format", default: .jsonl, code: .unknownFormat, "the file format")
    static let content = Field<String>.text("content", maxLength: ProtocolInfo.maxLineBytes, "whole lines of a JSON-lines export")
    static let importID = Field<Int64?>.id("import_id", 1...(1 << 40), "the import_id the first chunk answered; absent in the first chunk")
    static let more = Field<Bool>.boolean("more", default: false, "true: another chunk follows")
    static let withTasks = Field<Bool>.boolean(
        "with_tasks", default: false, "jsonl only: the task definitions and the plan first, for import to restore")
    static let segments = Field<Bool>.boolean(
        "segments", default: false, "ics only: one event per focus segment (the stretches between pauses) instead of one per session")
    static let replaceTasks = Field<Bool>.boolean(
        "replace_tasks", default: false, "an imported task definition replaces an existing task's settings (else it keeps its own)")

    // MARK: Backup

    static let backupPath = Field<String>.text(
        "path", maxLength: 4096, "the file to write the copy to: an absolute path that does not exist yet, in a writable directory")

    // MARK: Sync

    static let syncDirectory = Field<String>.text(
        "directory", maxLength: SyncFolder.maxLength, "the sync folder: an absolute path or ~/... (made when missing)")
    static let deviceName = Field<String?>.deviceName(
        "name", "this device's name, shown with its sessions on the others and taken by --device (default: the host name)")
    static let newDevice = Field<Bool>.boolean(
        "new_device", default: false,
        "true: this database becomes a new device (a new random id) whose journal starts with the whole history (diligencectl(1), sync)")
}

/// The periods of `stats`.
public enum StatsPeriod: String, CaseIterable, Sendable {
    /// `day` is `today` by another name, meant with a `date`.
    case today, day, week, month, year, all

    /// The calendar period it names; nil for `all` (from the first session to today).
    public var reportPeriod: ReportPeriod? {
        switch self {
        case .today, .day: .day
        case .week: .week
        case .month: .month
        case .year: .year
        case .all: nil
        }
    }
}

/// Which tasks `task_list` answers, as archived tasks go.
public enum ArchivedTasks: String, CaseIterable, Sendable {
    case hidden, included, only

    /// Whether a task archived or not (`archived`) is listed.
    public func lists(archived: Bool) -> Bool {
        switch self {
        case .hidden: !archived
        case .included: true
        case .only: archived
        }
    }
}

/// The formats of `export`.
public enum ExportFormat: String, CaseIterable, Sendable {
    case jsonl, csv, ics
}

/// The task fields a `task_add` or `task_edit` carries; nil leaves a field as it is (a new task
/// starts from `TaskConfig`'s defaults).
public struct TaskChanges: Sendable, Equatable {
    public var description: String?
    public var color: TaskColor?
    public var workSeconds: Int?
    public var shortBreakSeconds: Int?
    public var longBreakSeconds: Int?
    public var longBreakEvery: Int?
    public var breaks: Bool?
    public var autostart: Autostart?
    public var focusMode: Bool?
    public var goal: Int?
    public var reminder: Setting<Int>?
    public var sound: Setting<String>?
    /// The task's own away policy; `.off`: back to `[presence] on_away`.
    public var away: Setting<AwayPolicy>?
    /// Do not disturb during the task's work; `.off`: back to `[focus] do_not_disturb`.
    public var dnd: Setting<Bool>?
    public var mode: TaskMode?
    public var breakRule: FlowBreakRule?
    public var minBreakSeconds: Int?
    public var maxBreakSeconds: Int?
    /// The flow nudge; `.off`: none.
    public var flowNudge: Setting<Int>?
    public var overtime: Bool?
    public var voidOnInterrupt: Bool?

    public init() {}

    init(_ a: Arguments) {
        description = a[Fields.description]
        color = a[Fields.color]
        // `work_seconds` is the older spelling; when both are given it wins, as it always did.
        workSeconds = a[Fields.workSeconds] ?? a[Fields.work]
        shortBreakSeconds = a[Fields.shortBreakSeconds] ?? a[Fields.shortBreak]
        longBreakSeconds = a[Fields.longBreakSeconds] ?? a[Fields.longBreak]
        longBreakEvery = a[Fields.longBreakEvery]
        breaks = a[Fields.breaks]
        autostart = a[Fields.autostart]
        focusMode = a[Fields.focusMode]
        goal = a[Fields.goal]
        reminder = a[Fields.reminder]
        sound = a[Fields.sound]
        away = a[Fields.away]
        dnd = a[Fields.dnd]
        mode = a[Fields.mode]
        breakRule = a[Fields.breakRatio]
        minBreakSeconds = a[Fields.minBreak]
        maxBreakSeconds = a[Fields.maxBreak]
        flowNudge = a[Fields.flowNudge]
        overtime = a[Fields.overtime]
        voidOnInterrupt = a[Fields.voidOnInterrupt]
    }

    public func apply(to task: inout TaskConfig) {
        if let description { task.description = description }
        if let color { task.color = color }
        if let workSeconds { task.workSeconds = workSeconds }
        if let shortBreakSeconds { task.shortBreakSeconds = shortBreakSeconds }
        if let longBreakSeconds { task.longBreakSeconds = longBreakSeconds }
        if let longBreakEvery { task.longBreakEvery = longBreakEvery }
        if let breaks { task.breaks = breaks }
        if let autostart { task.autostart = autostart }
        if let focusMode { task.focusMode = focusMode }
        if let goal { task.goal = goal }
        if let reminder { task.reminderMinute = reminder.value }
        if let sound { task.sound = sound.value }
        if let away { task.awayPolicy = away.value }
        if let dnd { task.doNotDisturb = dnd.value }
        if let mode { task.mode = mode }
        if let breakRule { task.breakRule = breakRule }
        if let minBreakSeconds { task.minBreakSeconds = minBreakSeconds }
        if let maxBreakSeconds { task.maxBreakSeconds = maxBreakSeconds }
        if let flowNudge { task.flowNudgeSeconds = flowNudge.value }
        if let overtime { task.overtime = overtime }
        if let voidOnInterrupt { task.voidOnInterrupt = voidOnInterrupt }
    }
}

/// What a `history_edit` changes; nil leaves a part as it is (a note of "" removes it).
public struct SessionChanges: Sendable, Equatable {
    public var task: String?
    public var start: String?
    public var end: String?
    public var note: String?

    public init(task: String? = nil, start: String? = nil, end: String? = nil, note: String? = nil) {
        self.task = task
        self.start = start
        self.end = end
        self.note = note
    }

    public var isEmpty: Bool { task == nil && start == nil && end == nil && note == nil }
}

/// The Taskwarrior task a `start` names (docs/integrations.md): its UUID as sent (the daemon
/// checks its form) and its project, which picks the diligence task when none is named.
public struct TaskwarriorLink: Sendable, Equatable {
    public var uuid: String
    public var project: String?

    public init(uuid: String, project: String? = nil) {
        self.uuid = uuid
        self.project = project
    }
}

/// A request, checked against its command's schema: what the daemon's handlers receive.
public enum ControlCommand: Sendable, Equatable {
    case status
    case start(task: String?, note: String?, taskwarrior: TaskwarriorLink? = nil)
    case note(text: String)
    case interrupt(kind: InterruptionKind, note: String?)
    case pause
    case resume
    case toggle(task: String?)
    case stop
    case skip
    case extend(seconds: Int)
    case version
    case doctor
    case reload
    case watch
    case taskList(recentDays: Int, archived: ArchivedTasks)
    case taskShow(task: String)
    case taskAdd(name: String, changes: TaskChanges)
    case taskEdit(task: String, newName: String?, changes: TaskChanges)
    case taskRemove(task: String, confirm: Bool, dryRun: Bool)
    case taskArchive(task: String, archived: Bool)
    case stats(period: StatsPeriod, offset: Int, task: String?, date: String?, device: String?)
    case week(offset: Int, device: String?)
    case planSet(day: String, task: String, offset: Int)
    case planClear(day: String, offset: Int)
    case history(task: String?, since: String?, until: String?, limit: Int?, device: String?, stream: Bool = false)
    case historyAdd(task: String, start: String, end: String, pauses: Int)
    case historyRemove(id: Int64)
    case historyEdit(id: Int64, changes: SessionChanges)
    case export(
        format: ExportFormat, task: String?, since: String?, until: String?, withTasks: Bool, device: String?, segments: Bool = false)
    case importChunk(content: String, importID: Int64?, more: Bool, replaceTasks: Bool)
    case away
    case back
    case discardAway
    case backup(path: String)
    case syncEnable(directory: String, name: String?, newDevice: Bool)
    case syncStatus
    case syncDisable
    case timewarriorSync(dryRun: Bool)

    /// The typed command of a parsed request: its command must exist and every member must
    /// pass its field's check. The error is what the daemon answers.
    public init(_ request: Request) throws(DiligenceError) {
        guard let spec = CommandSpec.named(request.command) else {
            throw DiligenceError(
                .unknownCommand,
                "Unknown command \(request.command.debugDescription). Commands: \(CommandSpec.all.map(\.name).joined(separator: ", ")).")
        }
        self = try spec.command(request.body)
    }
}

extension CommandSpec {
    /// The command called `name`, nil when there is none.
    public static func named(_ name: String) -> CommandSpec? { byName[name] }

    private static let byName: [String: CommandSpec] = Dictionary(all.map { ($0.name, $0) }) { first, _ in first }

    /// Every command, in the order docs/protocol.md lists them.
    public static let all: [CommandSpec] = [
        CommandSpec("status", "what the timer is doing", result: "the status object") { _ in .status },
        CommandSpec(
            "start",
            "from idle: start a task's work phase; from pending: start the pending phase (or the named task's work); from paused: resume",
            result: "the status object",
            fields: [Fields.taskToStart, Fields.noteToStart, Fields.taskwarrior, Fields.taskwarriorProject], writes: true
        ) { a in
            .start(
                task: a[Fields.taskToStart], note: a[Fields.noteToStart],
                taskwarrior: a[Fields.taskwarrior] == nil && a[Fields.taskwarriorProject] == nil
                    ? nil : TaskwarriorLink(uuid: a[Fields.taskwarrior] ?? "", project: a[Fields.taskwarriorProject]))
        },
        CommandSpec(
            "pause", "pause the running phase (refused in strict focus mode during work)", result: "the status object", writes: true
        ) { _ in .pause },
        CommandSpec("resume", "resume the paused phase", result: "the status object", writes: true) { _ in .resume },
        CommandSpec(
            "toggle", "pause when running, resume when paused, start when pending or idle",
            result: "the status object", fields: [Fields.taskToStart], writes: true
        ) { .toggle(task: $0[Fields.taskToStart]) },
        CommandSpec("stop", "give up the phase; work is recorded as abandoned", result: "the status object (idle)", writes: true) { _ in
            .stop
        },
        CommandSpec("skip", "end the phase now and move on; work is recorded as skipped", result: "the status object", writes: true) { _ in
            .skip
        },
        CommandSpec(
            "extend", "add time to the running or paused phase (a phase lasts at most 24h)",
            result: "the status object", fields: [Fields.extendBy], writes: true
        ) { .extend(seconds: $0[Fields.extendBy]) },
        CommandSpec(
            "away", "the person left the computer: the [presence] policy applies (diligenced.conf(5))", result: "the status object",
            writes: true
        ) { _ in .away },
        CommandSpec(
            "back", "the person is back: work paused by leaving resumes, work waiting for them starts", result: "the status object",
            writes: true
        ) { _ in .back },
        CommandSpec(
            "discard_away", "take the time away that work counted (on_away = continue) out of it, as the notification's button does",
            result: "the status object", writes: true
        ) { _ in .discardAway },
        CommandSpec(
            "note", "note the running or paused work phase: the note is recorded with its session",
            result: "the status object", fields: [Fields.note], writes: true
        ) { .note(text: $0[Fields.note]) },
        CommandSpec(
            "interrupt",
            "mark the running or paused work with an interruption, recorded with its session; no deadline moves (a void_on_interrupt task's work ends at an external one)",
            result: "the status object", fields: [Fields.interruptionKind, Fields.interruptionNote], writes: true
        ) { .interrupt(kind: $0[Fields.interruptionKind], note: $0[Fields.interruptionNote]) },
        CommandSpec("version", "the protocol and release", result: "{\"protocol\": 1, \"version\": RELEASE}") { _ in .version },
        CommandSpec(
            "doctor", "what works for this daemon: notifications, sound, presence, sync and hooks, and what to install where one does not",
            result: "{\"checks\": [check, ...]}"
        ) { _ in .doctor },
        CommandSpec(
            "reload", "re-read the config file, as SIGHUP does; a bad file is refused and the old settings stay",
            result: "{\"reloaded\": true, \"config\": PATH}"
        ) { _ in .reload },
        CommandSpec("watch", "turn the connection into an event stream", result: "{\"watching\": true}, then events") { _ in .watch },
        CommandSpec(
            "task_list", "the tasks not archived (or as archived says), in creation order", result: "{\"tasks\": [task, ...]}",
            fields: [Fields.recentDays, Fields.archivedTasks]
        ) {
            .taskList(recentDays: $0[Fields.recentDays], archived: $0[Fields.archivedTasks])
        },
        CommandSpec("task_show", "one task", result: "the task object", fields: [Fields.task]) { .taskShow(task: $0[Fields.task]) },
        CommandSpec("task_add", "add a task", result: "the new task object", fields: [Fields.name] + Fields.taskFields, writes: true) {
            .taskAdd(name: $0[Fields.name], changes: TaskChanges($0))
        },
        CommandSpec(
            "task_edit", "change a task; a changed duration applies from the next phase",
            result: "the changed task object", fields: [Fields.task, Fields.newName] + Fields.taskFields, writes: true
        ) {
            .taskEdit(task: $0[Fields.task], newName: $0[Fields.newName], changes: TaskChanges($0))
        },
        CommandSpec(
            "task_remove", "remove a task and erase its recorded sessions (the last task not archived cannot be removed)",
            result: "{\"removed\": NAME, \"sessions_removed\": N, \"focused_seconds_removed\": S}",
            fields: [Fields.task, Fields.confirm, Fields.dryRun], writes: true
        ) {
            .taskRemove(task: $0[Fields.task], confirm: $0[Fields.confirm], dryRun: $0[Fields.dryRun])
        },
        CommandSpec(
            "task_archive", "archive a task: hidden from task_list and refused by start; its sessions and statistics are kept",
            result: "the task object", fields: [Fields.task], writes: true
        ) {
            .taskArchive(task: $0[Fields.task], archived: true)
        },
        CommandSpec("task_unarchive", "bring an archived task back", result: "the task object", fields: [Fields.task], writes: true) {
            .taskArchive(task: $0[Fields.task], archived: false)
        },
        CommandSpec(
            "stats", "statistics of a day, week, month, year or everything (diligencectl(1), stats)",
            result: "the statistics object",
            fields: [Fields.period, Fields.statsOffset, Fields.taskFilter, Fields.statsDate, Fields.deviceFilter]
        ) {
            .stats(
                period: $0[Fields.period], offset: $0[Fields.statsOffset], task: $0[Fields.taskFilter], date: $0[Fields.statsDate],
                device: $0[Fields.deviceFilter])
        },
        CommandSpec(
            "week", "one ISO week, Monday to Sunday: plan and done per day", result: "the week object",
            fields: [Fields.weekOffset, Fields.deviceFilter]
        ) {
            .week(offset: $0[Fields.weekOffset], device: $0[Fields.deviceFilter])
        },
        CommandSpec(
            "plan_set", "plan a task for a day (starting from idle without a task starts it that day)",
            result: "{\"day\": \"YYYY-MM-DD\", \"task\": NAME}", fields: [Fields.day, Fields.plannedTask, Fields.planOffset], writes: true
        ) {
            .planSet(day: $0[Fields.day], task: $0[Fields.plannedTask], offset: $0[Fields.planOffset])
        },
        CommandSpec(
            "plan_clear", "forget a day's plan", result: "{\"day\": \"YYYY-MM-DD\", \"cleared\": true or false}",
            fields: [Fields.day, Fields.planOffset], writes: true
        ) {
            .planClear(day: $0[Fields.day], offset: $0[Fields.planOffset])
        },
        CommandSpec(
            "history", "recorded work sessions, oldest first by start", result: "{\"sessions\": [session, ...]}",
            fields: [Fields.taskFilter, Fields.since, Fields.until, Fields.limit, Fields.deviceFilter, Fields.stream]
        ) {
            .history(
                task: $0[Fields.taskFilter], since: $0[Fields.since], until: $0[Fields.until], limit: $0[Fields.limit],
                device: $0[Fields.deviceFilter], stream: $0[Fields.stream])
        },
        CommandSpec(
            "history_add", "record a completed session the timer missed (focused = planned = its length)",
            result: "the new session", fields: [Fields.task, Fields.start, Fields.end, Fields.pauses], writes: true
        ) {
            .historyAdd(task: $0[Fields.task], start: $0[Fields.start], end: $0[Fields.end], pauses: $0[Fields.pauses])
        },
        CommandSpec(
            "history_remove", "delete a recorded session", result: "{\"removed\": session}", fields: [Fields.sessionID], writes: true
        ) {
            .historyRemove(id: $0[Fields.sessionID])
        },
        CommandSpec(
            "history_edit", "change a session's task, start, end or note, under the rules of history_add",
            result: "the changed session", fields: [Fields.sessionID, Fields.newTask, Fields.newStart, Fields.newEnd, Fields.newNote],
            writes: true
        ) {
            .historyEdit(
                id: $0[Fields.sessionID],
                changes: SessionChanges(
                    task: $0[Fields.newTask], start: $0[Fields.newStart], end: $0[Fields.newEnd], note: $0[Fields.newNote]))
        },
        CommandSpec(
            "export", "recorded sessions as a file", result: "{\"format\": ..., \"count\": N, \"content\": \"...\"}",
            fields: [Fields.format, Fields.taskFilter, Fields.since, Fields.until, Fields.withTasks, Fields.deviceFilter, Fields.segments]
        ) {
            .export(
                format: $0[Fields.format], task: $0[Fields.taskFilter], since: $0[Fields.since], until: $0[Fields.until],
                withTasks: $0[Fields.withTasks], device: $0[Fields.deviceFilter], segments: $0[Fields.segments])
        },
        CommandSpec(
            "import", "add the sessions (and task definitions, plans) of a JSON-lines export, in chunks (see Import)",
            result:
                "the last chunk: {\"imported\": N, \"skipped\": M, \"tasks_added\": T, \"tasks_replaced\": R, \"plans_set\": P}; another: {\"import_id\": ID, \"received\": N}",
            fields: [Fields.content, Fields.importID, Fields.more, Fields.replaceTasks], writes: true
        ) {
            .importChunk(
                content: $0[Fields.content], importID: $0[Fields.importID], more: $0[Fields.more], replaceTasks: $0[Fields.replaceTasks])
        },
        CommandSpec(
            "backup", "copy the database, whole and consistent, to a new file while the daemon runs (SQLite's online backup)",
            result: "{\"path\": PATH, \"bytes\": N, \"sessions\": N, \"tasks\": N}", fields: [Fields.backupPath]
        ) { .backup(path: $0[Fields.backupPath]) },
        CommandSpec(
            "sync_enable", "keep this device's journal in a sync folder and write the history there (diligencectl(1), sync)",
            result: "the sync status", fields: [Fields.syncDirectory, Fields.deviceName, Fields.newDevice], writes: true
        ) {
            .syncEnable(directory: $0[Fields.syncDirectory], name: $0[Fields.deviceName], newDevice: $0[Fields.newDevice])
        },
        CommandSpec("sync_status", "the sync folder, this device and its journal", result: "the sync status") { _ in .syncStatus },
        CommandSpec("sync_disable", "stop writing the journal (the folder's files stay)", result: "the sync status", writes: true) { _ in
            .syncDisable
        },
        CommandSpec(
            "timewarrior_sync",
            "make Timewarrior hold exactly the whole history's focus segments ([timewarrior] mirror): read timew export, delete and track the difference",
            result: "{\"dry_run\": B, \"deleted\": [interval, ...], \"tracked\": [interval, ...], \"unchanged\": N}",
            fields: [Fields.timewarriorDryRun]
        ) { .timewarriorSync(dryRun: $0[Fields.timewarriorDryRun]) },
    ]
}
