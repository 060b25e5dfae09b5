import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceTime

#if canImport(Glibc)
    import Glibc
#endif

// Statistics, the week and its plan, history, export and import: their commands, and the
// reports a person reads. Pure functions of the daemon's JSON (docs/statistics.md).

// MARK: Commands

extension Command {
    static let offset = Option("offset", key: "offset")
    static let taskFilter = Option("task", key: "task", "TASK")
    static let deviceFilter = Option("device", key: "device", "DEVICE")
    static let since = Option("since", key: "since", "DATE")
    static let until = Option("until", key: "until", "DATE")
    static let day = Argument("DAY", key: "day")
    static let sessionID = Argument("ID", key: "id")

    static let period = Argument("PERIOD", key: "period")
    static let periodDate = Argument("DATE", key: "date")

    static let statsCommands: [Command] = [
        Command(
            words: ["stats"],
            arguments: [period, periodDate],
            options: [taskFilter, deviceFilter, offset, plain, json], wire: "stats", output: .report,
            summary: trNoop("statistics of a day, week, month, year or everything, with pictures"),
            notes: """
                DATE picks the period holding that day: stats day 2026-03-14, stats month 2026-03-01.
                Weeks run Monday to Sunday; a day starts at [stats] day_starts_at (default 00:00).
                Focused time counts every work session (pauses excluded), split between the days it
                touches; a completed session counts for the day it ended. Each total shows its change
                against the previous period (one under way: up to the same point). A day draws a timeline of its sessions; a week its
                days as bars; a month a calendar; a year (and all, per year) a heat-map and month bars;
                longer periods the hours of the day. Pictures fit the terminal's width (COLUMNS);
                colours only on a terminal, without NO_COLOR and TERM=dumb: otherwise the glyphs
                · ░ ▒ ▓ █ shade the days. --device this counts this device's sessions only, --device NAME
                or ID one device's (its name, or its id or a unique beginning, as history shows them); time
                two devices' sessions share counts once.
                """),
        Command(
            words: ["report"],
            arguments: [period, periodDate],
            options: [
                taskFilter, deviceFilter, offset,
                Option("html", .none, "", "write the report page: one HTML file, no script, nothing fetched (the default)"),
                Option("svg", .none, "", "write the heat-map alone, as an SVG image"),
            ],
            wire: "stats", output: .page, exclusive: [["html", "svg"]],
            summary: trNoop("the statistics as a page to keep or share: report year --html > report.html"),
            notes: """
                The page holds the heat-map, the day bars, the tasks in their colours, the hours of the
                day, the week's plan against what was done, the best task, weekday and hour, streaks and
                goals; it follows the system's light or dark theme and fits a phone. --svg writes only
                the heat-map, for a README or a wiki.
                """),
        Command(
            words: ["week"], options: [offset, deviceFilter, plain, json], wire: "week", output: .report,
            summary: trNoop("one ISO week: plan and done, day by day"), example: "week --offset -1"),
        Command(
            words: ["plan", "set"], arguments: [day, task], options: [offset], wire: "plan_set", output: .report,
            summary: trNoop("plan TASK for DAY (start without a task starts it that day)"), example: "plan set monday Study --offset 1"),
        Command(
            words: ["plan", "clear"], arguments: [day], options: [offset], wire: "plan_clear", output: .report,
            summary: trNoop("forget DAY's plan")),
        Command(
            words: ["history"],
            options: [
                taskFilter, since, until, Option("limit", key: "limit"),
                Option("all", .none, "", "every session, shown as it is read (the default on a terminal: a screenful)"), deviceFilter, json,
            ],
            wire: "history", output: .report, exclusive: [["all", "limit"]], summary: trNoop("list recorded work sessions"),
            notes: """
                On a terminal history shows the newest sessions that fit its height, and says when older
                ones are not shown; --all, --limit N, --since or --until list more. Written to a pipe or
                a file, and with --json (always every session matching), it lists them all.
                """),
        Command(
            words: ["history", "add"],
            arguments: [task, Argument("START", key: "start"), Argument("END", key: "end")],
            options: [Option("pauses", key: "pauses"), json],
            wire: "history_add", output: .report,
            summary: trNoop("record a completed session the timer missed"),
            notes:
                "HH:MM (or H:MM) is a moment of today (days start at day_starts_at), now this moment. A session that overlaps a recorded one is refused; the message names it. A local time a DST change skips or repeats is refused: give its offset, e.g. 2026-10-25 02:30+02:00."
        ),
        Command(
            words: ["history", "remove"], arguments: [sessionID], options: [json], wire: "history_remove", output: .report,
            summary: trNoop("delete a recorded session")),
        Command(
            words: ["history", "edit"], arguments: [sessionID],
            options: [
                Option("task", key: "task", "TASK"), Option("start", key: "start", "START"), Option("end", key: "end", "END"),
                Option("note", key: "note", "TEXT"), json,
            ],
            wire: "history_edit", output: .report, needsAChange: true, summary: trNoop("change a session's task, start, end or note"),
            notes: """
                START and END as in history add; a time alone is of the session's own day. The changed session meets the rules of history add: it has
                happened, lasts up to a day, overlaps no other session nor the running work. A new span
                keeps the focused time that filled the old one, cut to the new length. --note '' removes the note.
                """,
            example: "history edit 42 --start 09:10 --note 'chapter 3'"),
        Command(
            words: ["export"],
            options: [
                Option("format", key: "format"), taskFilter, since, until, deviceFilter,
                Option("with-tasks", key: "with_tasks", sends: "on", help: "jsonl: the task definitions and the plan first (a backup)"),
                Option("segments", key: "segments", sends: "on", help: "ics: one event per focus segment, not per session"),
            ],
            wire: "export", output: .report, summary: trNoop("print sessions as CSV, JSON lines or iCalendar"),
            notes: """
                jsonl writes every field and is what import reads; csv has a header row (RFC 4180); ics has one event per session,
                or with --segments one per stretch of focus between pauses (UID: the session's UUID, -1, -2 …).
                --with-tasks adds a line per task (its settings, archived or not) and per planned day before the sessions:
                import restores them, so the file is a whole backup.
                """,
            example: "export --with-tasks > backup.jsonl"),
        Command(
            words: ["import"],
            arguments: [Argument(local: "FILE", required: true, help: "what export --format jsonl wrote (- for standard input)")],
            options: [
                Option(
                    "replace-tasks", key: "replace_tasks", sends: "on",
                    help: "a task of the file replaces the settings of the task of that name (else it keeps its own)")
            ],
            wire: "import", output: .report, summary: trNoop("add the sessions (and tasks, plans) of a JSON-lines file"),
            notes: """
                All or nothing: one bad line rejects the file, naming the line. Sessions already recorded are skipped.
                Task definitions (export --with-tasks) add the tasks that do not exist; an existing task keeps its
                settings unless --replace-tasks. A planned day keeps its plan unless --replace-tasks. Importing twice adds nothing.
                """,
            example: "import backup.jsonl"),
    ]
}

// MARK: Import

/// Raw bytes per request: a request line holds at most 64 KiB, and JSON escaping adds some.
let importChunkBytes = 32 * 1024

/// Reads FILE and sends it in chunks of whole lines; the last chunk commits the import.
func importFile(_ parsed: ParsedCommand, send: (Request) throws(Failure) -> JSON) throws(Failure) -> JSON {
    let path = parsed.arguments.first?.stringValue ?? "-"
    var bytes: [UInt8]
    switch readFile(path) {
    case .success(let b): bytes = b
    case .failure(let error): throw .usage(error)
    }
    // A UTF-8 byte order mark (Windows editors write one) is not part of the first line.
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
    var chunks: [ArraySlice<UInt8>] = []
    var chunkStart = 0
    var lineStart = 0
    var lineNumber = 1
    for (i, byte) in bytes.enumerated() where byte == 0x0A || i == bytes.count - 1 {
        let lineEnd = i + 1
        if lineEnd - lineStart > importChunkBytes {
            throw .usage(
                UsageError("\(path): line \(lineNumber) is longer than \(importChunkBytes / 1024) KiB; is it a session?", command: "import")
            )
        }
        if lineEnd - chunkStart > importChunkBytes {
            chunks.append(bytes[chunkStart..<lineStart])
            chunkStart = lineStart
        }
        lineStart = lineEnd
        lineNumber += 1
    }
    chunks.append(bytes[chunkStart...])
    var importID: JSON = .null
    var answer: JSON = .null
    for (index, chunk) in chunks.enumerated() {
        guard let text = String(validating: chunk, as: UTF8.self) else {
            // Name the line, counted as the daemon counts them.
            let before = bytes[..<chunk.startIndex].count(where: { $0 == 0x0A })
            let lines = chunk.split(separator: 0x0A, omittingEmptySubsequences: false)
            let bad = lines.firstIndex { String(validating: $0, as: UTF8.self) == nil } ?? 0
            throw .usage(UsageError("\(path): line \(before + bad + 1) is not UTF-8 text; nothing was imported.", command: "import"))
        }
        let last = index == chunks.count - 1
        answer = try send(
            Request(
                command: "import",
                arguments: [
                    ("content", .string(text)), ("import_id", importID), ("more", .bool(!last)),
                    ("replace_tasks", .bool(parsed.has("replace-tasks"))),
                ]))
        if !last { importID = answer["import_id"] ?? .null }
    }
    return answer
}

/// The whole file (`-`: standard input), or a message saying why not.
func readFile(_ path: String) -> Result<[UInt8], UsageError> {
    let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return .failure(UsageError("cannot read \(path): \(String(cString: strerror(errno))).", command: "import")) }
    defer { if fd != 0 { close(fd) } }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            return .failure(UsageError("cannot read \(path): \(String(cString: strerror(errno))).", command: "import"))
        }
        if n == 0 { return .success(bytes) }
        bytes += chunk[..<n]
    }
}

// MARK: Reports

/// The text of a `.report` command's result.
func report(_ r: JSON, for parsed: ParsedCommand, screen: Screen) -> String {
    let paint = Paint(screen.colors)
    switch parsed.command.wire {
    case "stats": return statsReport(StatsView(r), screen: screen, paint: paint)
    case "week": return weekReport(r, screen: screen, paint: paint)
    case "plan_set": return "Planned \(str(r, "task")) for \(str(r, "day")).\n"
    case "plan_clear":
        return r["cleared"]?.boolValue == true ? "Cleared the plan of \(str(r, "day")).\n" : "\(str(r, "day")) had no plan.\n"
    case "history":
        let sessions = r["sessions"]?.arrayValue ?? []
        return sessions.isEmpty ? noSessions(parsed) : historyTable(sessions)
    case "history_add": return "Added session \(num(r, "id")): \(sessionLine(r)).\n"
    case "history_remove": return "Removed session \(num(r["removed"] ?? .null, "id")): \(sessionLine(r["removed"] ?? .null)).\n"
    case "history_edit": return "Changed session \(num(r, "id")): \(sessionLine(r)).\n"
    case "export": return str(r, "content")
    case "sync_status" where parsed.has("names"): return deviceNames(r)
    case "sync_enable", "sync_status", "sync_disable": return syncReport(r)
    case "timewarrior_sync": return timewarriorReport(r)
    case "doctor": return doctorReport(r, paint)
    case "backup":
        return
            "Backed up \(plural(num(r, "sessions"), "session")) and \(plural(num(r, "tasks"), "task")) to \(str(r, "path")) (\(num(r, "bytes")) bytes).\n"
    case "import":
        let skipped = num(r, "skipped")
        var setup: [String] = []
        if num(r, "tasks_added") > 0 { setup.append(plural(num(r, "tasks_added"), "task") + " added") }
        if num(r, "tasks_replaced") > 0 { setup.append(plural(num(r, "tasks_replaced"), "task") + " replaced") }
        if num(r, "plans_set") > 0 { setup.append(plural(num(r, "plans_set"), "plan") + " set") }
        return "Imported \(plural(num(r, "imported"), "session"))" + (skipped > 0 ? " (\(skipped) already recorded, skipped)" : "")
            + (setup.isEmpty ? "" : "; " + setup.joined(separator: ", ")) + ".\n"
    default: return r.serialized + "\n"
    }
}

/// One line a part: its name, ok / off / problem, what the daemon found; the fix beneath a problem.
func doctorReport(_ r: JSON, _ paint: Paint) -> String {
    (r["checks"]?.arrayValue ?? []).map { check in
        let state = str(check, "state")
        let shown = state == "problem" ? paint.bold(state.padded(toWidth: 8)) : state.padded(toWidth: 8)
        let line = str(check, "name").padded(toWidth: 14) + shown + " " + str(check, "detail") + "\n"
        return line + (check["fix"]?.stringValue.map { String(repeating: " ", count: 14) + "→ " + $0 + "\n" } ?? "")
    }.joined()
}

func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }

/// `1h05m`, `25m`, `20s`, `0m`: report durations to the minute, and below one to the second
/// (a 20 s session is not `0m`, which reads as nothing).
func hoursMinutes(_ seconds: Int) -> String {
    if (1..<60).contains(seconds) { return "\(seconds)s" }
    let minutes = (seconds + 30) / 60
    if minutes < 60 { return "\(minutes)m" }
    let m = minutes % 60
    return "\(minutes / 60)h" + (m < 10 ? "0" : "") + "\(m)m"
}

/// A bar `value / maximum` of `width` cells, in eighths of a cell.
func bar(_ value: Int, of maximum: Int, width: Int = 30) -> String {
    guard maximum > 0, value > 0 else { return "" }
    let eighths = max(1, value * width * 8 / maximum)
    let partial = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]
    return String(repeating: "█", count: eighths / 8) + partial[eighths % 8]
}

/// Rows of cells, columns padded to their widest cell (in terminal columns, `DisplayWidth`);
/// `right` columns align right. With `width`, a last cell that would run past it wraps at
/// spaces onto lines of its own, under its column.
func columns(_ rows: [[String]], right: Set<Int> = [], indent: String = "  ", width: Int? = nil) -> String {
    let widths = (0..<(rows.map(\.count).max() ?? 0)).map { c in rows.map { c < $0.count ? $0[c].displayWidth : 0 }.max() ?? 0 }
    return rows.map { row in
        let cells = row.enumerated().map { c, cell in
            right.contains(c) ? cell.padded(toWidth: widths[c], right: true) : (c == row.count - 1 ? cell : cell.padded(toWidth: widths[c]))
        }
        let line = indent + cells.joined(separator: "  ")
        guard let width, line.displayWidth > width, let last = row.last, row.count > 1 else { return line }
        let lead = indent + cells.dropLast().joined(separator: "  ") + "  "
        let room = max(1, width - lead.displayWidth)
        return wrapped(last, width: room).enumerated().map { i, part in
            (i == 0 ? lead : String(repeating: " ", count: lead.displayWidth)) + part
        }.joined(separator: "\n")
    }.joined(separator: "\n") + "\n"
}

/// `text` in lines of at most `width` columns, broken at spaces (a longer word stays whole).
func wrapped(_ text: String, width: Int) -> [String] {
    var lines: [String] = []
    var line = ""
    for word in text.split(separator: " ", omittingEmptySubsequences: false).map(String.init) {
        if line.isEmpty {
            line = word
        } else if line.displayWidth + 1 + word.displayWidth <= width {
            line += " " + word
        } else {
            lines.append(line)
            line = word
        }
    }
    return lines + [line]
}

private func sessionLine(_ s: JSON) -> String {
    "\(str(s, "task")), \(RFC3339.dateText(str(s, "start"))) \(RFC3339.clockText(str(s, "start")))–\(RFC3339.clockText(str(s, "end"))) (\(hoursMinutes(num(s, "focused_seconds"))))"
        + (s["note"]?.stringValue.map { ", note \"\($0)\"" } ?? "")
}

/// The technique's marks of a session's interruptions (`'` internal, `-` external, in the order
/// marked, cut at 12) and their counts: `''- 2' 1-`; "" for none.
func interruptionMarks(_ list: JSON?) -> String {
    let kinds = (list?.arrayValue ?? []).compactMap { $0["kind"]?.stringValue.flatMap(InterruptionKind.init(rawValue:)) }
    guard !kinds.isEmpty else { return "" }
    let marks = String(kinds.map(\.mark))
    let shown = marks.count > 12 ? marks.prefix(11) + "…" : Substring(marks)
    let internalCount = kinds.filter { $0 == .internal }.count
    return "\(shown) \(internalCount)' \(kinds.count - internalCount)-"
}

func weekdayShort(_ name: String) -> String { name.prefix(1).uppercased() + name.dropFirst().prefix(2) }

/// The week, a day a line within the screen's width (the done list wraps), each planned day
/// marked as the month calendar marks it: ✓ kept, ✗ a past day not kept, ○ to come.
private func weekReport(_ r: JSON, screen: Screen, paint: Paint) -> String {
    var out = paint.bold("Week \(str(r, "week")) · \(str(r, "from")) – \(str(r, "to"))") + "\n"
    let days = r["days"]?.arrayValue ?? []
    let offset = r["offset"]?.intValue ?? 0
    let todayIndex = days.firstIndex { $0["today"]?.boolValue == true }
    let rows: [[String]] = days.enumerated().map { i, d in
        let marker = d["today"]?.boolValue == true ? "▸" : " "
        let past = offset < 0 || (offset == 0 && todayIndex.map { i < $0 } == true)
        let kept = (d["tasks"]?.arrayValue ?? []).contains { $0["task"] == d["planned"] && num($0, "completed") > 0 }
        let mark = kept ? " ✓" : past ? " ✗" : " ○"
        let planned = d["planned"]?.stringValue.map { paint($0, d["planned_color"]?.stringValue) + mark } ?? "–"
        let done = (d["tasks"]?.arrayValue ?? []).map { t in
            paint(str(t, "task"), str(t, "color")) + " \(num(t, "completed")) (\(hoursMinutes(num(t, "focused_seconds"))))"
        }
        return [
            marker + weekdayShort(str(d, "weekday")) + " " + String(str(d, "date").suffix(5)), "plan: " + planned,
            "done: " + (done.isEmpty ? "–" : done.joined(separator: ", ")),
        ]
    }
    out += weekRows(rows, width: screen.columns)
    out += "  Total: \(plural(num(r, "completed"), "session")), \(hoursMinutes(num(r, "focused_seconds"))) focused\n"
    return out
}

/// The week's rows as columns, the done list wrapped; where the day and plan leave it less than
/// 20 columns, the done list goes beneath them instead.
private func weekRows(_ rows: [[String]], width: Int) -> String {
    let lead = 2 + (0..<2).map { c in rows.map { $0[c].displayWidth }.max() ?? 0 }.reduce(0, +) + 4
    guard lead > width - 20 else { return columns(rows, width: width) }
    return rows.map { row in
        let head = ("  " + row[0] + "  " + row[1]).truncated(toWidth: width)
        return ([head] + wrapped(row[2], width: width - 4).map { "    " + $0 }).joined(separator: "\n")
    }.joined(separator: "\n") + "\n"
}

/// An empty history: with a filter, that nothing matches it (not that nothing was recorded).
private func noSessions(_ parsed: ParsedCommand) -> String {
    let filters = ["task", "since", "until", "device"].compactMap { name in
        parsed.options[name]?.stringValue.map { "--\(name) \(shellWord($0))" }
    }
    return filters.isEmpty ? "No sessions recorded.\n" : "No sessions match \(filters.joined(separator: " ")).\n"
}

/// `word` as a shell reads it back: quoted when it holds anything but letters, digits and `-_.:+/`.
func shellWord(_ word: String) -> String {
    let plain =
        !word.isEmpty
        && word.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.:+/".unicodeScalars.contains($0) }
    return plain ? word : "'" + word.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
}

private func historyTable(_ sessions: [JSON]) -> String {
    var table = HistoryTable()
    return table.rows(sessions)
}
