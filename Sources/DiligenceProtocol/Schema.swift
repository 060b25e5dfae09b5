import DiligenceCore
import DiligenceJSON
import DiligenceTime

// The schema of the control protocol: what each field of a request may hold. Every command's
// fields are declared once (`CommandSpec`); the daemon checks each request against them before
// any handler runs, the client builds its requests and help from them, docs/protocol.md's
// tables are compared with them by a test, and the grammar fuzzer generates requests from them.

/// What a request field holds, with its range.
public enum FieldType: Sendable, Equatable {
    /// A string of at most `maxLength` characters.
    case text(maxLength: Int)
    /// A new task name (`TaskName.normalize`: NFC, trimmed, 1 to 64 characters, nothing hidden).
    case taskName
    /// A device's name (`DeviceName.normalize`: the task-name rule).
    case deviceName
    /// A whole number in `range`: a JSON number without a fraction (`5.0` is 5, `-0` is 0).
    case integer(ClosedRange<Int64>)
    case boolean
    /// Whole seconds in `range`: a number, or text such as `"25m"` (DurationText).
    case duration(ClosedRange<Int>)
    /// One of `words`; another string is refused with `code`.
    case choice([String], code: DiligenceError.Code)
    /// `"HH:MM"` (24-hour), or `"off"` or null to turn it off.
    case timeOfDay
    /// A name of at most `maxLength` characters, or `"off"` or null to turn it off.
    case nameOrOff(maxLength: Int)
    /// A session note (`SessionNote.normalize`): one line, trimmed; empty removes the note.
    case note
    /// The break a flow session earns (`FlowBreakRule`): a ratio `1/5` or a table.
    case breakRule
    /// Whole seconds in `range` as `duration` takes them, or `"off"` or null to turn it off.
    case durationOrOff(ClosedRange<Int>)
}

/// Whether a field must be given, and what an absent one means.
public enum Presence: Sendable, Equatable {
    case required
    /// Absent (or null) means "not given"; the command decides what that does.
    case optional
    /// Absent (or null) means this value (already in checked form).
    case defaulted(JSON)
}

/// One field of a command: its name on the wire, its type and range, whether it is needed, and
/// one line saying what it does.
public struct FieldSpec: Sendable, Equatable {
    public let name: String
    public let type: FieldType
    public let presence: Presence
    public let doc: String

    public init(_ name: String, _ type: FieldType, _ presence: Presence, _ doc: String) {
        self.name = name
        self.type = type
        self.presence = presence
        self.doc = doc
    }

    public var isRequired: Bool { presence == .required }

    /// The value an absent field takes, as a person writes it (`0`, `today`, `5m`); nil when none.
    public var defaultText: String? {
        guard case .defaulted(let value) = presence else { return nil }
        switch (type, value) {
        case (.duration, .int(let seconds)): return DurationText.format(Int(seconds))
        case (_, .string(let text)): return text
        default: return value.serialized
        }
    }

    /// Checks one value given for this field and returns it in its checked form: integers as
    /// `.int`, durations as whole seconds, names normalized, "off" as null. `label` names the
    /// field in the error (`"offset"` on the wire, `--offset` on the command line).
    ///
    /// Errors: `invalid_argument` (wrong JSON type, a fraction), `out_of_range` (a number or a
    /// length outside the range; the message names the field and the range), `invalid_duration`,
    /// `invalid_name`, `invalid_value`, or the choice's own code.
    public func check(_ value: JSON, label: String? = nil) throws(DiligenceError) -> JSON {
        let label = label ?? "\"\(name)\""
        func wrongType(_ expected: String) -> DiligenceError {
            DiligenceError(.invalidArgument, "\(label) must be \(expected); got \(value.typeName.withArticle).")
        }
        switch type {
        case .text(let maxLength):
            guard let text = value.stringValue else { throw wrongType("a string") }
            // Characters are counted only when there are more bytes than the limit: a
            // character is at least a byte, and counting 32 KiB of an import chunk costs.
            if text.utf8.count > maxLength, case let length = text.count, length > maxLength {
                throw DiligenceError(.outOfRange, "\(label) holds at most \(maxLength) characters; got \(length).")
            }
            return value
        case .taskName:
            guard let text = value.stringValue else { throw wrongType("a string") }
            return .string(try TaskName.normalize(text))
        case .deviceName:
            guard let text = value.stringValue else { throw wrongType("a string") }
            return .string(try DeviceName.normalize(text))
        case .integer(let range):
            return .int(try Self.integer(value, in: range, label: label))
        case .boolean:
            guard value.boolValue != nil else { throw wrongType("true or false") }
            return value
        case .duration(let range):
            return .int(try Self.duration(value, in: range, label: label))
        case .choice(let words, let code):
            guard let word = value.stringValue else { throw wrongType("a string") }
            try Self.choose(word, from: words, code: code, label: label)
            return value
        case .timeOfDay:
            if value.isNull { return .null }
            guard let text = value.stringValue else { throw wrongType("a time \"HH:MM\", \"off\" or null") }
            if text == "off" { return .null }
            guard let minute = TimeOfDay.parse(text) else {
                throw DiligenceError(.invalidValue, "\(label) must be a time HH:MM (24-hour) or \"off\"; got \(text.debugDescription).")
            }
            return .string(TimeOfDay.format(minute))
        case .nameOrOff(let maxLength):
            if value.isNull { return .null }
            guard let text = value.stringValue else { throw wrongType("a name, \"off\" or null") }
            if text == "off" { return .null }
            guard !text.isEmpty, text.count <= maxLength,
                !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else {
                throw DiligenceError(
                    .invalidValue, "\(label) must be a name of 1 to \(maxLength) characters without control characters, or \"off\".")
            }
            return value
        case .note:
            guard let text = value.stringValue else { throw wrongType("a string") }
            return .string(try SessionNote.normalize(text, label: label) ?? "")
        case .breakRule:
            guard let text = value.stringValue else { throw wrongType("a string") }
            return .string(try Self.breakRule(text, label: label).text)
        case .durationOrOff(let range):
            if value.isNull || value.stringValue == "off" { return .null }
            return .int(try Self.duration(value, in: range, label: label))
        }
    }

    /// Refuses a word that is not one of `words`, with the nearest as a suggestion.
    private static func choose(_ word: String, from words: [String], code: DiligenceError.Code, label: String) throws(DiligenceError) {
        guard !words.contains(word) else { return }
        throw DiligenceError(
            code,
            "\(label) must be one of \(words.joined(separator: ", ")); got \(word.debugDescription)."
                + Suggestion.didYouMean(word, words, quote: "\""))
    }

    /// The break rule `text` writes, or `invalid_value` saying what one is.
    private static func breakRule(_ text: String, label: String) throws(DiligenceError) -> FlowBreakRule {
        guard let rule = FlowBreakRule.parse(text) else {
            throw DiligenceError(.invalidValue, "\(label) must be \(FlowBreakRule.expected); got \(text.debugDescription).")
        }
        return rule
    }

    /// A JSON number that is a whole number in `range`. Checked without any trapping conversion:
    /// `1e308`, `2^63` and `-0` are numbers like any other here.
    static func integer(
        _ value: JSON, in range: ClosedRange<Int64>, label: String, rangeText: String? = nil,
        expected: String = "a whole number"
    ) throws(DiligenceError) -> Int64 {
        let rangeText = rangeText ?? "\(range.lowerBound) and \(range.upperBound)"
        let number: Int64
        switch value {
        case .int(let i):
            number = i
        case .double(let d) where d.isFinite && d == d.rounded(.towardZero):
            guard let exact = Int64(exactly: d) else {
                throw DiligenceError(.outOfRange, "\(label) must be between \(rangeText); got \(value.serialized).")
            }
            number = exact
        case .double:
            throw DiligenceError(.invalidArgument, "\(label) must be \(expected); got \(value.serialized).")
        default:
            throw DiligenceError(.invalidArgument, "\(label) must be \(expected); got \(value.typeName.withArticle).")
        }
        guard range.contains(number) else {
            throw DiligenceError(.outOfRange, "\(label) must be between \(rangeText); got \(value.serialized).")
        }
        return number
    }

    /// The range as docs/protocol.md and error messages write it.
    /// A duration: whole seconds, or text such as "25m" (`DurationText`), within `range` seconds.
    private static func duration(_ value: JSON, in range: ClosedRange<Int>, label: String) throws(DiligenceError) -> Int64 {
        let bounds = Int64(range.lowerBound)...Int64(range.upperBound)
        let rangeText = Self.rangeText(.duration(range))
        guard let text = value.stringValue else {
            return try Self.integer(
                value, in: bounds, label: label, rangeText: rangeText, expected: "whole seconds or text such as \"25m\"")
        }
        guard let seconds = DurationText.parse(text) else {
            throw DiligenceError(.invalidDuration, "\(label): \(text.debugDescription) is not \(DurationText.expected).")
        }
        guard bounds.contains(Int64(seconds)) else {
            throw DiligenceError(.outOfRange, "\(label) must be between \(rangeText); got \(text.debugDescription).")
        }
        return Int64(seconds)
    }

    static func rangeText(_ type: FieldType) -> String {
        switch type {
        case .text(let maxLength): "at most \(maxLength) characters"
        case .taskName: "1 to \(TaskName.maxLength) characters"
        case .deviceName: "1 to \(DeviceName.maxLength) characters"
        case .integer(let range): "\(range.lowerBound) and \(range.upperBound)"
        case .boolean: "true or false"
        case .duration(let range): "\(DurationText.format(range.lowerBound)) and \(DurationText.format(range.upperBound))"
        case .choice(let words, _): words.joined(separator: ", ")
        case .timeOfDay: "HH:MM or off"
        case .nameOrOff(let maxLength): "a name of at most \(maxLength) characters, or off"
        case .note: "one line of at most \(SessionNote.maxLength) characters"
        case .breakRule: FlowBreakRule.expected
        case .durationOrOff(let range): "\(DurationText.format(range.lowerBound)) and \(DurationText.format(range.upperBound)), or off"
        }
    }
}

// MARK: Typed fields

/// Anything that declares a field: the list of a command's fields holds these.
public protocol FieldDeclaration: Sendable {
    var spec: FieldSpec { get }
}

/// A field with the Swift type its checked value is read as: `Fields.offset` is a
/// `Field<Int>`, so a handler gets an `Int` (the default when absent), never a JSON value.
public struct Field<Value: Sendable>: FieldDeclaration {
    public let spec: FieldSpec
    /// The value from the checked JSON (nil when absent). Never fails: `check` ran first.
    let read: @Sendable (JSON?) -> Value

    init(_ spec: FieldSpec, read: @escaping @Sendable (JSON?) -> Value) {
        self.spec = spec
        self.read = read
    }
}

extension Field where Value == String {
    static func text(_ name: String, maxLength: Int, _ doc: String) -> Field {
        Field(FieldSpec(name, .text(maxLength: maxLength), .required, doc)) { $0?.stringValue ?? "" }
    }

    static func taskName(_ name: String, _ doc: String) -> Field {
        Field(FieldSpec(name, .taskName, .required, doc)) { $0?.stringValue ?? "" }
    }

    /// A session note, trimmed; "" removes the note.
    static func note(_ name: String, _ doc: String) -> Field {
        Field(FieldSpec(name, .note, .required, doc)) { $0?.stringValue ?? "" }
    }
}

extension Field where Value == String? {
    static func text(_ name: String, maxLength: Int, _ doc: String) -> Field {
        Field(FieldSpec(name, .text(maxLength: maxLength), .optional, doc)) { $0?.stringValue }
    }

    static func taskName(_ name: String, _ doc: String) -> Field {
        Field(FieldSpec(name, .taskName, .optional, doc)) { $0?.stringValue }
    }

    static func deviceName(_ name: String, _ doc: String) -> Field {
        Field(FieldSpec(name, .deviceName, .optional, doc)) { $0?.stringValue }
    }

    /// A session note, trimmed; nil when absent, "" to remove one.
    static func note(_ name: String, _ doc: String) -> Field {
        Field(FieldSpec(name, .note, .optional, doc)) { $0?.stringValue }
    }
}

extension Field where Value == Int {
    static func integer(_ name: String, _ range: ClosedRange<Int64>, default value: Int, _ doc: String) -> Field {
        Field(FieldSpec(name, .integer(range), .defaulted(.int(value)), doc)) { $0?.intValue.map { Int($0) } ?? value }
    }

    static func duration(_ name: String, default seconds: Int, _ doc: String) -> Field {
        Field(FieldSpec(name, .duration(1...DurationText.maxSeconds), .defaulted(.int(seconds)), doc)) {
            $0?.intValue.map { Int($0) } ?? seconds
        }
    }
}

extension Field where Value == Int? {
    static func integer(_ name: String, _ range: ClosedRange<Int64>, _ doc: String) -> Field {
        Field(FieldSpec(name, .integer(range), .optional, doc)) { $0?.intValue.map { Int($0) } }
    }

    static func duration(_ name: String, _ doc: String) -> Field {
        Field(FieldSpec(name, .duration(1...DurationText.maxSeconds), .optional, doc)) { $0?.intValue.map { Int($0) } }
    }
}

extension Field where Value == Int64 {
    static func id(_ name: String, _ range: ClosedRange<Int64>, _ doc: String) -> Field {
        Field(FieldSpec(name, .integer(range), .required, doc)) { $0?.intValue ?? 0 }
    }
}

extension Field where Value == Int64? {
    static func id(_ name: String, _ range: ClosedRange<Int64>, _ doc: String) -> Field {
        Field(FieldSpec(name, .integer(range), .optional, doc)) { $0?.intValue }
    }
}

extension Field where Value == Bool {
    static func boolean(_ name: String, default value: Bool, _ doc: String) -> Field {
        Field(FieldSpec(name, .boolean, .defaulted(.bool(value)), doc)) { $0?.boolValue ?? value }
    }
}

extension Field where Value == Bool? {
    static func boolean(_ name: String, _ doc: String) -> Field {
        Field(FieldSpec(name, .boolean, .optional, doc)) { $0?.boolValue }
    }
}

extension Field where Value: CaseIterable & RawRepresentable, Value.RawValue == String {
    /// One of an enumeration's raw values, `fallback` when absent.
    static func choice(_ name: String, default fallback: Value, code: DiligenceError.Code = .invalidValue, _ doc: String) -> Field {
        Field(FieldSpec(name, .choice(Value.allCases.map(\.rawValue), code: code), .defaulted(.string(fallback.rawValue)), doc)) {
            $0?.stringValue.flatMap(Value.init(rawValue:)) ?? fallback
        }
    }
}

extension Field {

    /// One of an enumeration's raw values, nil when absent.
    static func choice<E: CaseIterable & RawRepresentable & Sendable>(
        _ name: String, optional type: E.Type, code: DiligenceError.Code = .invalidValue, _ doc: String
    ) -> Field<E?> where E.RawValue == String {
        Field<E?>(FieldSpec(name, .choice(E.allCases.map(\.rawValue), code: code), .optional, doc)) {
            $0?.stringValue.flatMap(E.init(rawValue:))
        }
    }
}

/// A setting that can be turned off: absent (nil) leaves it as it is.
public enum Setting<Value: Sendable & Equatable>: Sendable, Equatable {
    case off
    case on(Value)

    public var value: Value? { if case .on(let v) = self { v } else { nil } }
}

extension Field where Value == Setting<Int>? {
    /// `"HH:MM"` as minutes after midnight, or off.
    static func timeOfDay(_ name: String, _ doc: String) -> Field {
        Field(FieldSpec(name, .timeOfDay, .optional, doc)) { json in
            guard let json else { return nil }
            return json.stringValue.flatMap(TimeOfDay.parse).map(Setting.on) ?? .off
        }
    }
}

extension Field where Value == Setting<AwayPolicy>? {
    /// One of the away policies, or `default` (the configured one).
    static func policyOrDefault(_ name: String, _ doc: String) -> Field {
        Field(FieldSpec(name, .choice(AwayPolicy.allCases.map(\.rawValue) + ["default"], code: .invalidValue), .optional, doc)) {
            guard let word = $0?.stringValue else { return nil }
            return AwayPolicy(rawValue: word).map(Setting.on) ?? .off
        }
    }
}

extension Field where Value == Setting<Bool>? {
    /// `on` or `off`, or `default` (the configured one).
    static func onOffOrDefault(_ name: String, _ doc: String) -> Field {
        Field(FieldSpec(name, .choice(["on", "off", "default"], code: .invalidValue), .optional, doc)) {
            guard let word = $0?.stringValue else { return nil }
            return word == "default" ? .off : .on(word == "on")
        }
    }
}

extension Field where Value == Setting<Int>? {
    /// A duration in seconds, or off.
    static func durationOrOff(_ name: String, _ doc: String) -> Field {
        Field(FieldSpec(name, .durationOrOff(1...DurationText.maxSeconds), .optional, doc)) { json in
            guard let json else { return nil }
            return json.intValue.map { Setting.on(Int($0)) } ?? .off
        }
    }
}

extension Field where Value == FlowBreakRule? {
    static func breakRule(_ name: String, _ doc: String) -> Field {
        Field(FieldSpec(name, .breakRule, .optional, doc)) { $0?.stringValue.flatMap(FlowBreakRule.parse) }
    }
}

extension Field where Value == Setting<String>? {
    static func nameOrOff(_ name: String, maxLength: Int, _ doc: String) -> Field {
        Field(FieldSpec(name, .nameOrOff(maxLength: maxLength), .optional, doc)) { json in
            guard let json else { return nil }
            return json.stringValue.map(Setting.on) ?? .off
        }
    }
}

// MARK: Commands

/// One command of the protocol: its name, one line on what it does and one on what it answers,
/// its fields, and how its checked fields become the typed `ControlCommand` handlers receive.
public struct CommandSpec: Sendable {
    public let name: String
    public let summary: String
    /// What `result` holds (docs/protocol.md).
    public let result: String
    public let fields: [FieldSpec]
    /// Whether it writes to the database (it then waits for another process's lock, without
    /// holding up anything else; docs/reliability.md).
    public let writes: Bool
    let make: @Sendable (Arguments) -> ControlCommand

    init(
        _ name: String, _ summary: String, result: String, fields: [any FieldDeclaration] = [], writes: Bool = false,
        make: @escaping @Sendable (Arguments) -> ControlCommand
    ) {
        self.name = name
        self.summary = summary
        self.result = result
        self.fields = fields.map(\.spec)
        self.writes = writes
        self.make = make
    }

    public func field(_ name: String) -> FieldSpec? { fields.first { $0.name == name } }

    /// Checks every member of a request object against the fields: an unknown member is
    /// refused (a typo such as `"wrok": 30` must not pass unnoticed), then each field in
    /// declaration order.
    public func validate(_ body: JSON) throws(DiligenceError) -> Arguments {
        var given: [String: JSON] = [:]
        if case .object(let members) = body {
            // `id` is the request's id, echoed in the answer, unless the command declares it
            // (history_remove, history_edit: the session's id, which is then echoed as well).
            for (key, value) in members where key != "command" && (key != "id" || field("id") != nil) {
                guard field(key) != nil else {
                    let known = fields.isEmpty ? "it takes none" : "it takes " + fields.map { "\"\($0.name)\"" }.joined(separator: ", ")
                    throw DiligenceError(.invalidArgument, "\"\(name)\" takes no argument \"\(key)\"; \(known).")
                }
                given[key] = value
            }
        }
        var checked: [String: JSON] = [:]
        for spec in fields {
            let value = given[spec.name]
            // null is "not given", except where it means "off".
            let meansOff =
                spec.type == .timeOfDay
                || {
                    switch spec.type {
                    case .nameOrOff, .durationOrOff: true
                    default: false
                    }
                }()
            guard let value, !value.isNull || meansOff else {
                if spec.isRequired {
                    throw DiligenceError(.missingArgument, "\"\(name)\" needs the argument \"\(spec.name)\" (\(spec.doc)).")
                }
                continue
            }
            checked[spec.name] = try spec.check(value)
        }
        return Arguments(command: name, values: checked)
    }

    /// The typed command for `body` (a request object naming this command).
    public func command(_ body: JSON) throws(DiligenceError) -> ControlCommand {
        make(try validate(body))
    }
}

/// A command's checked field values, read through typed `Field`s while the `ControlCommand` is
/// built. Handlers never see it.
public struct Arguments: Sendable {
    public let command: String
    let values: [String: JSON]

    subscript<Value>(field: Field<Value>) -> Value {
        field.read(values[field.spec.name])
    }

    /// Whether the request gave this field (an absent optional field leaves a setting alone).
    func has(_ field: some FieldDeclaration) -> Bool { values[field.spec.name] != nil }
}
