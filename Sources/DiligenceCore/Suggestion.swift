/// "Did you mean": the one place that decides which known word a mistyped one was meant to be.
/// Commands, flags, task names and config keys all ask it (diligencectl and the daemon).
public enum Suggestion {
    /// The candidates closest to `typed` (ignoring case), in their order: those the fewest edits
    /// away, within a few (a swapped pair of letters is one edit: `strat` → `start`); else those
    /// `typed` begins or is the beginning of. At most three; none when nothing is close.
    public static func closest(to typed: String, in candidates: [String]) -> [String] {
        let word = Array(typed.lowercased())
        guard !word.isEmpty else { return [] }
        // One edit for short words, up to three for long ones: `day_start_at` → `day_starts_at`,
        // but not `cat` → `start`.
        let allowed = min(3, max(1, word.count / 3))
        var scored: [(candidate: String, distance: Int)] = []
        for candidate in candidates.uniqued() where candidate.lowercased() != typed.lowercased() {
            let other = Array(candidate.lowercased())
            let distance = editDistance(word, other, limit: allowed)
            if distance <= allowed {
                scored.append((candidate, distance))
            } else if word.count >= 3, other.starts(with: word) || word.starts(with: other) && other.count >= 3 {
                scored.append((candidate, allowed + 1))
            }
        }
        // Only the nearest: `stauts` is status or stats, not start too.
        guard let best = scored.map(\.distance).min() else { return [] }
        return Array(scored.filter { $0.distance == best }.prefix(3).map(\.candidate))
    }

    /// ` Did you mean "start"?` (or `start or stop`), with `quote` around each; empty when nothing is close.
    /// A value that differs only in case (`CSV` for `csv`) is suggested first: it is the one meant.
    public static func didYouMean(_ typed: String, _ candidates: [String], quote: String = "") -> String {
        let close = meant(typed, candidates).map { quote + $0 + quote }
        guard let last = close.last else { return "" }
        let list = close.count == 1 ? last : close.dropLast().joined(separator: ", ") + " or " + last
        return " Did you mean \(list)?"
    }

    /// The candidates `typed` was likely meant to be, best first; empty when none is close.
    public static func meant(_ typed: String, _ candidates: [String]) -> [String] {
        let sameWord = candidates.filter { $0 != typed && $0.lowercased() == typed.lowercased() }
        return sameWord.isEmpty ? closest(to: typed, in: candidates) : sameWord
    }

    /// The optimal-string-alignment distance (insertions, deletions, substitutions, and swaps of
    /// two neighbours, each one edit); anything above `limit` is reported as `limit + 1`.
    public static func editDistance(_ a: [Character], _ b: [Character], limit: Int = .max) -> Int {
        if abs(a.count - b.count) > limit { return limit == .max ? limit : limit + 1 }
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            var rowBest = current[0]
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    value = min(value, previous2[j - 2] + 1)
                }
                current[j] = value
                rowBest = min(rowBest, value)
            }
            if rowBest > limit { return limit + 1 }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }

    public static func editDistance(_ a: String, _ b: String) -> Int {
        editDistance(Array(a), Array(b))
    }
}

extension Array where Element: Equatable {
    /// The elements in order, each once.
    public func uniqued() -> [Element] {
        var out: [Element] = []
        for e in self where !out.contains(e) { out.append(e) }
        return out
    }
}
