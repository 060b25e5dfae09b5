import DiligenceCore
import DiligenceJSON
import DiligenceTime

/// Protocol constants (docs/protocol.md).
public enum ProtocolInfo {
    /// Bumped only for changes that break existing scripts.
    public static let version = 1
    /// The release of diligence: the file VERSION (one line), compiled in; the Debian package
    /// has the same version (`make deb`).
    public static let release = String(decoding: PackageResources.VERSION.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
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
            return .failure(ProtocolFailure(error: DiligenceError(DiligenceError.Code(error.code), error.message), id: nil))
        }
        guard case .object = json else {
            return .failure(
                ProtocolFailure(
                    error: DiligenceError(
                        .notAnObject, "Each request is a JSON object, e.g. {\"command\":\"status\"}; got \(json.typeName.withArticle)."),
                    id: nil))
        }
        let id = json["id"]
        guard let commandValue = json["command"] else {
            return .failure(
                ProtocolFailure(
                    error: DiligenceError(.missingCommand, "The request has no \"command\" field, e.g. {\"command\":\"status\"}."), id: id
                ))
        }
        guard let command = commandValue.stringValue else {
            return .failure(
                ProtocolFailure(
                    error: DiligenceError(.invalidArgument, "\"command\" must be a string; got \(commandValue.typeName.withArticle)."),
                    id: id))
        }
        return .success(Request(command: command, id: id, body: json))
    }

    private init(command: String, id: JSON?, body: JSON) {
        self.command = command
        self.id = id
        self.body = body
    }

    public var line: String { body.serialized + "\n" }
}

extension DiligenceError.Code {
    /// The protocol's code for a line that is not acceptable JSON.
    init(_ code: JSONParseError.Code) {
        switch code {
        case .invalidJSON: self = .invalidJSON
        case .invalidUTF8: self = .invalidUTF8
        case .tooDeep: self = .tooDeep
        case .numberOutOfRange: self = .numberOutOfRange
        }
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

    /// `ok(result, id:)` for a result already encoded (`result.serialized`).
    public static func ok(serialized result: String, id: JSON?) -> String {
        var line = #"{"ok":true,"result":"# + result
        if let id { line += #","id":"# + id.serialized }
        return line + "}\n"
    }

    public static func error(_ error: DiligenceError, id: JSON?) -> String {
        var members: [(String, JSON)] = [
            ("ok", .bool(false)),
            ("error", .object([("code", .string(error.code.rawValue)), ("message", .string(error.message))])),
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
            ("note", .string(note)),
            ("presence", .string(presence.rawValue)),
            ("away_since", .string(awaySince.map(RFC3339.format))),
            ("away_offered", .bool(awayOffered)),
            ("interruptions", .int(interruptions.count)),
        ])
    }
}

extension WorkSession {
    public var json: JSON {
        .object([
            ("id", .int(id)),
            // null only for a session not recorded yet (one waiting in a spill file).
            ("uuid", .string(uuid.isEmpty ? nil : uuid)),
            ("task", .string(taskName)),
            ("start", .string(RFC3339.format(start))),
            ("end", .string(RFC3339.format(end))),
            ("planned_seconds", .int(plannedSeconds)),
            ("focused_seconds", .int(focusedSeconds)),
            ("pauses", .int(pauses)),
            ("outcome", .string(outcome.rawValue)),
            ("note", .string(note)),
            ("away_seconds", .int(awaySeconds)),
            ("reason", .string(reason?.rawValue)),
            ("device", .string(device)),
            ("interruptions", .array(interruptions.map { $0.json(wire: true) })),
            (
                "segments",
                .array(
                    segments.map {
                        .object([
                            ("start", .string(RFC3339.format($0.start))), ("end", .string(RFC3339.format($0.end))),
                            ("seconds", .int($0.seconds)),
                        ])
                    })
            ),
        ])
    }

    /// `json` with the name of the device that recorded it after its id (`history`).
    public func json(deviceName: String?) -> JSON {
        guard case .object(var members) = json else { return json }
        members.append(("device_name", .string(deviceName)))
        return .object(members)
    }
}

extension WorkSession {
    /// The session an object in the shape of `json` above holds (`export --format jsonl` lines,
    /// spill files), its task by name (`taskID` is 0: the caller looks the name up); or why it
    /// is not one. `uuid` is kept when present (it must be a UUID, `UUIDText.parse`); `id` and
    /// other members are ignored. Numbers of any size are read: whether
    /// they are in range is for the session rules to say.
    public static func exported(_ json: JSON) -> Result<WorkSession, DiligenceError> {
        func bad(_ message: String) -> Result<WorkSession, DiligenceError> { .failure(DiligenceError(.invalidImport, message)) }
        guard case .object = json else { return bad("expected a session object, got \(json.typeName.withArticle)") }
        guard let name = json["task"]?.stringValue, let startText = json["start"]?.stringValue, let endText = json["end"]?.stringValue,
            let outcomeText = json["outcome"]?.stringValue
        else {
            return bad("\"task\", \"start\", \"end\" and \"outcome\" are each a string")
        }
        var numbers: [Int] = []
        for key in ["planned_seconds", "focused_seconds", "pauses"] {
            switch json[key] {
            case .int(let number)?: numbers.append(Int(number))
            case .double(let number)? where number.isFinite && number == number.rounded(.towardZero):
                numbers.append(Int(saturating: number))
            case let value?: return bad("\"\(key)\" is \(value.serialized.prefix(40)), not a whole number")
            case nil: return bad("\"\(key)\" is missing")
            }
        }
        guard let start = RFC3339.parse(startText) else { return bad("\"start\": \(startText.debugDescription) is not an RFC 3339 time") }
        guard let end = RFC3339.parse(endText) else { return bad("\"end\": \(endText.debugDescription) is not an RFC 3339 time") }
        guard let outcome = Outcome(rawValue: outcomeText) else {
            return bad("\"outcome\": \(outcomeText.debugDescription) is not completed, skipped or abandoned")
        }
        let uuid: String
        switch Self.uuid(json["uuid"]) {
        case .success(let read): uuid = read
        case .failure(let error): return .failure(error)
        }
        var note: String?
        switch json["note"] {
        case nil, .null?: break
        case .string(let text)?:
            do { note = try SessionNote.normalize(text, label: "\"note\"") } catch { return bad(error.message) }
        case let value?: return bad("\"note\" is \(value.typeName.withArticle), not a string")
        }
        // Optional: exports older than presence have neither.
        var awaySeconds = 0
        switch json["away_seconds"] {
        case nil, .null?: break
        case .int(let number)?: awaySeconds = Int(number)
        case let value?: return bad("\"away_seconds\" is \(value.serialized.prefix(40)), not a whole number")
        }
        let reason: EndReason?
        switch Self.reason(json["reason"]) {
        case .success(let read): reason = read
        case .failure(let error): return .failure(error)
        }
        // Optional: exports older than interruptions have none.
        let interruptions: [Interruption]
        switch Interruption.list(json["interruptions"], wire: true) {
        case .success(let list): interruptions = list
        case .failure(let error): return .failure(error)
        }
        let segments: [FocusSegment]?
        switch Self.segments(json["segments"], start: start, end: end, focused: numbers[1]) {
        case .success(let read): segments = read
        case .failure(let error): return .failure(error)
        }
        return .success(
            WorkSession(
                taskID: 0, taskName: name, start: start, end: end, plannedSeconds: numbers[0],
                focusedSeconds: numbers[1], pauses: numbers[2], outcome: outcome, uuid: uuid, note: note,
                awaySeconds: awaySeconds, reason: reason, interruptions: interruptions, segments: segments))
    }

    /// An exported session's `uuid`: absent, null or empty (a new one is given), or a UUID.
    static func uuid(_ json: JSON?) -> Result<String, DiligenceError> {
        switch json {
        case nil, .null?, .string("")?: return .success("")
        case .string(let text)?:
            guard let parsed = UUIDText.parse(text) else {
                return .failure(
                    DiligenceError(
                        .invalidImport,
                        "\"uuid\": \(String(text.prefix(40)).debugDescription) is not a UUID (8-4-4-4-12 hexadecimal digits)"))
            }
            return .success(parsed)
        case let value?: return .failure(DiligenceError(.invalidImport, "\"uuid\" is \(value.typeName.withArticle), not a string"))
        }
    }

    /// An exported session's `segments` (`json`'s form): absent or null (an export older than
    /// segments) is nil, one from the start; a list that does not fit the session is fitted to
    /// it (`FocusSegment.accepted`: the export's whole seconds, an edited file).
    static func segments(_ json: JSON?, start: Double, end: Double, focused: Int) -> Result<[FocusSegment]?, DiligenceError> {
        guard let json, !json.isNull else { return .success(nil) }
        guard let items = json.arrayValue else {
            return .failure(DiligenceError(.invalidImport, "\"segments\" is \(json.typeName.withArticle), not an array"))
        }
        var list: [FocusSegment] = []
        for item in items {
            guard let from = item["start"]?.stringValue.flatMap(RFC3339.parse), let seconds = item["seconds"]?.intValue else {
                return .failure(
                    DiligenceError(.invalidImport, "\"segments\": each has a \"start\" (RFC 3339) and \"seconds\" (a whole number)"))
            }
            list.append(FocusSegment(start: from, seconds: Int(seconds)))
        }
        return .success(FocusSegment.accepted(list, start: start, end: end, focused: focused))
    }

    /// An exported session's `reason`: absent or null, or an `EndReason`.
    static func reason(_ json: JSON?) -> Result<EndReason?, DiligenceError> {
        switch json {
        case nil, .null?: return .success(nil)
        case .string(let text)?:
            if let known = EndReason(rawValue: text) { return .success(known) }
            let known = EndReason.allCases.map(\.rawValue).joined(separator: ", ")
            return .failure(DiligenceError(.invalidImport, "\"reason\": \(text.debugDescription) is not \(known) or null"))
        case let value?: return .failure(DiligenceError(.invalidImport, "\"reason\" is \(value.typeName.withArticle), not a string"))
        }
    }
}
