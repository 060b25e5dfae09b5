import DiligenceTime

// One day as a timeline, like `timew day`: the day's 24 hours across the screen, one row per
// task, each session a span: `█` focused, `▒` the share of it spent paused (drawn at its end:
// when the pauses were is not recorded), `·` the break after it (a gap of at most an hour
// before the next session), blank where nothing ran.

/// What a cell of the timeline shows, in order of precedence (the highest present wins: a
/// pause shows even when it is shorter than a cell).
enum TimelineMark: Int, Comparable {
    case empty, pauseBreak, focused, paused
    static func < (a: TimelineMark, b: TimelineMark) -> Bool { a.rawValue < b.rawValue }
    var glyph: String { [" ", "·", "█", "▒"][rawValue] }
}

/// Gaps between two sessions up to this long are drawn as a break.
let longestBreakGap = 3600.0

/// Per task (in order of its first session) and cell, what the cell shows. `cells` cover the
/// day from `dayStart` to `dayEnd` (wall seconds) evenly.
func timelineRows(_ sessions: [StatsView.Session], dayStart: Double, dayEnd: Double, cells: Int) -> [(task: String, marks: [TimelineMark])]
{
    let length = dayEnd - dayStart
    guard length > 0, cells > 0 else { return [] }
    var order: [String] = []
    var rows: [String: [TimelineMark]] = [:]
    func mark(_ task: String, _ from: Double, _ to: Double, _ m: TimelineMark) {
        let low = max(from, dayStart)
        let high = min(to, dayEnd)
        guard high > low || (high == low && from == to && low >= dayStart && low < dayEnd) else { return }
        let first = Int((low - dayStart) / length * Double(cells))
        let last = max(first, Int(((high - dayStart) / length * Double(cells)).rounded(.up)) - 1)
        for c in max(0, first)...min(cells - 1, last) where rows[task]![c] < m { rows[task]![c] = m }
    }
    let spans = sessions.compactMap { s -> (task: String, start: Double, end: Double, focused: Double)? in
        guard let start = RFC3339.parse(s.start), let end = RFC3339.parse(s.end) else { return nil }
        return (s.task, start, max(start, end), Double(s.focused))
    }.sorted { $0.start < $1.start }
    for (i, s) in spans.enumerated() {
        if rows[s.task] == nil {
            order.append(s.task)
            rows[s.task] = Array(repeating: .empty, count: cells)
        }
        if i + 1 < spans.count, spans[i + 1].start > s.end, spans[i + 1].start - s.end <= longestBreakGap {
            mark(s.task, s.end, spans[i + 1].start, .pauseBreak)
        }
        let span = s.end - s.start
        let focusedEnd = span > 0 ? s.start + min(span, s.focused) : s.end
        mark(s.task, s.start, focusedEnd, .focused)
        if s.end > focusedEnd { mark(s.task, focusedEnd, s.end, .paused) }
    }
    return order.map { ($0, rows[$0]!) }
}

func dayTimelineText(_ view: StatsView, screen: Screen, paint: Paint) -> String {
    guard let startText = view.dayStart, let endText = view.dayEnd, let dayStart = RFC3339.parse(startText),
        let dayEnd = RFC3339.parse(endText), !view.sessions.isEmpty
    else { return "" }
    let names = Array(Set(view.sessions.map(\.task)))
    let labelWidth = min(max(4, names.map(\.displayWidth).max() ?? 4), max(6, screen.columns / 6))
    let perHour = max(1, (screen.columns - 2 - labelWidth - 1) / 24)
    let cells = 24 * perHour
    let rows = timelineRows(view.sessions, dayStart: dayStart, dayEnd: dayEnd, cells: cells)
    let indent = "  " + String(repeating: " ", count: labelWidth + 1)
    // Hour labels (local clock hours from the day's start) every 3 hours, every 6 when narrow.
    let firstHour = Int(RFC3339.clockText(startText).prefix(2)) ?? 0
    let every = perHour == 1 ? 6 : 3
    var axis = ""
    for h in stride(from: 0, to: 24, by: every) {
        let at = h * perHour
        axis += String(repeating: " ", count: max(0, at - axis.count)) + twoDigits((firstHour + h) % 24)
    }
    var out = indent + axis + "\n"
    for row in rows {
        let color = view.color(of: row.task)
        let line = row.marks.map { m in
            switch m {
            case .empty: return " "
            case .pauseBreak: return paint.dim(m.glyph)
            case .paused, .focused: return paint(m.glyph, color ?? Palette.allTasks)
            }
        }.joined()
        out += "  " + row.task.truncated(toWidth: labelWidth).padded(toWidth: labelWidth) + " " + line.trimmingTrailingSpaces() + "\n"
    }
    out += wrappedItems(
        ["█ focused", "▒ paused", "· break", "(\(perHour == 1 ? "1 hour" : "\(60 / perHour) minutes") a column)"], screen: screen)
    return out
}
