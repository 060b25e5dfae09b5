import DiligenceJSON
import DiligenceTime

extension TaskConfig {
    /// The task object: the wire's (`task_list`, `export --with-tasks`) and a sync journal's
    /// task line, one shape in the module both the protocol and sync build on.
    public var json: JSON {
        .object([
            ("id", .int(id)),
            ("uuid", .string(uuid)),
            ("name", .string(name)),
            ("description", .string(description)),
            ("color", .string(color.rawValue)),
            ("work_seconds", .int(workSeconds)),
            ("short_break_seconds", .int(shortBreakSeconds)),
            ("long_break_seconds", .int(longBreakSeconds)),
            ("long_break_every", .int(longBreakEvery)),
            ("breaks", .bool(breaks)),
            ("autostart", .string(autostart.rawValue)),
            ("focus_mode", .bool(focusMode)),
            ("goal", .int(goal)),
            ("reminder", .string(reminderMinute.map(TimeOfDay.format))),
            ("sound", .string(sound)),
            ("archived", .bool(archived)),
            ("away", .string(awayPolicy?.rawValue ?? "default")),
            ("dnd", .string(doNotDisturb.map { $0 ? "on" : "off" } ?? "default")),
            ("mode", .string(mode.rawValue)),
            ("break_ratio", .string(breakRule.text)),
            ("min_break_seconds", .int(minBreakSeconds)),
            ("max_break_seconds", .int(maxBreakSeconds)),
            ("flow_nudge_seconds", flowNudgeSeconds.map { .int($0) } ?? .null),
            ("overtime", .bool(overtime)),
            ("void_on_interrupt", .bool(voidOnInterrupt)),
        ])
    }
}

extension TaskConfig {
    /// The task a task object (`json` above: `export --with-tasks` lines, journal lines)
    /// describes, its id 0; or why it is not one. Every member present is checked: its type and
    /// its documented range (`validate`). A member left out takes the default, unless `complete`:
    /// a journal line carries every setting, so one left out is a damaged line, not a default.
    /// `uuid`, `archived`, `away`, `dnd` and `void_on_interrupt` are kept when present; so are the flow and overtime
    /// members, which a line of an older version lacks even when `complete` (they default).
    public static func exported(_ json: JSON, complete: Bool = false) -> Result<TaskConfig, DiligenceError> {
        do throws(DiligenceError) {
            return .success(try TaskObject(json: json, complete: complete).config())
        } catch {
            return .failure(error)
        }
    }
}

/// Reads a task object's members, each of its one type.
private struct TaskObject {
    let json: JSON
    let complete: Bool

    func config() throws(DiligenceError) -> TaskConfig {
        guard case .object = json else { throw Self.bad("a task is an object, not \(json.typeName.withArticle)") }
        guard let nameText = try member("name", "a string", \.stringValue) else { throw Self.bad("a task needs its \"name\"") }
        var task: TaskConfig
        do { task = TaskConfig(name: try TaskName.normalize(nameText)) } catch { throw Self.bad("the task's name: \(error.message)") }
        task.description = try member("description", "a string", \.stringValue) ?? task.description
        task.color =
            try member("color", TaskColor.allCases.map(\.rawValue).joined(separator: ", ")) { $0.stringValue.flatMap(TaskColor.init) }
            ?? task.color
        task.autostart =
            try member("autostart", Autostart.allCases.map(\.rawValue).joined(separator: ", ")) {
                $0.stringValue.flatMap(Autostart.init)
            } ?? task.autostart
        task.workSeconds = try whole("work_seconds") ?? task.workSeconds
        task.shortBreakSeconds = try whole("short_break_seconds") ?? task.shortBreakSeconds
        task.longBreakSeconds = try whole("long_break_seconds") ?? task.longBreakSeconds
        task.longBreakEvery = try whole("long_break_every") ?? task.longBreakEvery
        task.goal = try whole("goal") ?? task.goal
        task.breaks = try member("breaks", "true or false", \.boolValue) ?? task.breaks
        task.focusMode = try member("focus_mode", "true or false", \.boolValue) ?? task.focusMode
        // Optional even in a journal line: lines written before interruptions lack it.
        task.voidOnInterrupt = try member("void_on_interrupt", "true or false", optional: true, \.boolValue) ?? false
        task.archived = try member("archived", "true or false", \.boolValue) ?? false
        task.sound = try nullable("sound", "a string or null", \.stringValue) ?? nil
        task.reminderMinute = try nullable("reminder", "HH:MM or null") { $0.stringValue.flatMap(TimeOfDay.parse) } ?? nil
        let policies = AwayPolicy.allCases.map(\.rawValue).joined(separator: ", ")
        switch json["away"] {
        case nil, .string("default")?: break
        case let value?:
            guard let policy = value.stringValue.flatMap(AwayPolicy.init) else {
                throw Self.bad("the task's \"away\" is not default, \(policies)")
            }
            task.awayPolicy = policy
        }
        switch json["dnd"] {
        case nil, .string("default")?: break
        case .string("on")?: task.doNotDisturb = true
        case .string("off")?: task.doNotDisturb = false
        default: throw Self.bad("the task's \"dnd\" is not on, off or default")
        }
        try readFlow(into: &task)
        if let text = try member("uuid", "a string", optional: true, \.stringValue), !text.isEmpty {
            guard let uuid = UUIDText.parse(text) else { throw Self.bad("the task's \"uuid\" is not a UUID") }
            task.uuid = uuid
        }
        do { try task.validate() } catch { throw Self.bad("the task \(task.name): \(error.message)") }
        return task
    }

    /// The flow and overtime members, each optional: an older version's task has none.
    func readFlow(into task: inout TaskConfig) throws(DiligenceError) {
        let modes = TaskMode.allCases.map(\.rawValue).joined(separator: " or ")
        task.mode = try member("mode", modes, optional: true) { $0.stringValue.flatMap(TaskMode.init) } ?? task.mode
        task.breakRule =
            try member("break_ratio", FlowBreakRule.expected, optional: true) { $0.stringValue.flatMap(FlowBreakRule.parse) }
            ?? task.breakRule
        task.minBreakSeconds = try whole("min_break_seconds", optional: true) ?? task.minBreakSeconds
        task.maxBreakSeconds = try whole("max_break_seconds", optional: true) ?? task.maxBreakSeconds
        if case .null? = json["flow_nudge_seconds"] {
            task.flowNudgeSeconds = nil
        } else {
            task.flowNudgeSeconds = try whole("flow_nudge_seconds", optional: true)
        }
        task.overtime = try member("overtime", "true or false", optional: true, \.boolValue) ?? false
    }

    /// `json[key]` read by `read`; nil when absent (an error when `complete`, unless `optional`).
    func member<T>(_ key: String, _ kind: String, optional: Bool = false, _ read: (JSON) -> T?) throws(DiligenceError) -> T? {
        guard let value = json[key] else {
            if complete && !optional { throw Self.bad("the task's \"\(key)\" is missing") }
            return nil
        }
        guard let read = read(value) else { throw Self.bad("the task's \"\(key)\" is not \(kind)") }
        return read
    }

    /// Like `member`, where null is a value (nil inside): absent is `nil`, null is `.some(nil)`.
    func nullable<T>(_ key: String, _ kind: String, _ read: (JSON) -> T?) throws(DiligenceError) -> T?? {
        if case .null? = json[key] { return .some(nil) }
        return try member(key, kind, read).map { .some($0) }
    }

    func whole(_ key: String, optional: Bool = false) throws(DiligenceError) -> Int? {
        try member(key, "a whole number", optional: optional) { $0.intValue.flatMap { Int(exactly: $0) } }
    }

    static func bad(_ message: String) -> DiligenceError { DiligenceError(.invalidImport, message) }
}
