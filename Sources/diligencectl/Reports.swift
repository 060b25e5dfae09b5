#if canImport(Glibc)
import Glibc
#endif
import DiligenceCore
import DiligenceProtocol
import DiligenceTime

// Statistics, the week and its plan, history, export and import: their commands, and the
// reports a person reads. Pure functions of the daemon's JSON (docs/statistics.md).

// MARK: Commands

extension Command {
    static let offset = Option("offset", key: "offset")
    static let taskFilter = Option("task", key: "task", "TASK")
    static let since = Option("since", key: "since", "DATE")
    static let until = Option("until", key: "until", "DATE")
    static let day = Argument("DAY", key: "day")
    static let sessionID = Argument("ID", key: "id")

    static let statsCommands: [Command] = [
        Command(words: ["stats"],
                arguments: [Argument("PERIOD", key: "period")],
                options: [taskFilter, offset, json], wire: "stats", output: .report,
                summary: "statistics of a day, week, month, year or everything",
                notes: """
                    Weeks run Monday to Sunday; a day starts at [stats] day_starts_at (default 00:00).
                    Focused time counts every work session (pauses excluded), split between the days it
                    touches; a completed session counts for the day it ended. Colours only on a terminal
                    and without NO_COLOR.
                    """),
        Command(words: ["week"], options: [offset, json], wire: "week", output: .report,
                summary: "one ISO week: plan and done, day by day"),
        Command(words: ["plan", "set"], arguments: [day, task], options: [offset], wire: "plan_set", output: .report,
                summary: "plan TASK for DAY (start without a task starts it that day)"),
        Command(words: ["plan", "clear"], arguments: [day], options: [offset], wire: "plan_clear", output: .report,
                summary: "forget DAY's plan"),
        Command(words: ["history"],
                options: [taskFilter, since, until, Option("limit", key: "limit"), json],
                wire: "history", output: .report, summary: "list recorded work sessions"),
        Command(words: ["history", "add"],
                arguments: [task, Argument("START", key: "start"), Argument("END", key: "end")],
                options: [Option("pauses", key: "pauses"), json],
                wire: "history_add", output: .report,
                summary: "record a completed session the timer missed",
                notes: "HH:MM is a moment of today (days start at day_starts_at). A session that overlaps a recorded one is refused; the message names it. A local time a DST change skips or repeats is refused: give its offset, e.g. 2026-10-25 02:30+02:00."),
        Command(words: ["history", "remove"], arguments: [sessionID], options: [json], wire: "history_remove", output: .report,
                summary: "delete a recorded session"),
        Command(words: ["history", "edit"], arguments: [sessionID],
                options: [Option("task", key: "task", "TASK"), json],
                wire: "history_edit", output: .report, needsAChange: true, summary: "change a session's task"),
        Command(words: ["export"],
                options: [Option("format", key: "format"), taskFilter, since, until],
                wire: "export", output: .report, summary: "print sessions as CSV, JSON lines or iCalendar",
                notes: "jsonl writes every field and is what import reads; csv has a header row (RFC 4180); ics has one event per session."),
        Command(words: ["import"],
                arguments: [Argument(local: "FILE", required: true, help: "what export --format jsonl wrote (- for standard input)")],
                wire: "import", output: .report, summary: "add the sessions of a JSON-lines file",
                notes: "All or nothing: one bad line rejects the file, naming the line. Sessions already recorded are skipped."),
    ]
}

// MARK: Import

/// Raw bytes per request: a request line holds at most 64 KiB, and JSON escaping adds some.
let importChunkBytes = 32 * 1024

/// Reads FILE and sends it in chunks of whole lines; the last chunk commits the import.
func importFile(_ parsed: ParsedCommand, send: (Request) throws(Failure) -> JSON) throws(Failure) -> JSON {
    let path = parsed.arguments.first?.stringValue ?? "-"
    let bytes: [UInt8]
    switch readFile(path) {
    case let .success(b): bytes = b
    case let .failure(error): throw .usage(error)
    }
    var chunks: [ArraySlice<UInt8>] = []
    var chunkStart = 0
    var lineStart = 0
    var lineNumber = 1
    for (i, byte) in bytes.enumerated() where byte == 0x0A || i == bytes.count - 1 {
        let lineEnd = i + 1
        if lineEnd - lineStart > importChunkBytes {
            throw .usage(UsageError("\(path): line \(lineNumber) is longer than \(importChunkBytes / 1024) KiB; is it a session?", command: "import"))
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
        answer = try send(Request(command: "import", arguments: [
            ("content", .string(text)), ("import_id", importID), ("more", .bool(!last)),
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
    let paint = Paint(enabled: screen.colors > .none)
    switch parsed.command.wire {
    case "stats": return r["period"]?.stringValue == "today" ? todayReport(r, paint) : periodReport(r, paint)
    case "week": return weekReport(r, paint)
    case "plan_set": return "Planned \(str(r, "task")) for \(str(r, "day")).\n"
    case "plan_clear":
        return r["cleared"]?.boolValue == true ? "Cleared the plan of \(str(r, "day")).\n" : "\(str(r, "day")) had no plan.\n"
    case "history": return historyTable(r["sessions"]?.arrayValue ?? [])
    case "history_add": return "Added session \(num(r, "id")): \(sessionLine(r)).\n"
    case "history_remove": return "Removed session \(num(r["removed"] ?? .null, "id")): \(sessionLine(r["removed"] ?? .null)).\n"
    case "history_edit": return "Session \(num(r, "id")) now belongs to \(str(r, "task")): \(sessionLine(r)).\n"
    case "export": return str(r, "content")
    case "import":
        let skipped = num(r, "skipped")
        return "Imported \(plural(num(r, "imported"), "session"))" + (skipped > 0 ? " (\(skipped) already recorded, skipped)" : "") + ".\n"
    default: return r.serialized + "\n"
    }
}

/// ANSI colours for the task colours, or nothing.
struct Paint {
    var enabled: Bool

    static let codes = [
        "red": "31", "orange": "38;5;208", "yellow": "33", "green": "32", "cyan": "36", "blue": "34", "purple": "35",
    ]

    func callAsFunction(_ text: String, _ color: String?) -> String {
        guard enabled, let color, let code = Self.codes[color] else { return text }
        return "\u{1B}[\(code)m\(text)\u{1B}[0m"
    }

    func bold(_ text: String) -> String { enabled ? "\u{1B}[1m\(text)\u{1B}[0m" : text }
}

private func str(_ j: JSON, _ key: String) -> String { j[key]?.stringValue ?? "" }
private func num(_ j: JSON, _ key: String) -> Int { j[key]?.intValue.flatMap { Int(exactly: $0) } ?? 0 }
private func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }

/// `1h05m`, `25m`, `0m`: report durations to the minute.
func hoursMinutes(_ seconds: Int) -> String {
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
/// `right` columns align right.
func columns(_ rows: [[String]], right: Set<Int> = [], indent: String = "  ") -> String {
    let widths = (0..<(rows.map(\.count).max() ?? 0)).map { c in rows.map { c < $0.count ? $0[c].displayWidth : 0 }.max() ?? 0 }
    return rows.map { row in
        indent + row.enumerated().map { c, cell in
            right.contains(c) ? cell.padded(toWidth: widths[c], right: true) : (c == row.count - 1 ? cell : cell.padded(toWidth: widths[c]))
        }.joined(separator: "  ")
    }.joined(separator: "\n") + "\n"
}

private func sessionLine(_ s: JSON) -> String {
    "\(str(s, "task")), \(RFC3339.dateText(str(s, "start"))) \(RFC3339.clockText(str(s, "start")))–\(RFC3339.clockText(str(s, "end"))) (\(hoursMinutes(num(s, "focused_seconds"))))"
}

private func weekdayShort(_ name: String) -> String { name.prefix(1).uppercased() + name.dropFirst().prefix(2) }

private func todayReport(_ r: JSON, _ paint: Paint) -> String {
    var out = paint.bold("Today · \(str(r, "from"))" + (r["task"]?.stringValue.map { " · \($0)" } ?? "")) + "\n"
    var facts: [[String]] = [
        ["Completed", plural(num(r, "completed"), "session")],
        ["Focused", hoursMinutes(num(r, "focused_seconds"))],
    ]
    if let score = r["focus_score"]?.intValue { facts.append(["Focus score", "\(score) of 100"]) }
    facts.append(["Streak", streakText(r)])
    out += columns(facts)
    let sessions = r["sessions"]?.arrayValue ?? []
    if !sessions.isEmpty {
        out += "\nSessions\n" + columns(sessions.map { s in
            [RFC3339.clockText(str(s, "start")) + "–" + RFC3339.clockText(str(s, "end")), str(s, "task"), hoursMinutes(num(s, "focused_seconds")),
             str(s, "outcome") + (num(s, "pauses") > 0 ? ", \(plural(num(s, "pauses"), "pause"))" : "")]
        }, right: [2])
    }
    let goals = r["goals"]?.arrayValue ?? []
    if !goals.isEmpty {
        let colorOf = taskColors(r)
        out += "\nGoals\n" + columns(goals.map { g in
            let goal = num(g, "goal")
            let done = num(g, "completed")
            let cells = min(goal, 20)
            let filled = goal == 0 ? 0 : min(cells, done * cells / goal)
            return [str(g, "task"), paint(String(repeating: "█", count: filled), colorOf[str(g, "task")]) + String(repeating: "░", count: cells - filled),
                    "\(done)/\(goal)" + (done >= goal ? " ✓" : "")]
        })
    }
    return out
}

private func streakText(_ r: JSON) -> String {
    let streak = r["streak"] ?? .null
    return "\(plural(num(streak, "current"), "day")) (longest \(num(streak, "longest")))"
}

private func taskColors(_ r: JSON) -> [String: String] {
    var colors: [String: String] = [:]
    for t in r["tasks"]?.arrayValue ?? [] { colors[str(t, "task")] = str(t, "color") }
    return colors
}

private func periodReport(_ r: JSON, _ paint: Paint) -> String {
    let period = str(r, "period")
    let title = period.prefix(1).uppercased() + period.dropFirst()
    var out = paint.bold("\(title) · \(str(r, "from")) – \(str(r, "to"))" + (r["task"]?.stringValue.map { " · \($0)" } ?? "")) + "\n"
    let active = num(r, "active_days")
    var facts: [[String]] = [
        ["Sessions", "\(num(r, "completed")) completed (\(num(r, "recorded")) recorded)"],
        ["Focused", "\(hoursMinutes(num(r, "focused_seconds"))) on \(plural(active, "active day"))"
            + (active > 0 ? ", \(hoursMinutes(num(r, "average_seconds_per_active_day"))) a day on average" : "")],
    ]
    if let score = r["focus_score"]?.intValue { facts.append(["Focus score", "\(score) of 100"]) }
    facts.append(["Streak", streakText(r)])
    out += columns(facts)

    let colorOf = taskColors(r)
    let single = r["task"]?.stringValue.flatMap { colorOf[$0] }
    let days = r["days"]?.arrayValue ?? []
    if period == "week" || period == "month" {
        let maximum = days.map { num($0, "focused_seconds") }.max() ?? 0
        out += "\nMinutes per day\n" + columns(days.map { d in
            [weekdayShort(str(d, "weekday")) + " " + String(str(d, "date").suffix(5)), hoursMinutes(num(d, "focused_seconds")),
             paint(bar(num(d, "focused_seconds"), of: maximum), single)]
        }, right: [1])
    } else {
        let weekdays = r["weekdays"]?.arrayValue ?? []
        let maximum = weekdays.map { num($0, "focused_seconds") }.max() ?? 0
        out += "\nMinutes per weekday\n" + columns(weekdays.map { d in
            [weekdayShort(str(d, "weekday")), hoursMinutes(num(d, "focused_seconds")), paint(bar(num(d, "focused_seconds"), of: maximum), single)]
        }, right: [1])
    }
    let tasks = (r["tasks"]?.arrayValue ?? []).filter { num($0, "focused_seconds") > 0 || num($0, "completed") > 0 }
    if !tasks.isEmpty {
        let maximum = tasks.map { num($0, "focused_seconds") }.max() ?? 0
        out += "\nPer task\n" + columns(tasks.map { t in
            [paint(str(t, "task"), str(t, "color")), hoursMinutes(num(t, "focused_seconds")), plural(num(t, "completed"), "session"),
             paint(bar(num(t, "focused_seconds"), of: maximum, width: 20), str(t, "color"))]
        }, right: [1, 2])
    }
    var bests: [[String]] = []
    func above(_ b: JSON) -> String { "\(hoursMinutes(num(b, "focused_seconds"))), \(num(b, "above_average_percent"))% above average" }
    if let b = r["best_task"], !b.isNull { bests.append(["Best task", paint(str(b, "task"), colorOf[str(b, "task")]), above(b)]) }
    if let b = r["best_weekday"], !b.isNull {
        let name = str(b, "weekday")
        bests.append(["Best weekday", name.prefix(1).uppercased() + name.dropFirst(), above(b)])
    }
    if let b = r["best_hour"], !b.isNull {
        let h = num(b, "hour")
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        bests.append(["Best hour", "\(two(h)):00–\(two((h + 1) % 24)):00", above(b)])
    }
    if !bests.isEmpty { out += "\n" + columns(bests) }
    return out
}

private func weekReport(_ r: JSON, _ paint: Paint) -> String {
    var out = paint.bold("Week \(str(r, "week")) · \(str(r, "from")) – \(str(r, "to"))") + "\n"
    let rows: [[String]] = (r["days"]?.arrayValue ?? []).map { d in
        let marker = d["today"]?.boolValue == true ? "▸" : " "
        let planned = d["planned"]?.stringValue.map { paint($0, d["planned_color"]?.stringValue) } ?? "–"
        let done = (d["tasks"]?.arrayValue ?? []).map { t in
            paint(str(t, "task"), str(t, "color")) + " \(num(t, "completed")) (\(hoursMinutes(num(t, "focused_seconds"))))"
        }
        return [marker + weekdayShort(str(d, "weekday")) + " " + String(str(d, "date").suffix(5)), "plan: " + planned,
                "done: " + (done.isEmpty ? "–" : done.joined(separator: ", "))]
    }
    out += columns(rows)
    out += "  Total: \(plural(num(r, "completed"), "session")), \(hoursMinutes(num(r, "focused_seconds"))) focused\n"
    return out
}

private func historyTable(_ sessions: [JSON]) -> String {
    guard !sessions.isEmpty else { return "No sessions recorded.\n" }
    let header = ["ID", "DATE", "TIME", "TASK", "FOCUSED", "PAUSES", "OUTCOME"]
    let rows = sessions.map { s in
        [String(num(s, "id")), RFC3339.dateText(str(s, "start")), RFC3339.clockText(str(s, "start")) + "–" + RFC3339.clockText(str(s, "end")), str(s, "task"),
         hoursMinutes(num(s, "focused_seconds")), String(num(s, "pauses")), str(s, "outcome")]
    }
    return columns([header] + rows, right: [0, 4, 5], indent: "")
}
