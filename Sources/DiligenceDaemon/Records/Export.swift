import DiligenceCore
import DiligenceProtocol
import DiligenceStore
import DiligenceTime
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// The formats of `export` (docs/statistics.md): sessions in, one text out.
extension ExportFormat {
    /// `deviceNames`: the name of the device that recorded each session, by its `device`.
    func render(_ recorded: [WorkSession], stamp: Double, deviceNames: [String?: String]) -> String {
        head + body(recorded, stamp: stamp, deviceNames: deviceNames) + tail
    }

    /// What comes before the sessions (a streamed export writes them page by page between).
    var head: String {
        switch self {
        case .csv: Self.csvHeader.joined(separator: ",") + "\r\n"
        case .jsonl: ""
        case .ics:
            ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//diligence//diligence \(ProtocolInfo.release)//EN", "CALSCALE:GREGORIAN"]
                .map(Self.fold).joined()
        }
    }

    /// The sessions' part: any run of them, so pages of one export join into the whole.
    func body(_ recorded: [WorkSession], stamp: Double, deviceNames: [String?: String], segments: Bool = false) -> String {
        let sessions = recorded.map(Self.exportable)
        return switch self {
        case .csv: Self.csv(sessions, deviceNames: deviceNames)
        case .jsonl: Self.jsonl(sessions, deviceNames: deviceNames)
        case .ics: Self.ics(sessions, stamp: stamp, segments: segments)
        }
    }

    /// What comes after the sessions.
    var tail: String { self == .ics ? Self.fold("END:VCALENDAR") : "" }

    /// `session` with an interval an export may write: one that ends after it starts, to the
    /// second (iCalendar forbids DTEND ≤ DTSTART; the session rules, and so `import`, refuse
    /// an empty or negative length). The session rules give every session recorded now such
    /// an interval; a row of an older version (a wall clock stepped back during a phase) may
    /// end at or before its start: it is exported as its focused time from its start, at
    /// least a second.
    static func exportable(_ session: WorkSession) -> WorkSession {
        var session = session
        let start = session.start.rounded(.down)
        if session.end.rounded(.down) <= start {
            session.end = start + Double(max(1, session.focusedSeconds))
        }
        return session
    }

    // MARK: CSV (RFC 4180)

    static let csvHeader = [
        "id", "task", "start", "end", "planned_seconds", "focused_seconds", "pauses", "outcome", "uuid", "note", "away_seconds", "reason",
        "device", "device_name", "interruptions_internal", "interruptions_external",
    ]

    /// One line per session (after the header, `head`); CRLF line ends; a field holding a comma,
    /// quote or line break is quoted with its quotes doubled.
    static func csv(_ sessions: [WorkSession], deviceNames: [String?: String]) -> String {
        var out = ""
        for s in sessions {
            let fields = [
                String(s.id), s.taskName, RFC3339.format(s.start), RFC3339.format(s.end), String(s.plannedSeconds),
                String(s.focusedSeconds), String(s.pauses), s.outcome.rawValue, s.uuid, s.note ?? "",
                String(s.awaySeconds), s.reason?.rawValue ?? "", s.device ?? "", deviceNames[s.device] ?? "",
                String(s.interruptions.count(.internal)), String(s.interruptions.count(.external)),
            ]
            out += fields.map(csvField).joined(separator: ",") + "\r\n"
        }
        return out
    }

    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacing("\"", with: "\"\"") + "\""
    }

    // MARK: JSON lines

    /// One session object per line, exactly as `history --json` shows it; `import` reads it back.
    static func jsonl(_ sessions: [WorkSession], deviceNames: [String?: String]) -> String {
        var out = ""
        for s in sessions {
            s.json(deviceName: deviceNames[s.device] ?? nil).write(to: &out)
            out += "\n"
        }
        return out
    }

    // MARK: iCalendar (RFC 5545)

    /// One VEVENT per session, its UID the session's UUID (the same event in every export, from
    /// any database it was imported into), times in UTC, lines folded at 75 octets, CRLF line ends.
    /// `segments`: one per focus segment instead, its UID the UUID and the segment's number.
    static func ics(_ sessions: [WorkSession], stamp: Double, segments: Bool = false) -> String {
        var out = ""
        let dtstamp = RFC3339.compactUTC(stamp)
        for s in sessions {
            guard segments, !s.segments.isEmpty else {
                out += icsEvent(s, uid: s.uuid, start: s.start, end: s.end, dtstamp: dtstamp)
                continue
            }
            for (index, segment) in s.segments.enumerated() {
                // An interval iCalendar accepts, as `exportable` gives the session's.
                let start = segment.start.rounded(.down)
                out += icsEvent(s, uid: "\(s.uuid)-\(index + 1)", start: start, end: max(segment.end, start + 1), dtstamp: dtstamp)
            }
        }
        return out
    }

    private static func icsEvent(_ s: WorkSession, uid: String, start: Double, end: Double, dtstamp: String) -> String {
        var out = ""
        func line(_ text: String) { out += fold(text) }
        line("BEGIN:VEVENT")
        line("UID:\(uid)")
        line("DTSTAMP:\(dtstamp)")
        line("DTSTART:\(RFC3339.compactUTC(start))")
        line("DTEND:\(RFC3339.compactUTC(end))")
        line("SUMMARY:" + icsText(s.taskName))
        let detail =
            "\(s.outcome.rawValue), focused \(DurationText.format(s.focusedSeconds)) of \(DurationText.format(s.plannedSeconds)), \(s.pauses) pause\(s.pauses == 1 ? "" : "s")"
            + icsInterruptions(s.interruptions)
        // The note first: what a calendar shows of the description.
        line("DESCRIPTION:" + icsText(s.note.map { $0 + "\n" + detail } ?? detail))
        line("CATEGORIES:" + icsText(s.taskName))
        line("END:VEVENT")
        return out
    }

    /// TEXT value escaping: backslash, semicolon, comma and line breaks.
    /// `, interruptions ''- (2 internal, 1 external): mail; phone` — "" for none.
    static func icsInterruptions(_ list: [Interruption]) -> String {
        guard !list.isEmpty else { return "" }
        let notes = list.compactMap(\.note)
        return ", interruptions \(list.marks) (\(list.count(.internal)) internal, \(list.count(.external)) external)"
            + (notes.isEmpty ? "" : ": " + notes.joined(separator: "; "))
    }

    static func icsText(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "\\": out += "\\\\"
            case ";": out += "\\;"
            case ",": out += "\\,"
            case "\n", "\r\n": out += "\\n"
            case "\r": break
            default: out.append(c)
            }
        }
        return out
    }

    /// A content line folded so that no line exceeds 75 octets (continuations start with a
    /// space), never inside a UTF-8 sequence; ends with CRLF.
    static func fold(_ text: String) -> String {
        var out = ""
        var width = 0
        for scalar in text.unicodeScalars {
            let size = String(scalar).utf8.count
            if width + size > 75 {
                out += "\r\n "
                width = 1
            }
            out.unicodeScalars.append(scalar)
            width += size
        }
        return out + "\r\n"
    }
}
