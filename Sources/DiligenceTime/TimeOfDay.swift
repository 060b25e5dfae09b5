/// A local time of day as minutes after midnight (`reminder = 09:30`, `day_starts_at = 04:00`),
/// in its one text form `HH:MM` (24-hour, two digits each).
public enum TimeOfDay {
    /// `HH:MM` → minutes after midnight; nil for anything else.
    public static func parse(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        // Exactly two ASCII digits each: `Int("+9")` would accept a sign.
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2,
            parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let h = Int(parts[0]), let m = Int(parts[1]), (0..<24).contains(h), (0..<60).contains(m)
        else { return nil }
        return h * 60 + m
    }

    /// Minutes after midnight → `HH:MM`.
    public static func format(_ minute: Int) -> String {
        let h = minute / 60
        let m = minute % 60
        return (h < 10 ? "0\(h)" : "\(h)") + ":" + (m < 10 ? "0\(m)" : "\(m)")
    }
}
