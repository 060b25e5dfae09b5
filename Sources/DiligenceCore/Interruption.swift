import DiligenceJSON
import DiligenceTime

/// Who broke into a work session: the person's own thought (`internal`, the technique's
/// apostrophe) or someone else (`external`, its dash).
public enum InterruptionKind: String, CaseIterable, Sendable {
    case `internal`, external

    /// The mark the technique's sheet gives it.
    public var mark: Character { self == .internal ? "'" : "-" }
}

/// One interruption marked on a work session (`interrupt`): it moves no deadline.
public struct Interruption: Hashable, Sendable {
    public var kind: InterruptionKind
    /// Wall-clock seconds since 1970, on the phase's own clock (as the session's end).
    public var at: Double
    /// What it was (`SessionNote`'s rules); nil: nothing said.
    public var note: String?

    /// Interruptions one session holds at most: a bound on what a line, a row and a hook carry
    /// (a journal line and an import's request line hold 64 KiB).
    public static let maxPerSession = 100

    public init(kind: InterruptionKind, at: Double, note: String? = nil) {
        self.kind = kind
        self.at = at
        self.note = note
    }
}

extension [Interruption] {
    /// How many of `kind`.
    public func count(_ kind: InterruptionKind) -> Int { self.reduce(0) { $0 + ($1.kind == kind ? 1 : 0) } }

    /// The history's marks: `'` per internal and `-` per external one, in the order marked.
    public var marks: String { String(map(\.kind.mark)) }
}

extension Interruption {
    /// `{"kind", "at", "note"}`: `at` as RFC 3339 text on the wire and in exports (`wire`), as
    /// seconds since 1970 with their fraction in journals and the saved timer.
    public func json(wire: Bool) -> JSON {
        .object([
            ("kind", .string(kind.rawValue)), ("at", wire ? .string(RFC3339.format(at)) : .double(at)), ("note", .string(note)),
        ])
    }

    /// The list `json` (an array of `json(wire:)` objects; absent or null: none), or what is
    /// wrong with it (`invalid_import`), every member checked and each note under the note rules.
    public static func list(_ json: JSON?, wire: Bool) -> Result<[Interruption], DiligenceError> {
        func bad(_ message: String) -> Result<[Interruption], DiligenceError> {
            .failure(DiligenceError(.invalidImport, "\"interruptions\": \(message)"))
        }
        guard let json, !json.isNull else { return .success([]) }
        guard let items = json.arrayValue else { return bad("not an array") }
        guard items.count <= maxPerSession else { return bad("more than \(maxPerSession)") }
        var list: [Interruption] = []
        for item in items {
            guard let kind = item["kind"]?.stringValue.flatMap(InterruptionKind.init(rawValue:)) else {
                return bad("each has a \"kind\", internal or external")
            }
            let at = wire ? item["at"]?.stringValue.flatMap(RFC3339.parse) : item["at"]?.doubleValue
            guard let at, at.isFinite else { return bad(wire ? "each has an \"at\", an RFC 3339 time" : "each has an \"at\", a number") }
            var note: String?
            switch item["note"] {
            case nil, .null?: break
            case .string(let text)?:
                do { note = try SessionNote.normalize(text, label: "an interruption's note") } catch { return .failure(error) }
            default: return bad("a note is a string or null")
            }
            list.append(Interruption(kind: kind, at: at, note: note))
        }
        return .success(list)
    }
}

/// Interruptions of a report's days, counted by kind: per day (by the day of their moment),
/// per task and per hour of the day.
public struct InterruptionTally: Sendable {
    public struct Counts: Equatable, Sendable {
        public var `internal` = 0
        public var external = 0
        public var total: Int { `internal` + external }

        public init() {}

        mutating func add(_ kind: InterruptionKind) {
            if kind == .internal { `internal` += 1 } else { external += 1 }
        }
    }

    public private(set) var total = Counts()
    public private(set) var days: [Counts]
    public private(set) var tasks: [Int64: Counts] = [:]
    public private(set) var hours = [Counts](repeating: Counts(), count: 24)

    public init(days: Int) { self.days = [Counts](repeating: Counts(), count: days) }

    /// One interruption of `taskID`, on day `day` (nil: outside the days), at `hour` (0–23).
    public mutating func add(_ kind: InterruptionKind, taskID: Int64, day: Int?, hour: Int) {
        guard let day, days.indices.contains(day) else { return }
        total.add(kind)
        days[day].add(kind)
        tasks[taskID, default: Counts()].add(kind)
        if hours.indices.contains(hour) { hours[hour].add(kind) }
    }

    /// Focused seconds per interruption: the technique's measure of how well focus held; nil
    /// without interruptions.
    public func focusedSecondsPerInterruption(_ focused: Double) -> Int? {
        total.total == 0 ? nil : Int(saturating: (focused / Double(total.total)).rounded())
    }
}
