/// Parsing and printing of the durations users type: `90s`, `25m`, `1h`, `1h30m`, `1h30m15s`;
/// a bare number means minutes.
public enum DurationText {
    /// Seconds for `text`, or nil when it is not a duration (the caller says what was expected).
    /// Any size up to 9 digits per number is read: whether it is in range is the caller's
    /// rule (`maxSeconds` for phases), so a too-long duration is told apart from a malformed one.
    public static func parse(_ text: String) -> Int? {
        let s = text.trimmingWhitespace()
        guard !s.isEmpty else { return nil }
        if s.allSatisfy({ $0.isASCII && $0.isNumber }) {
            guard s.count <= 9, let minutes = Int(s) else { return nil }
            return minutes * 60
        }
        var total = 0
        var digits = ""
        var lastUnitRank = 0 // h=3, m=2, s=1: units must come in this order, each once
        for ch in s {
            if ch.isASCII && ch.isNumber {
                digits.append(ch)
                continue
            }
            let (rank, factor): (Int, Int)
            switch ch {
            case "h": (rank, factor) = (3, 3600)
            case "m": (rank, factor) = (2, 60)
            case "s": (rank, factor) = (1, 1)
            default: return nil
            }
            guard !digits.isEmpty, lastUnitRank == 0 || rank < lastUnitRank,
                digits.count <= 9, let value = Int(digits)
            else { return nil }
            total += value * factor
            digits = ""
            lastUnitRank = rank
        }
        guard digits.isEmpty else { return nil }
        return total
    }

    /// What `parse` accepts, for error messages.
    public static let expected = "a duration such as 90s, 25m, 1h or 1h30m (a bare number means minutes)"

    /// The longest phase: one day. A work session is at most this long (the session rules,
    /// docs/protocol.md), so no phase may be longer.
    public static let maxSeconds = 24 * 3600

    /// `25m`, `1h30m`, `90s` → the shortest text that parses back to `seconds`.
    public static func format(_ seconds: Int) -> String {
        if seconds == 0 { return "0s" }
        let h = seconds / 3600
        let m = (seconds % 3600) / 60
        let s = seconds % 60
        var out = ""
        if h > 0 { out += "\(h)h" }
        if m > 0 { out += "\(m)m" }
        if s > 0 { out += "\(s)s" }
        return out
    }

    /// A countdown clock: `4:05`, `25:00`, `1:02:03`. Negative values print as 0:00.
    public static func clock(_ seconds: Int) -> String {
        let v = max(0, seconds)
        let h = v / 3600
        let m = (v % 3600) / 60
        let s = v % 60
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return h > 0 ? "\(h):\(two(m)):\(two(s))" : "\(m):\(two(s))"
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and newlines (no Foundation needed).
    public func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }),
            let last = lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(self[first...last])
    }
}
