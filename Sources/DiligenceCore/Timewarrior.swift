import DiligenceJSON
import DiligenceTime

/// `[timewarrior]` of `diligenced.conf`: the built-in mirror of the history into Timewarrior.
public struct TimewarriorSettings: Equatable, Sendable {
    public var enabled = false
    /// `data`: the database directory (TIMEWARRIORDB); nil: timew's own default.
    public var data: String?
    /// `tags`: tags added to every interval besides the task's and `diligence:<uuid>`.
    public var tags: [String] = []

    public init() {}
}

/// One Timewarrior interval, as `timew export` lists it and as the mirror tracks it: whole
/// seconds in UTC (timew keeps no fractions).
public struct TimewarriorInterval: Hashable, Sendable {
    /// `timew export`'s `id` (`@ID`); nil for an interval still to be tracked.
    public var id: Int?
    public var start: Int64
    /// nil: still open (timew's running interval).
    public var end: Int64?
    public var tags: [String]

    public init(id: Int? = nil, start: Int64, end: Int64?, tags: [String]) {
        self.id = id
        self.start = start
        self.end = end
        self.tags = tags
    }

    /// The prefix of the tag that makes an interval the mirror's; the rest is a session's UUID.
    public static let sessionTagPrefix = "diligence:"

    /// The session this interval mirrors; nil: not the mirror's (never touched).
    public var sessionUUID: String? {
        tags.first { $0.hasPrefix(Self.sessionTagPrefix) }.map { String($0.dropFirst(Self.sessionTagPrefix.count)) }
    }

    /// What two intervals are compared by: times and the set of tags (timew sorts tags).
    var key: String { "\(start) \(end.map(String.init) ?? "-") " + tags.sorted().joined(separator: "\u{1}") }

    /// `timew track`'s arguments: `START - END TAG...` in timew's compact UTC form.
    public var trackArguments: [String] {
        [RFC3339.compactUTC(Double(start)), "-", RFC3339.compactUTC(Double(end ?? start))] + tags
    }

    /// `{"start": RFC 3339, "end": RFC 3339, "tags": [...]}` for the `timewarrior_sync` answer.
    public var json: JSON {
        .object([
            ("start", .string(RFC3339.format(Double(start)))), ("end", end.map { JSON.string(RFC3339.format(Double($0))) } ?? JSON.null),
            ("tags", .array(tags.map(JSON.string))),
        ])
    }
}

/// The mirror's rules: which intervals a session is, what `timew export` says, and what to
/// delete and track so that timew holds exactly the sessions.
public enum Timewarrior {
    /// The intervals that mirror `session`: one per focus segment, tagged with the task's name,
    /// `diligence:<uuid>` and the configured tags. Starts are rounded to the second and each
    /// keeps its whole seconds, so timew's totals are the focused seconds exactly.
    public static func intervals(of session: WorkSession, tags: [String]) -> [TimewarriorInterval] {
        var all = [session.taskName, TimewarriorInterval.sessionTagPrefix + session.uuid]
        for tag in tags where !all.contains(tag) { all.append(tag) }
        return session.segments.filter { $0.seconds > 0 }.map { segment in
            let start = Int64(segment.start.rounded())
            return TimewarriorInterval(start: start, end: start + Int64(segment.seconds), tags: all)
        }
    }

    /// The changes that make timew's `existing` intervals hold `wanted` for the sessions in
    /// `scope` (nil: every session, wanted or found). Intervals of other sessions and those
    /// without a `diligence:` tag are never in the result; an interval that is already there
    /// stays.
    public static func plan(
        wanted: [String: [TimewarriorInterval]], existing: [TimewarriorInterval], scope: Set<String>?
    ) -> (delete: [TimewarriorInterval], track: [TimewarriorInterval]) {
        var found: [String: [TimewarriorInterval]] = [:]
        for interval in existing {
            guard let uuid = interval.sessionUUID, scope?.contains(uuid) ?? true else { continue }
            found[uuid, default: []].append(interval)
        }
        let uuids = (scope ?? Set(wanted.keys).union(found.keys)).sorted()
        var delete: [TimewarriorInterval] = []
        var track: [TimewarriorInterval] = []
        for uuid in uuids {
            var left: [String: Int] = [:]
            for interval in wanted[uuid] ?? [] { left[interval.key, default: 0] += 1 }
            for interval in found[uuid] ?? [] {
                if let n = left[interval.key], n > 0 { left[interval.key] = n - 1 } else { delete.append(interval) }
            }
            for interval in wanted[uuid] ?? [] {
                if let n = left[interval.key], n > 0 {
                    left[interval.key] = n - 1
                    track.append(interval)
                }
            }
        }
        return (delete, track)
    }

    /// The intervals of `timew export`'s output, every member checked: anything else is an
    /// error that names what was wrong (the mirror then changes nothing).
    public static func parseExport(_ text: String) throws(DiligenceError) -> [TimewarriorInterval] {
        func bad(_ why: String) -> DiligenceError {
            DiligenceError(.invalidValue, "timew export printed what is not its JSON: \(why).")
        }
        let value: JSON
        do { value = try JSON.parse(text) } catch { throw bad(error.message) }
        guard case .array(let items) = value else { throw bad("not an array") }
        var result: [TimewarriorInterval] = []
        for (index, item) in items.enumerated() {
            guard case .object = item, let id = item["id"]?.intValue, id > 0 else { throw bad("interval \(index + 1) has no id") }
            guard let start = item["start"]?.stringValue.flatMap(parseCompact) else { throw bad("interval @\(id) has no valid start") }
            var end: Int64?
            if let text = item["end"] {
                guard let parsed = text.stringValue.flatMap(parseCompact) else { throw bad("interval @\(id) has no valid end") }
                end = parsed
            }
            var tags: [String] = []
            if let list = item["tags"] {
                guard case .array(let values) = list else { throw bad("interval @\(id) has tags that are not a list") }
                for tag in values {
                    guard let text = tag.stringValue else { throw bad("interval @\(id) has a tag that is not text") }
                    tags.append(text)
                }
            }
            result.append(TimewarriorInterval(id: Int(id), start: start, end: end, tags: tags))
        }
        return result
    }

    /// `20261201T090000Z` as seconds since 1970; nil for anything else.
    static func parseCompact(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        guard b.count == 16, b[8] == UInt8(ascii: "T"), b[15] == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var n = 0
            for i in range {
                guard (48...57).contains(b[i]) else { return nil }
                n = n * 10 + Int(b[i] - 48)
            }
            return n
        }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8), let hour = number(9..<11),
            let minute = number(11..<13), let second = number(13..<15), hour < 24, minute < 60, second < 60,
            let date = CalendarDay(year: year, month: month, day: day)
        else { return nil }
        return Int64(date.daysSince1970) * 86400 + Int64(hour * 3600 + minute * 60 + second)
    }
}

extension DaemonConfig {
    /// One `[timewarrior]` line.
    mutating func parseTimewarriorSetting(_ entry: Entry, place: String) throws(DiligenceError) {
        switch entry.key {
        case "enabled":
            timewarrior.enabled = try Self.flag(entry, place: place)
        case "data":
            guard entry.value.hasPrefix("/") || entry.value.hasPrefix("~/") else {
                throw DiligenceError(
                    .invalidConfig,
                    "\(place): data is a directory, absolute or under ~/, such as ~/.timewarrior; got \(entry.value.debugDescription).")
            }
            timewarrior.data = entry.value
        case "tags":
            let words: [String]
            do { words = try CommandLineWords.split(entry.rawValue) } catch {
                throw DiligenceError(.invalidConfig, "\(place): \(error.message)")
            }
            if let bad = words.first(where: { $0.isEmpty || $0.hasPrefix(TimewarriorInterval.sessionTagPrefix) }) {
                throw DiligenceError(
                    .invalidConfig,
                    "\(place): tags are words (quote one with spaces), none empty or starting with diligence:; got \(bad.debugDescription)."
                )
            }
            timewarrior.tags = words
        default:
            throw Self.unknownSetting(entry, place: place)
        }
    }
}
