import DiligenceCore
import DiligenceTime

/// Protocol constants (docs/protocol.md).
public enum ProtocolInfo {
    /// Bumped only for changes that break existing scripts.
    public static let version = 1
    /// The release of diligence.
    public static let release = "0.1.0"
    /// Longest request line accepted, in bytes.
    public static let maxLineBytes = 64 * 1024
}

/// One request line, parsed: `{"command": "...", ...arguments, "id": ...}`.
public struct Request: Sendable {
    public var command: String
    /// Echoed back in the response when present.
    public var id: JSON?
    public var body: JSON

    public init(command: String, id: JSON? = nil, arguments: [(String, JSON)] = []) {
        self.command = command
        self.id = id
        var members: [(String, JSON)] = [("command", .string(command))]
        members += arguments
        if let id { members.append(("id", id)) }
        self.body = .object(members)
    }

    /// Parses one line. The error is what the daemon answers (with `id` when one could be read).
    public static func parse<Bytes: Collection<UInt8>>(line: Bytes) -> Result<Request, ProtocolFailure> {
        let json: JSON
        do {
            json = try JSON.parse(line)
        } catch {
            return .failure(ProtocolFailure(error: DiligenceError(error.code, error.message), id: nil))
        }
        guard case .object = json else {
            return .failure(ProtocolFailure(error: DiligenceError("not_an_object", "Each request is a JSON object, e.g. {\"command\":\"status\"}; got \(json.typeName.withArticle)."), id: nil))
        }
        let id = json["id"]
        guard let commandValue = json["command"] else {
            return .failure(ProtocolFailure(error: DiligenceError("missing_command", "The request has no \"command\" field, e.g. {\"command\":\"status\"}."), id: id))
        }
        guard let command = commandValue.stringValue else {
            return .failure(ProtocolFailure(error: DiligenceError("invalid_argument", "\"command\" must be a string; got \(commandValue.typeName.withArticle)."), id: id))
        }
        return .success(Request(command: command, id: id, body: json))
    }

    private init(command: String, id: JSON?, body: JSON) {
        self.command = command
        self.id = id
        self.body = body
    }

    public var line: String { body.serialized + "\n" }

    // MARK: Typed arguments

    /// A string argument; nil when absent or null.
    public func string(_ key: String) throws(DiligenceError) -> String? {
        guard let v = body[key], !v.isNull else { return nil }
        guard let s = v.stringValue else { throw Self.wrongType(key, "a string", v) }
        return s
    }

    public func requiredString(_ key: String) throws(DiligenceError) -> String {
        guard let s = try string(key) else {
            throw DiligenceError("missing_argument", "\"\(command)\" needs the argument \"\(key)\".")
        }
        return s
    }

    public func bool(_ key: String) throws(DiligenceError) -> Bool? {
        guard let v = body[key], !v.isNull else { return nil }
        guard let b = v.boolValue else { throw Self.wrongType(key, "true or false", v) }
        return b
    }

    public func int(_ key: String) throws(DiligenceError) -> Int? {
        guard let v = body[key], !v.isNull else { return nil }
        guard let i = v.intValue, let small = Int(exactly: i), small.magnitude <= 1 << 40 else { throw Self.wrongType(key, "a whole number", v) }
        return small
    }

    /// A duration given as whole seconds (number) or as text (`25m`, `1h30m`, `90s`; bare number = minutes).
    public func duration(_ key: String) throws(DiligenceError) -> Int? {
        guard let v = body[key], !v.isNull else { return nil }
        if let text = v.stringValue {
            guard let seconds = DurationText.parse(text) else {
                throw DiligenceError("invalid_duration", "\"\(key)\": \(text.debugDescription) is not \(DurationText.expected).")
            }
            return seconds
        }
        guard let i = v.intValue, i >= 0, i <= DurationText.maxSeconds else {
            throw DiligenceError("invalid_duration", "\"\(key)\" must be whole seconds between 0 and \(DurationText.maxSeconds), or text such as \"25m\".")
        }
        return Int(i)
    }

    static func wrongType(_ key: String, _ expected: String, _ got: JSON) -> DiligenceError {
        DiligenceError("invalid_argument", "\"\(key)\" must be \(expected); got \(got.typeName.withArticle).")
    }
}

/// A request that could not be served, with the id to echo.
public struct ProtocolFailure: Error, Sendable {
    public var error: DiligenceError
    public var id: JSON?
}

/// Response lines.
public enum Response {
    public static func ok(_ result: JSON, id: JSON?) -> String {
        var members: [(String, JSON)] = [("ok", .bool(true)), ("result", result)]
        if let id { members.append(("id", id)) }
        return JSON.object(members).serialized + "\n"
    }

    public static func error(_ error: DiligenceError, id: JSON?) -> String {
        var members: [(String, JSON)] = [
            ("ok", .bool(false)),
            ("error", .object([("code", .string(error.code)), ("message", .string(error.message))])),
        ]
        if let id { members.append(("id", id)) }
        return JSON.object(members).serialized + "\n"
    }

    /// An event line of a watch stream.
    public static func event(_ name: String, status: JSON, extra: [(String, JSON)] = []) -> String {
        JSON.object([("event", .string(name))] + extra + [("status", status)]).serialized + "\n"
    }
}

// MARK: Values on the wire

extension TaskConfig {
    public var json: JSON {
        .object([
            ("id", .int(id)),
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
        ])
    }

    /// Applies the task fields present in `request` (task_add and task_edit), checking each type.
    /// Durations: `work`, `short_break`, `long_break` as seconds or text (`25m`), or `work_seconds` ...
    /// Reminder: `"HH:MM"` or `"off"`/null; sound: a name or `"off"`/null.
    public mutating func apply(_ request: Request) throws(DiligenceError) {
        if let v = try request.string("description") { description = v }
        if let v = try request.string("color") {
            guard let c = TaskColor(rawValue: v) else {
                throw DiligenceError("invalid_value", "color must be one of \(TaskColor.allCases.map(\.rawValue).joined(separator: ", ")); got \(v.debugDescription).")
            }
            color = c
        }
        for (key, path) in [("work", \TaskConfig.workSeconds), ("short_break", \.shortBreakSeconds), ("long_break", \.longBreakSeconds)] {
            if let v = try request.duration(key) { self[keyPath: path] = v }
            if let v = try request.duration(key + "_seconds") { self[keyPath: path] = v }
        }
        if let v = try request.int("long_break_every") { longBreakEvery = v }
        if let v = try request.bool("breaks") { breaks = v }
        if let v = try request.string("autostart") {
            guard let a = Autostart(rawValue: v) else {
                throw DiligenceError("invalid_value", "autostart must be one of none, breaks, work, all; got \(v.debugDescription).")
            }
            autostart = a
        }
        if let v = try request.bool("focus_mode") { focusMode = v }
        if let v = try request.int("goal") { goal = v }
        if request.body["reminder"] != nil {
            let v = try request.string("reminder")
            if v == nil || v == "off" {
                reminderMinute = nil
            } else if let m = TimeOfDay.parse(v!) {
                reminderMinute = m
            } else {
                throw DiligenceError("invalid_value", "reminder must be a time HH:MM (24-hour) or \"off\"; got \(v!.debugDescription).")
            }
        }
        if request.body["sound"] != nil {
            let v = try request.string("sound")
            sound = v == nil || v == "off" ? nil : v
        }
    }
}

extension TimerStatus {
    /// The `status` object (docs/protocol.md). `todayCompleted` comes from the store.
    public func json(todayCompleted: Int) -> JSON {
        .object([
            ("state", .string(state.rawValue)),
            ("phase", .string(phase?.rawValue)),
            ("task", .string(task?.name)),
            ("color", .string(task?.color.rawValue)),
            ("round", .int(round)),
            ("long_break_every", .int(longBreakEvery)),
            ("duration_seconds", .int(durationSeconds)),
            ("remaining_seconds", .int(remainingSeconds)),
            ("elapsed_seconds", .int(elapsedSeconds)),
            ("ends_at", .string(endsAt.map(RFC3339.format))),
            ("pauses", .int(pauses)),
            ("focus_mode", .bool(task?.focusMode ?? false)),
            ("today_completed", .int(todayCompleted)),
            ("goal", .int(task?.goal ?? 0)),
        ])
    }
}

extension WorkSession {
    public var json: JSON {
        .object([
            ("id", .int(id)),
            ("task", .string(taskName)),
            ("start", .string(RFC3339.format(start))),
            ("end", .string(RFC3339.format(end))),
            ("planned_seconds", .int(plannedSeconds)),
            ("focused_seconds", .int(focusedSeconds)),
            ("pauses", .int(pauses)),
            ("outcome", .string(outcome.rawValue)),
        ])
    }
}
