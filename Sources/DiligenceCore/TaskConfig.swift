/// A task's colour, as the seed app offered them.
public enum TaskColor: String, CaseIterable, Sendable {
    case red, orange, yellow, green, cyan, blue, purple
}

/// Which phases start by themselves when the previous one ends.
public enum Autostart: String, CaseIterable, Sendable {
    /// Every phase waits for `start` (the seed app's behaviour).
    case none
    /// Breaks start by themselves; work waits.
    case breaks
    /// Work starts by itself after a break; breaks wait.
    case work
    /// Everything chains.
    case all

    /// Whether a phase of this kind starts without the user.
    public func starts(_ phase: Phase) -> Bool {
        switch self {
        case .none: false
        case .all: true
        case .breaks: phase != .work
        case .work: phase == .work
        }
    }
}

/// A task's configuration: what a phase of it lasts and how phases follow each other.
public struct TaskConfig: Equatable, Sendable {
    /// Store id; 0 for a task not yet stored.
    public var id: Int64
    public var name: String
    public var description: String
    public var color: TaskColor
    public var workSeconds: Int
    public var shortBreakSeconds: Int
    public var longBreakSeconds: Int
    /// Rounds of work before a long break; 0 = never a long break.
    public var longBreakEvery: Int
    public var breaks: Bool
    public var autostart: Autostart
    /// Strict focus: pause and skip refused during work; a suspend abandons the work phase.
    public var focusMode: Bool
    /// What leaving the computer does to its work; nil: `[presence] on_away`.
    public var awayPolicy: AwayPolicy?
    /// Do not disturb during its work; nil: `[focus] do_not_disturb`.
    public var doNotDisturb: Bool?
    /// Completed work sessions per day; 0 = no goal.
    public var goal: Int
    /// Daily reminder as minutes after midnight, nil = off.
    public var reminderMinute: Int?
    /// Ambient sound name, nil = off.
    public var sound: String?
    /// Its stable identifier (`UUIDText`); "" until it is stored, when the store gives it one.
    /// A rename or an edit keeps it.
    public var uuid: String
    /// Archived: kept with its sessions and statistics, but hidden from lists and completion
    /// and refused by `start` (`task archive`, `task unarchive`).
    public var archived: Bool
    /// Pomodoro (work to a deadline) or flow (work counts up until ended; the break is earned).
    public var mode: TaskMode
    /// Flow: the break its work earns, and the bounds of that break.
    public var breakRule: FlowBreakRule
    public var minBreakSeconds: Int
    public var maxBreakSeconds: Int
    /// Flow: a notification after this much work (no stop); nil: none.
    public var flowNudgeSeconds: Int?
    /// Pomodoro: work goes on past the bell, counting up, until the person ends it.
    public var overtime: Bool
    /// An external interruption voids its work (abandoned, `interrupted`): the technique's strict rule.
    public var voidOnInterrupt: Bool

    public init(
        id: Int64 = 0, name: String, description: String = "", color: TaskColor = .blue,
        workSeconds: Int = 25 * 60, shortBreakSeconds: Int = 5 * 60, longBreakSeconds: Int = 15 * 60,
        longBreakEvery: Int = 4, breaks: Bool = true, autostart: Autostart = .none,
        focusMode: Bool = false, goal: Int = 0, reminderMinute: Int? = nil, sound: String? = nil, uuid: String = "",
        archived: Bool = false, awayPolicy: AwayPolicy? = nil, doNotDisturb: Bool? = nil, mode: TaskMode = .pomodoro,
        breakRule: FlowBreakRule = .standard, minBreakSeconds: Int = TaskConfig.defaultMinBreak,
        maxBreakSeconds: Int = TaskConfig.defaultMaxBreak, flowNudgeSeconds: Int? = nil, overtime: Bool = false,
        voidOnInterrupt: Bool = false
    ) {
        self.voidOnInterrupt = voidOnInterrupt
        self.mode = mode
        self.breakRule = breakRule
        self.minBreakSeconds = minBreakSeconds
        self.maxBreakSeconds = maxBreakSeconds
        self.flowNudgeSeconds = flowNudgeSeconds
        self.overtime = overtime
        self.awayPolicy = awayPolicy
        self.doNotDisturb = doNotDisturb
        self.id = id
        self.uuid = uuid
        self.archived = archived
        self.name = name
        self.description = description
        self.color = color
        self.workSeconds = workSeconds
        self.shortBreakSeconds = shortBreakSeconds
        self.longBreakSeconds = longBreakSeconds
        self.longBreakEvery = longBreakEvery
        self.breaks = breaks
        self.autostart = autostart
        self.focusMode = focusMode
        self.goal = goal
        self.reminderMinute = reminderMinute
        self.sound = sound
    }

    /// The planned length of `phase` under this configuration.
    public func seconds(for phase: Phase) -> Int {
        switch phase {
        case .work: workSeconds
        case .shortBreak: shortBreakSeconds
        case .longBreak: longBreakSeconds
        }
    }

    /// The seven tasks a fresh database holds, as the seed app ships them.
    public static let defaults: [TaskConfig] = [
        TaskConfig(name: "Work", color: .purple),
        TaskConfig(name: "Study", color: .blue),
        TaskConfig(name: "Exercise", color: .cyan),
        TaskConfig(name: "Meditate", color: .green),
        TaskConfig(name: "Wish", color: .yellow),
        TaskConfig(name: "Daily", color: .orange),
        TaskConfig(name: "Errands", color: .red),
    ]

    // MARK: Validation

    public static let maxNameLength = TaskName.maxLength
    public static let maxDescriptionLength = 1000
    public static let maxLongBreakEvery = 100
    public static let maxGoal = 1000

    /// Checks every field but the name against its documented range; the error names the field
    /// and what is allowed. The name has rules of its own (`TaskName.normalize`), applied when
    /// a name is set, so a task whose name predates them can still be edited.
    public func validate() throws(DiligenceError) {
        if description.count > Self.maxDescriptionLength {
            throw DiligenceError(.invalidValue, "A description has at most \(Self.maxDescriptionLength) characters.")
        }
        for (field, value, minimum) in [
            ("work", workSeconds, 1), ("short_break", shortBreakSeconds, 1), ("long_break", longBreakSeconds, 1),
        ] {
            if value < minimum || value > DurationText.maxSeconds {
                throw DiligenceError(
                    .invalidDuration,
                    "\(field) must be between 1s and \(DurationText.format(DurationText.maxSeconds)); got \(value) seconds.")
            }
        }
        if longBreakEvery < 0 || longBreakEvery > Self.maxLongBreakEvery {
            throw DiligenceError(
                .invalidValue, "long_break_every must be between 0 (never) and \(Self.maxLongBreakEvery); got \(longBreakEvery).")
        }
        if goal < 0 || goal > Self.maxGoal {
            throw DiligenceError(.invalidValue, "goal must be between 0 (none) and \(Self.maxGoal); got \(goal).")
        }
        if let m = reminderMinute, m < 0 || m >= 24 * 60 {
            throw DiligenceError(.invalidValue, "reminder must be a time HH:MM or off.")
        }
        if let s = sound,
            s.isEmpty || s.count > Self.maxNameLength || s.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        {
            throw DiligenceError(.invalidValue, "sound must be a name of at most \(Self.maxNameLength) characters, or off.")
        }
        try validateFlow()
    }
}

/// A phase of the cycle.
public enum Phase: String, CaseIterable, Sendable {
    case work
    case shortBreak = "short_break"
    case longBreak = "long_break"

    public var isBreak: Bool { self != .work }
}
