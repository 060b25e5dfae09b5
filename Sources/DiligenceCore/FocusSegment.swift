import DiligenceJSON
import DiligenceTime

/// One stretch of a work session's focus, between its pauses and times away: from `start`
/// (wall-clock seconds since 1970) for `seconds` whole seconds. A session's segments never
/// overlap, lie in start order, and sum to its focused time.
public struct FocusSegment: Hashable, Sendable {
    public var start: Double
    public var seconds: Int

    public init(start: Double, seconds: Int) {
        self.start = start
        self.seconds = seconds
    }

    public var end: Double { start + Double(seconds) }

    /// The one segment a session known only by its start and focused time has (a session
    /// recorded before segments were kept, or entered by hand): its focus from its start.
    public static func whole(start: Double, focused: Int) -> [FocusSegment] {
        focused > 0 ? [FocusSegment(start: start, seconds: focused)] : []
    }

    /// The segments of a phase's running stretches (`spans`, seconds after its start at
    /// `startWall`), rounded to whole seconds by their running sum, so that they add up to
    /// `focused` exactly whatever the fractions.
    static func segments(of spans: [FocusSpan], startWall: Double, focused: Int) -> [FocusSegment] {
        var result: [FocusSegment] = []
        var exact = 0.0
        var given = 0
        for span in spans where span.to > span.from {
            exact += span.to - span.from
            let upTo = min(focused, Int(saturating: exact.rounded()))
            if upTo > given {
                result.append(FocusSegment(start: startWall + span.from, seconds: upTo - given))
                given = upTo
            }
        }
        guard given < focused else { return result }
        guard !result.isEmpty else { return whole(start: startWall, focused: focused) }
        result[result.count - 1].seconds += focused - given
        return result
    }

    /// `segments` fitted to a session's new span and focused time (`history edit`, time away
    /// discarded after the end): clipped to [`start`, `end`] and cut from the end down to
    /// `focused`; focus they then lack fills the room after each, from the last back (up to
    /// `end`, then each pause), then before the first; only a focus longer than the span
    /// makes them one segment from the start (docs/protocol.md, "Sessions").
    public static func fit(_ segments: [FocusSegment], start: Double, end: Double, focused: Int) -> [FocusSegment] {
        var fitted: [FocusSegment] = []
        var total = 0
        for segment in segments.sorted(by: { $0.start < $1.start }) {
            let from = max(segment.start, start)
            let seconds = Int(saturating: (min(segment.end, end) - from).rounded())
            if seconds > 0, total < focused {
                let kept = min(seconds, focused - total)
                fitted.append(FocusSegment(start: from, seconds: kept))
                total += kept
            }
        }
        var lacking = focused - total
        var index = fitted.count - 1
        while lacking > 0, index >= 0 {
            let limit = index == fitted.count - 1 ? end : fitted[index + 1].start
            let added = min(lacking, max(0, Int(saturating: (limit - fitted[index].end).rounded())))
            fitted[index].seconds += added
            lacking -= added
            index -= 1
        }
        if lacking > 0, !fitted.isEmpty {
            let added = min(lacking, max(0, Int(saturating: (fitted[0].start - start).rounded())))
            fitted[0].start -= Double(added)
            fitted[0].seconds += added
            lacking -= added
        }
        return lacking == 0 ? fitted : whole(start: start, focused: focused)
    }
}

extension FocusSegment {
    /// Segments as the database, the saved timer and a journal line keep them,
    /// `[[start, seconds], …]`: each start exactly as recorded.
    public static func pairs(_ segments: [FocusSegment]) -> JSON {
        .array(segments.map { .array([.double($0.start), .int($0.seconds)]) })
    }

    /// The segments of `pairs`' form; nil for anything else, never a part of them (a part would
    /// no longer sum to the focused time).
    public static func list(pairs json: JSON?) -> [FocusSegment]? {
        guard let list = json?.arrayValue else { return nil }
        var segments: [FocusSegment] = []
        for pair in list {
            guard let ends = pair.arrayValue, ends.count == 2, let start = ends[0].doubleValue, let seconds = ends[1].intValue else {
                return nil
            }
            segments.append(FocusSegment(start: start, seconds: Int(seconds)))
        }
        return segments
    }

    /// The segments a session from outside brings (another device's line, an import): kept as
    /// they are when the timer could have made them for it — in order, each a second or more,
    /// summing to `focused`, within its span but for a second's rounding — else fitted to it.
    public static func accepted(_ segments: [FocusSegment], start: Double, end: Double, focused: Int) -> [FocusSegment] {
        var total = 0
        var last = start
        for segment in segments {
            guard segment.seconds > 0, segment.seconds <= focused - total, segment.start >= last - 1, segment.end <= end + 1 else {
                return fit(segments, start: start, end: end, focused: focused)
            }
            total += segment.seconds
            last = segment.end
        }
        return total == focused ? segments : fit(segments, start: start, end: end, focused: focused)
    }
}

/// A running stretch of the phase, in seconds after the phase began on its own clock (wall
/// start plus steady time since): the same across a save and a restore, whatever the clocks.
public struct FocusSpan: Equatable, Sendable {
    public var from: Double
    public var to: Double

    public init(from: Double, to: Double) {
        self.from = from
        self.to = to
    }
}

extension [FocusSpan] {
    /// The spans without the time from `a` to `b` (time away that is discarded).
    func removing(from a: Double, to b: Double) -> [FocusSpan] {
        flatMap { span -> [FocusSpan] in
            guard span.from < b, span.to > a else { return [span] }
            return [FocusSpan(from: span.from, to: a), FocusSpan(from: b, to: span.to)].filter { $0.to > $0.from }
        }
    }
}
