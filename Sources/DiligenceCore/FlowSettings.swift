/// How a task's work runs: to a deadline (a pomodoro), or counting up until the person ends it.
public enum TaskMode: String, CaseIterable, Sendable {
    case pomodoro, flow
}

/// The break a flow session earns from its focused time (`--break-ratio`), before
/// `--min-break`/`--max-break` bound it. Its text is either a ratio `N/M` (`1/5`: a fifth of the
/// work) or a table `<25m=5m,<50m=8m,else=15m` (the first row whose bound the work is below,
/// else the last).
public enum FlowBreakRule: Equatable, Sendable {
    case ratio(Int, Int)
    /// Rows of (work below, break), bounds strictly increasing, and the break past the last.
    case table([Row], otherwise: Int)

    public struct Row: Equatable, Sendable {
        public var below: Int
        public var breakSeconds: Int

        public init(below: Int, breakSeconds: Int) {
            self.below = below
            self.breakSeconds = breakSeconds
        }
    }

    public static let standard = FlowBreakRule.ratio(1, 5)
    /// A ratio's numbers, and a table's rows (a ratio above 1 would earn more rest than work).
    public static let ratioRange = 1...100
    public static let maxRows = 10

    /// What `parse` accepts, for error messages.
    public static let expected =
        "a ratio N/M with 1 ≤ N ≤ M ≤ 100 (1/5), or a table such as <25m=5m,<50m=8m,else=15m (bounds increasing, up to \(maxRows) rows)"

    /// The break for `work` seconds of focus, unbounded.
    public func earned(forWork work: Int) -> Int {
        switch self {
        case .ratio(let n, let m):
            // Rounded to the nearest second: 50m at 1/5 is exactly 10m.
            return (max(0, work) * n + m / 2) / m
        case .table(let rows, let otherwise):
            return rows.first { work < $0.below }?.breakSeconds ?? otherwise
        }
    }

    /// The rule `text` writes, or nil when it is none (the caller says `expected`).
    public static func parse(_ text: String) -> FlowBreakRule? {
        let s = String(text.filter { $0 != " " && $0 != "\t" })
        if !s.contains("=") {
            let parts = s.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, parts.allSatisfy({ $0.count <= 3 && $0.allSatisfy(\.isASCII) }),
                let n = Int(parts[0]), let m = Int(parts[1]), ratioRange.contains(n), ratioRange.contains(m), n <= m
            else { return nil }
            return .ratio(n, m)
        }
        var rows: [Row] = []
        var otherwise: Int?
        for entry in s.split(separator: ",", omittingEmptySubsequences: false) {
            let sides = entry.split(separator: "=", omittingEmptySubsequences: false)
            guard otherwise == nil, sides.count == 2, let rest = phaseLength(sides[1]) else { return nil }
            if sides[0] == "else" {
                otherwise = rest
            } else {
                guard sides[0].first == "<", let bound = phaseLength(sides[0].dropFirst()),
                    bound > (rows.last?.below ?? 0), rows.count < maxRows
                else { return nil }
                rows.append(Row(below: bound, breakSeconds: rest))
            }
        }
        guard let otherwise, !rows.isEmpty else { return nil }
        return .table(rows, otherwise: otherwise)
    }

    private static func phaseLength(_ text: Substring) -> Int? {
        DurationText.parse(String(text)).flatMap { (1...DurationText.maxSeconds).contains($0) ? $0 : nil }
    }

    /// The shortest text `parse` reads back as this rule.
    public var text: String {
        switch self {
        case .ratio(let n, let m): "\(n)/\(m)"
        case .table(let rows, let otherwise):
            (rows.map { "<\(DurationText.format($0.below))=\(DurationText.format($0.breakSeconds))" }
                + ["else=\(DurationText.format(otherwise))"]).joined(separator: ",")
        }
    }
}

extension TaskConfig {
    /// The break a flow session of `work` focused seconds earns: the rule, within the bounds.
    public func flowBreak(forWork work: Int) -> Int {
        min(maxBreakSeconds, max(minBreakSeconds, breakRule.earned(forWork: work)))
    }

    public static let defaultMinBreak = 60
    public static let defaultMaxBreak = 30 * 60

    /// The flow settings' ranges: the bounds of a break are phase lengths, the lower no higher;
    /// the nudge is within the day a session lasts.
    func validateFlow() throws(DiligenceError) {
        let most = DurationText.format(DurationText.maxSeconds)
        guard (1...DurationText.maxSeconds).contains(minBreakSeconds), (1...DurationText.maxSeconds).contains(maxBreakSeconds)
        else {
            throw DiligenceError(.invalidDuration, "min_break and max_break must be between 1s and \(most).")
        }
        guard minBreakSeconds <= maxBreakSeconds else {
            throw DiligenceError(
                .invalidValue,
                "min_break (\(DurationText.format(minBreakSeconds))) is longer than max_break (\(DurationText.format(maxBreakSeconds))).")
        }
        if let nudge = flowNudgeSeconds, !(1...DurationText.maxSeconds).contains(nudge) {
            throw DiligenceError(.invalidDuration, "flow_nudge must be between 1s and \(most), or off.")
        }
        if FlowBreakRule.parse(breakRule.text) != breakRule {
            throw DiligenceError(.invalidValue, "break_ratio must be \(FlowBreakRule.expected).")
        }
    }
}
