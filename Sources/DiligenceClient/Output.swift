import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceTime

// What a person sees: the status line, --format templates, task tables. Pure functions of JSON.

/// Member `key` of an answer as text, "" when it is missing or not a string.
func str(_ j: JSON?, _ key: String) -> String { j?[key]?.stringValue ?? "" }

/// Member `key` of an answer as a whole number, 0 when it is missing or not one: what the
/// client shows for a field the daemon did not send.
func num(_ j: JSON?, _ key: String) -> Int { j?[key]?.intValue.flatMap { Int(exactly: $0) } ?? 0 }

// MARK: Status

/// The fields of a status object (docs/protocol.md) that the client shows, with safe defaults.
struct StatusView {
    /// The `state` member as sent, `{state}`: `offline` while no daemon answers.
    var stateName: String
    /// The timer's state; nil offline, or for a state this client does not know.
    var state: TimerState?
    /// `work`, `short_break`, `long_break`; nil when idle. Kept as sent, like `presence`, so a
    /// phase a newer daemon names still shows.
    var phase: String?
    var task: String?
    var color: String?
    var round: Int
    var longBreakEvery: Int
    var duration: Int
    var remaining: Int
    var elapsed: Int
    var today: Int
    var goal: Int
    var note: String?
    /// `here`, `away`, `unknown`.
    var presence: String
    /// Wall time the person left; nil unless away.
    var awaySince: Double?
    /// The focus guard holds other programs' notifications back (`do_not_disturb.active`).
    var doNotDisturb: Bool
    /// Work that counts up: `flow` or `overtime` (`counts_up`); nil for a countdown.
    var countsUp: String?
    /// Interruptions marked on the work phase (`interrupt`).
    var interruptions: Int

    init(_ json: JSON) {
        func int(_ key: String) -> Int { num(json, key) }
        stateName = json["state"]?.stringValue ?? "idle"
        state = TimerState(rawValue: stateName)
        phase = json["phase"]?.stringValue
        task = json["task"]?.stringValue
        color = json["color"]?.stringValue
        round = int("round")
        longBreakEvery = int("long_break_every")
        duration = int("duration_seconds")
        remaining = int("remaining_seconds")
        elapsed = int("elapsed_seconds")
        today = int("today_completed")
        goal = int("goal")
        note = json["note"]?.stringValue
        presence = json["presence"]?.stringValue ?? "unknown"
        awaySince = json["away_since"]?.stringValue.flatMap { RFC3339.parse($0) }
        doNotDisturb = json["do_not_disturb"]?["active"]?.boolValue ?? false
        countsUp = json["counts_up"]?.stringValue
        interruptions = int("interruptions")
    }

    /// The clock a person reads: the time left, or the time spent of work that counts up.
    var clock: String { DurationText.clock(countsUp == nil ? remaining : elapsed) }

    /// `12:34 left`, or `12:34 elapsed` for work that counts up.
    var clockLine: String { countsUp == nil ? tr("{clock} left", ["clock": clock]) : tr("{clock} elapsed", ["clock": clock]) }

    /// ` · away since 12:03` while away, else "".
    var awayNote: String {
        guard presence == Presence.away.rawValue else { return "" }
        return " · " + (awaySince.map { tr("away since {time}", ["time": TimeOfDay.format(LocalDay.minuteOfDay($0))]) } ?? tr("away"))
    }

    /// The phase as the person's language names it (`phaseLabel` is --format's, always English).
    var phaseName: String {
        switch phase {
        case "work": tr("work")
        case "short_break": tr("short break")
        case "long_break": tr("long break")
        default: phaseLabel
        }
    }

    /// `flow` or `overtime`, translated, while work counts up.
    var countsUpName: String? {
        switch countsUp {
        case "flow"?: tr("flow")
        case "overtime"?: tr("overtime")
        default: countsUp
        }
    }

    /// `work`, `short break`, `long break`; "" when idle.
    var phaseLabel: String { (phase ?? "").split(separator: "_").joined(separator: " ") }

    /// Elapsed time as a whole percentage of the phase, 0–100.
    var percent: Int { duration > 0 ? min(100, max(0, elapsed * 100 / duration)) : 0 }

    /// No daemon answers (`offlineStatus`).
    var offline: Bool { stateName == offlineState }

    var icon: String {
        statusIcons.first { $0.matches(self) }?.icon ?? ""
    }
}

/// The one-line status a person reads:
/// `Work · work · 12:34 left · round 2/4`, `Work · paused · 12:34 left`,
/// `Work · short break ready — run: diligencectl start`, `Idle · 3 completed today`.
func statusLine(_ json: JSON) -> String {
    let s = StatusView(json)
    let task = s.task ?? "?"
    let left = s.clockLine
    switch s.state {
    case .running?:
        let round =
            s.longBreakEvery > 0
            ? tr("round {round}/{every}", ["round": String(s.round), "every": String(s.longBreakEvery)])
            : tr("round {round}", ["round": String(s.round)])
        // Flow and overtime say so where the phase is named.
        let what = s.countsUpName ?? s.phaseName
        return "\(task) · \(what) · \(left) · \(round)\(s.awayNote)"
    case .paused?:
        let what = s.phase == Phase.work.rawValue ? tr("paused") : tr("{phase} paused", ["phase": s.phaseName])
        return "\(task) · \(what) · \(left)\(s.awayNote)"
    case .pending?:
        return tr("{task} · {phase} ready — run: diligencectl start", ["task": task, "phase": s.phaseName]) + s.awayNote
    default:
        let line =
            s.goal > 0
            ? trPlural(
                "Idle · {count} of {goal} completed today", "Idle · {count} of {goal} completed today", count: s.today,
                ["goal": String(s.goal)])
            : trPlural("Idle · {count} completed today", "Idle · {count} completed today", count: s.today)
        return line + s.awayNote
    }
}

/// `{icon}`: one glyph per state (and phase while running).
let statusIcons: [(icon: String, when: String, matches: @Sendable (StatusView) -> Bool)] = [
    ("▶", trNoop("work running"), { $0.state == .running && $0.phase == Phase.work.rawValue }),
    ("☕", trNoop("break running"), { $0.state == .running }),
    ("⏸", trNoop("paused"), { $0.state == .paused }),
    ("⏭", trNoop("pending: a phase waits for start"), { $0.state == .pending }),
    ("⏹", trNoop("idle"), { $0.state == .idle }),
    ("⊘", trNoop("offline: watch cannot reach the daemon"), { $0.offline }),
]

// MARK: Templates

/// The `--format` placeholders, in the order help lists them.
let templatePlaceholders: [(name: String, help: String, value: @Sendable (StatusView) -> String)] = [
    ("task", trNoop("task name (empty when idle)"), { $0.task ?? "" }),
    ("phase", trNoop("work, short break, long break (empty when idle)"), { $0.phaseLabel }),
    ("remaining", trNoop("time left, as 12:34"), { DurationText.clock($0.remaining) }),
    ("elapsed", trNoop("time spent, pauses excluded, as 12:34 (what work that counts up shows)"), { DurationText.clock($0.elapsed) }),
    ("clock", trNoop("remaining, or elapsed for work that counts up (flow, overtime)"), { $0.clock }),
    ("counts_up", trNoop("flow or overtime while work counts up (empty otherwise)"), { $0.countsUp ?? "" }),
    ("duration", trNoop("the phase's length, as 25:00"), { DurationText.clock($0.duration) }),
    ("percent", trNoop("elapsed share of the phase, 0 to 100"), { String($0.percent) }),
    ("round", trNoop("work round in the cycle, from 1"), { String($0.round) }),
    ("long_break_every", trNoop("rounds per cycle (0: no long breaks)"), { String($0.longBreakEvery) }),
    ("state", trNoop("idle, running, paused or pending"), { $0.stateName }),
    ("today", trNoop("completed work sessions today"), { String($0.today) }),
    ("goal", trNoop("the task's daily goal (0: none)"), { String($0.goal) }),
    ("color", trNoop("the task's colour (empty when idle)"), { $0.color ?? "" }),
    ("icon", trNoop("a glyph for the state (table below)"), { $0.icon }),
    ("note", trNoop("the work phase's note (empty when none)"), { $0.note ?? "" }),
    ("presence", trNoop("here, away or unknown (diligenced(1), PRESENCE)"), { $0.presence }),
    ("dnd", trNoop("🔕 while do not disturb holds notifications back (empty otherwise)"), { $0.doNotDisturb ? "🔕" : "" }),
    ("interruptions", trNoop("interruptions marked on the work phase (diligencectl interrupt)"), { String($0.interruptions) }),
]

/// The placeholders that mean something with no phase: idle, the timer's are left empty (a
/// `0:00` left of nothing misleads); offline, only `{state}` and `{icon}` (the rest would be stale).
private let idlePlaceholders: Set<String> = ["state", "icon", "today", "goal", "presence", "dnd"]

/// Fills `template`'s `{placeholder}`s from a status object; `{{` and `}}` print braces.
/// An unknown placeholder or a stray brace is a usage error naming it. An empty value takes
/// the spaces before it along (else those after it): `{icon} {task} {remaining}` idle is `⏹`.
func renderTemplate(_ template: String, status: JSON) throws(UsageError) -> String {
    let view = StatusView(status)
    var out = ""
    var rest = Substring(template)
    var dropSpaces = false
    func literal(_ text: Substring) {
        out += dropSpaces ? text.drop { $0 == " " } : text
        if !text.isEmpty { dropSpaces = false }
    }
    while let brace = rest.firstIndex(where: { $0 == "{" || $0 == "}" }) {
        literal(rest[..<brace])
        let after = rest[rest.index(after: brace)...]
        if after.first == rest[brace] { // {{ or }}
            literal(rest[brace...brace])
            rest = after.dropFirst()
            continue
        }
        guard rest[brace] == "{", let close = after.firstIndex(where: { $0 == "}" || $0 == "{" }), after[close] == "}" else {
            throw UsageError("--format: unmatched \(rest[brace]) in \(template.debugDescription); write {{ or }} for a brace.")
        }
        let name = String(after[..<close])
        guard let placeholder = templatePlaceholders.first(where: { $0.name == name }) else {
            throw UsageError(
                "--format: unknown placeholder {\(name)}; known: "
                    + templatePlaceholders.map { "{\($0.name)}" }.joined(separator: " ") + ".")
        }
        let meaningful =
            view.offline ? name == "state" || name == "icon" : view.state != .idle || idlePlaceholders.contains(name)
        let value = meaningful ? placeholder.value(view) : ""
        if value.isEmpty {
            let kept = out.count - out.reversed().prefix { $0 == " " }.count
            dropSpaces = kept == out.count
            out = String(out.prefix(kept))
        } else {
            out += value
            dropSpaces = false
        }
        rest = after[after.index(after: close)...]
    }
    literal(rest)
    return out
}

// MARK: Tasks

/// Days of the sparkline `task list` draws beside each task.
let sparklineDays = 30

/// The task list as an aligned table with a header row; a sparkline of each task's recent days
/// (`recent`, today last) as its last column, cut to the days the screen has room for.
func taskTable(_ tasks: [JSON], screen: Screen = .plain) -> String {
    let header = ["NAME", "COLOR", "WORK", "SHORT", "LONG", "EVERY", "BREAKS", "AUTOSTART", "GOAL"]
    let settings = tasks.map { t -> [String] in
        let every = num(t, "long_break_every")
        let goal = num(t, "goal")
        return [
            t["color"]?.stringValue ?? "",
            duration(t, "work_seconds"),
            duration(t, "short_break_seconds"),
            duration(t, "long_break_seconds"),
            every == 0 ? "never" : String(every),
            onOff(t["breaks"]),
            t["autostart"]?.stringValue ?? "",
            goal == 0 ? "-" : String(goal),
        ]
    }
    let recent = tasks.map { $0["recent"]?.arrayValue?.compactMap { $0.intValue.flatMap { Int(exactly: $0) } } ?? [] }
    let days = recent.map(\.count).max() ?? 0
    // Names are shortened (…) to leave the other columns and a week's sparkline in the width.
    let others = widest(columns([Array(header.dropFirst())] + settings, indent: ""))
    let nameRoom = max(12, screen.columns - others - 2 - (days >= 7 ? 2 + min(days, 30) : 0))
    let rows = tasks.indices.map { i -> [String] in
        let name = tasks[i]["name"]?.stringValue ?? ""
        guard tasks[i]["archived"]?.boolValue == true else { return [name.truncated(toWidth: nameRoom)] + settings[i] }
        // Where "(archived)" leaves too little of the name, the mark is shortened.
        let mark = name.displayWidth + 11 <= nameRoom ? " (archived)" : " (arch.)"
        return [name.truncated(toWidth: max(4, nameRoom - mark.displayWidth)) + mark] + settings[i]
    }
    let table = columns([header] + rows, indent: "")
    let room = screen.columns - widest(table) - 2
    let shown = min(days, room)
    let title = room >= "LAST \(shown) DAYS".displayWidth ? "LAST \(shown) DAYS" : "\(shown) DAYS"
    guard shown >= 7, room >= title.displayWidth else { return table }
    let lines: [[String]] = rows.indices.map { i in rows[i] + [sparkline(Array(recent[i].suffix(shown)))] }
    return columns([header + [title]] + lines, indent: "")
}

/// The display width of the widest line of `text`.
private func widest(_ text: String) -> Int { text.split(separator: "\n").map { String($0).displayWidth }.max() ?? 0 }

/// A task as `key: value` lines; each key is the `task edit` flag that changes it.
func taskDetails(_ t: JSON) -> String {
    let lines: [(String, String)] =
        [
            ("name", t["name"]?.stringValue ?? ""),
            ("description", t["description"]?.stringValue ?? ""),
            ("color", t["color"]?.stringValue ?? ""),
            ("work", duration(t, "work_seconds")),
            ("short-break", duration(t, "short_break_seconds")),
            ("long-break", duration(t, "long_break_seconds")),
            ("long-break-every", String(num(t, "long_break_every"))),
            ("breaks", onOff(t["breaks"])),
            ("autostart", t["autostart"]?.stringValue ?? ""),
            ("focus-mode", onOff(t["focus_mode"])),
            ("goal", String(num(t, "goal"))),
            ("reminder", t["reminder"]?.stringValue ?? "off"),
            ("sound", t["sound"]?.stringValue ?? "off"),
        ] + modeLines(t)
    // `task archive` and `task unarchive` change it, not an edit flag: shown only when set.
    let archived = t["archived"]?.boolValue == true ? [("archived", "yes (task unarchive brings it back)")] : []
    return (lines + archived).map { "\($0): \($1)" }.joined(separator: "\n") + "\n"
}

/// A flow task's break rule, bounds and nudge; a pomodoro's overtime (an older daemon's task,
/// without them, is a pomodoro).
private func modeLines(_ t: JSON) -> [(String, String)] {
    guard t["mode"]?.stringValue == TaskMode.flow.rawValue else {
        return [("mode", TaskMode.pomodoro.rawValue), ("overtime", onOff(t["overtime"]))]
    }
    return [
        ("mode", TaskMode.flow.rawValue),
        ("break-ratio", t["break_ratio"]?.stringValue ?? FlowBreakRule.standard.text),
        ("min-break", duration(t, "min_break_seconds")),
        ("max-break", duration(t, "max_break_seconds")),
        ("flow-nudge", t["flow_nudge_seconds"]?.intValue.map { DurationText.format(Int($0)) } ?? "off"),
    ]
}

private func duration(_ t: JSON, _ key: String) -> String {
    DurationText.format(num(t, key))
}

private func onOff(_ v: JSON?) -> String {
    v?.boolValue == true ? "on" : "off"
}
