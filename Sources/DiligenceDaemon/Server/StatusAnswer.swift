import DiligenceCore
import DiligenceJSON
import DiligenceProtocol

/// Everything the `status` object shows, and nothing else: equal inputs give the same bytes,
/// so a kept answer is fresh exactly while its inputs are unchanged.
struct StatusInputs: Equatable {
    var timer: TimerStatus
    var todayCompleted: Int
    var configProblems: [String]
    var databaseProblem: String?
    /// The focus guard holds notifications back, and through what.
    var focusActive: Bool
    var focusBackend: String?
    /// Work that counts up (flow, overtime) shows its elapsed time; nothing remains of it.
    var countsUp: TimerRun.CountUp?

    var json: JSON {
        guard case .object(var members) = timer.json(todayCompleted: todayCompleted) else { return .null }
        members.append(("config_problems", .array(configProblems.map(JSON.string))))
        members.append(("do_not_disturb", Self.focusJSON(active: focusActive, backend: focusBackend)))
        members.append(("counts_up", .string(countsUp?.rawValue)))
        if let databaseProblem { members.append(("database_problem", .string(databaseProblem))) }
        return .object(members)
    }

    static func focusJSON(active: Bool, backend: String?) -> JSON {
        var members: [(String, JSON)] = [("active", .bool(active))]
        if let backend { members.append(("backend", .string(backend))) }
        return .object(members)
    }
}

/// The last `status` object sent, encoded, with what it showed: a request for an unchanged
/// status sends the same text instead of building and encoding it again.
struct StatusAnswer {
    private var shown: StatusInputs?
    private var text = ""

    /// The encoded status object for `inputs`.
    mutating func text(for inputs: StatusInputs) -> String {
        if inputs != shown {
            text = inputs.json.serialized
            shown = inputs
        }
        return text
    }
}
