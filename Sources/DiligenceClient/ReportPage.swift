import DiligenceJSON
import DiligenceProtocol
import DiligenceTime

// `report --html`: the statistics as one self-contained page (inline SVG and CSS, no script,
// nothing fetched), light and dark by `prefers-color-scheme`, narrow enough for a phone. Every
// chart has a title and its numbers as text; every heat-map cell carries its date and focused
// seconds (`data-date`, `data-seconds`), which the tests read back. `report --svg`: the
// heat-map alone. The page is well-formed XML too, so xmllint checks it.

/// Asks for the statistics (and for the page, the week holding the period's last day up to
/// today) and writes the page or the SVG.
func reportPage(_ parsed: ParsedCommand, send: (Request) throws(Failure) -> JSON) throws(Failure) -> String {
    let view = StatsView(try send(parsed.request))
    if parsed.has("svg") { return heatMapSVG(view, standalone: true) + "\n" }
    let shownDay = min(view.to, view.today)
    let weekOffset = (shownDay.monday.daysSince1970 - view.today.monday.daysSince1970) / 7
    // The week of the same device's sessions as the statistics (`--device`).
    let device = parsed.request.body["device"]?.stringValue
    let week = try send(
        Request(command: "week", arguments: [("offset", .int(Int64(weekOffset)))] + (device.map { [("device", .string($0))] } ?? [])))
    return reportHTML(view, week: week, device: device)
}

// MARK: Pieces

/// Text for XML: `&`, `<`, `>` and quotes escaped.
func xmlEscaped(_ text: String) -> String {
    var out = ""
    for c in text.unicodeScalars {
        switch c {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        default: out.unicodeScalars.append(c)
        }
    }
    return out
}

/// `25m`, `1.5h`, `112h`, `20s`: a duration short enough to stand on a bar.
func shortDuration(_ seconds: Int) -> String {
    if (1..<60).contains(seconds) { return "\(seconds)s" }
    let minutes = (seconds + 30) / 60
    if minutes < 60 { return "\(minutes)m" }
    if minutes < 600 {
        let tenths = (minutes * 10 + 30) / 60
        return "\(tenths / 10)" + (tenths % 10 == 0 ? "" : ".\(tenths % 10)") + "h"
    }
    return "\((minutes + 30) / 60)h"
}

/// An SVG element opening with an accessible title (`role="img"`, `aria-labelledby`).
private func svgOpen(id: String, title: String, width: Int, height: Int, standalone: Bool = false) -> String {
    let ns = standalone ? " xmlns=\"http://www.w3.org/2000/svg\"" : ""
    return
        "<svg\(ns) id=\"\(id)\" viewBox=\"0 0 \(width) \(height)\" width=\"\(width)\" height=\"\(height)\" role=\"img\" aria-labelledby=\"\(id)-title\">"
        + "<title id=\"\(id)-title\">\(xmlEscaped(title))</title>"
}

// MARK: Heat-map

/// The heat-map(s) of the period, one per calendar year, as one SVG. Standalone, it carries
/// its own colours (light); in the page, CSS gives the shades of the theme.
func heatMapSVG(_ view: StatsView, standalone: Bool = false) -> String {
    let cell = 12
    let gap = 2
    let left = 30
    let top = 16
    let years = splitByYear(view.days)
    let layouts = years.map { HeatMapLayout($0) }
    let columns = layouts.map(\.weeks.count).max() ?? 0
    let yearHeight = top + 7 * (cell + gap) + 10
    let legendHeight = 24
    let width = left + columns * (cell + gap) + 10
    let height = max(1, years.count) * yearHeight + legendHeight
    let scale = HeatScale(view.days.map(\.focused))
    let title = "Focused time per day, \(view.totals.from) to \(view.totals.to)" + (view.task.map { ", \($0)" } ?? "")
    var svg = svgOpen(id: "heatmap", title: title, width: width, height: height, standalone: standalone)
    if standalone {
        let base = RGB(r: 0xeb, g: 0xed, b: 0xf0)
        svg +=
            "<style>" + (0...4).map { ".l\($0){fill:\(HeatScale.rgb($0, view.color, base: base).hex)}" }.joined()
            + "text{font:10px sans-serif;fill:#1f2328}</style>"
    }
    svg += "<desc>Each square is a day, shaded by focused time; weeks run down from Monday.</desc>"
    for (index, layout) in layouts.enumerated() {
        let y0 = index * yearHeight
        svg += "<g class=\"year\" data-year=\"\(years[index][0].date.year)\">"
        if layouts.count > 1 { svg += "<text x=\"0\" y=\"\(y0 + 10)\" class=\"year-label\">\(years[index][0].date.year)</text>" }
        var lastLabel = -10
        for (week, month) in layout.monthStarts where week - lastLabel >= 3 {
            svg += "<text x=\"\(left + week * (cell + gap))\" y=\"\(y0 + 10)\">\(monthNames[month - 1])</text>"
            lastLabel = week
        }
        for (row, name) in ["Mon", "Wed", "Fri", "Sun"].enumerated() {
            svg += "<text x=\"0\" y=\"\(y0 + top + row * 2 * (cell + gap) + cell - 2)\">\(name)</text>"
        }
        for week in layout.weeks.indices {
            for weekday in 0..<7 {
                guard let date = layout.day(week: week, weekday: weekday) else { continue }
                let seconds = layout.seconds[date] ?? 0
                let level = scale.level(seconds)
                svg +=
                    "<rect class=\"day l\(level)\" data-date=\"\(date)\" data-seconds=\"\(seconds)\" x=\"\(left + week * (cell + gap))\" "
                    + "y=\"\(y0 + top + weekday * (cell + gap))\" width=\"\(cell)\" height=\"\(cell)\" rx=\"2\">"
                    + "<title>\(date): \(hoursMinutes(seconds))</title></rect>"
            }
        }
        svg += "</g>"
    }
    // The legend: the five shades with the focused time each stands for.
    let legendY = height - legendHeight + 6
    var x = left
    for level in 0...4 {
        let label = level == 0 ? "none" : "to " + shortDuration(scale.upperBound(level))
        svg +=
            "<rect class=\"l\(level)\" x=\"\(x)\" y=\"\(legendY)\" width=\"\(cell)\" height=\"\(cell)\" rx=\"2\"/>"
            + "<text x=\"\(x + cell + 4)\" y=\"\(legendY + cell - 2)\">\(label)</text>"
        x += cell + 8 + label.count * 6 + 8
    }
    return svg + "</svg>"
}

// MARK: Bars

/// Vertical bars with a label under each and its value as text above it.
private func columnChart(id: String, title: String, labels: [String], values: [Int], color: String?, labelEvery: Int = 1) -> String {
    let barWidth = 28
    let gap = 6
    let chartHeight = 120
    let width = labels.count * (barWidth + gap) + gap
    let height = chartHeight + 36
    let maximum = values.max() ?? 0
    var svg = svgOpen(id: id, title: title, width: width, height: height)
    let fill = Palette.rgb(color).hex
    for i in labels.indices {
        let h = maximum > 0 ? values[i] * chartHeight / maximum : 0
        let x = gap + i * (barWidth + gap)
        let y = 14 + chartHeight - h
        svg +=
            "<g class=\"bar\"><rect x=\"\(x)\" y=\"\(y)\" width=\"\(barWidth)\" height=\"\(max(h, values[i] > 0 ? 1 : 0))\" fill=\"\(fill)\">"
            + "<title>\(xmlEscaped(labels[i])): \(hoursMinutes(values[i]))</title></rect>"
        if values[i] > 0 {
            svg +=
                "<text class=\"value\" x=\"\(x + barWidth / 2)\" y=\"\(y - 3)\" text-anchor=\"middle\">\(shortDuration(values[i]))</text>"
        }
        if i % labelEvery == 0 {
            svg += "<text x=\"\(x + barWidth / 2)\" y=\"\(14 + chartHeight + 14)\" text-anchor=\"middle\">\(xmlEscaped(labels[i]))</text>"
        }
        svg += "</g>"
    }
    return svg + "</svg>"
}

/// One horizontal bar per task in the task's colour, its name and figures as text.
private func taskChart(_ tasks: [StatsView.TaskFigures]) -> String {
    let rowHeight = 26
    let nameWidth = 130
    let barRoom = 300
    let width = nameWidth + barRoom + 150
    let maximum = tasks.map(\.focused).max() ?? 0
    var svg = svgOpen(id: "tasks", title: "Focused time per task", width: width, height: max(1, tasks.count) * rowHeight + 4)
    for (i, t) in tasks.enumerated() {
        let y = 4 + i * rowHeight
        let length = maximum > 0 ? max(1, t.focused * barRoom / maximum) : 0
        svg +=
            "<g class=\"task\" data-task=\"\(xmlEscaped(t.name))\" data-seconds=\"\(t.focused)\">"
            + "<text x=\"0\" y=\"\(y + 15)\">\(xmlEscaped(t.name.truncated(toWidth: 20)))<title>\(xmlEscaped(t.name))</title></text>"
            + "<rect x=\"\(nameWidth)\" y=\"\(y + 3)\" width=\"\(length)\" height=\"16\" rx=\"3\" fill=\"\(Palette.rgb(t.color).hex)\"/>"
            + "<text x=\"\(nameWidth + length + 6)\" y=\"\(y + 15)\">\(hoursMinutes(t.focused)) · \(plural(t.completed, "session"))</text></g>"
    }
    return svg + "</svg>"
}

// MARK: The page

/// `device`: the `--device` the statistics were asked for, as typed.
func reportHTML(_ view: StatsView, week: JSON, device: String? = nil) -> String {
    let heading =
        (view.isDay ? "\(view.totals.from)" : "\(capitalized(view.period)) \(view.totals.from) – \(view.totals.to)")
        + (view.task.map { " · \($0)" } ?? "") + (device.map { " · device \($0)" } ?? "")
    var body = "<header><h1>Focus · \(xmlEscaped(heading))</h1></header>\n"
    body += totalsSection(view)
    body += "<section><h2>Focus by day</h2><div class=\"chart\">\(heatMapSVG(view))</div></section>\n"
    body += daySections(view)
    let tasks = view.tasks.filter { $0.focused > 0 || $0.completed > 0 }
    if !tasks.isEmpty { body += "<section><h2>Per task</h2><div class=\"chart\">\(taskChart(tasks))</div></section>\n" }
    body +=
        "<section><h2>Hours of the day</h2><div class=\"chart\">"
        + columnChart(
            id: "hours", title: "Focused time per hour of the day", labels: (0..<24).map { twoDigits($0) }, values: view.hours,
            color: view.color, labelEvery: 3)
        + "</div></section>\n"
    if view.days.count > 31 {
        // As the terminal's year report: over months, a weekday pattern is a figure of its own.
        body +=
            "<section><h2>Weekdays</h2><div class=\"chart\">"
            + columnChart(
                id: "weekdays", title: "Focused time per weekday", labels: view.weekdays.map { weekdayShort($0.name) },
                values: view.weekdays.map(\.focused), color: view.color)
            + "</div></section>\n"
    }
    body += interruptionsSection(view.interruptions)
    body += weekSection(week, today: view.today)
    body += goalsSection(view)
    body +=
        "<footer><p>Written by diligencectl report, \(view.today). Days start at the daemon's day_starts_at; focused time excludes pauses.</p></footer>\n"

    return """
        <!DOCTYPE html>
        <html lang="en" xmlns="http://www.w3.org/1999/xhtml">
        <head>
        <meta charset="utf-8"/>
        <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'"/>
        <meta name="viewport" content="width=device-width, initial-scale=1"/>
        <meta name="color-scheme" content="light dark"/>
        <title>\(xmlEscaped("Focus · " + heading))</title>
        <style>\(pageStyle(color: view.color))</style>
        </head>
        <body>
        <main>
        \(body)</main>
        </body>
        </html>

        """
}

/// Interruptions per day, per task and per hour of the day, and the focused time per
/// interruption; nothing without any.
private func interruptionsSection(_ marked: StatsView.Interruptions) -> String {
    guard marked.total > 0 else { return "" }
    func rows(_ list: [StatsView.Interruptions.Row]) -> String {
        list.map { "<tr><th scope=\"row\">\(xmlEscaped($0.label))</th><td>\($0.internal)</td><td>\($0.external)</td></tr>" }.joined()
    }
    let head = "<thead><tr><th scope=\"col\"></th><th scope=\"col\">Internal (')</th><th scope=\"col\">External (-)</th></tr></thead>"
    return "<section id=\"interruptions\"><h2>Interruptions</h2><p>"
        + xmlEscaped(StatsView.Interruptions.text(marked.internal, marked.external) + "; " + marked.perInterruptionText) + "</p>"
        + "<table id=\"interruptions-days\">\(head)<tbody>\(rows(marked.days))</tbody></table>"
        + "<table id=\"interruptions-tasks\">\(head)<tbody>\(rows(marked.tasks))</tbody></table>"
        + "<table id=\"interruptions-hours\">\(head)<tbody>\(rows(marked.hours))</tbody></table></section>\n"
}

/// The totals with their change against the previous period, and the best task, weekday, hour.
private func totalsSection(_ view: StatsView) -> String {
    var facts: [(String, String)] = [
        (
            "Completed sessions",
            "\(view.totals.completed)"
                + (view.comparison.map { " " + sessionChange(view.totals.completed, $0.totals, against: $0.name) } ?? "")
        ),
        (
            "Focused",
            hoursMinutes(view.totals.focused)
                + (view.comparison.map { " " + changeText(view.totals.focused, $0.totals, against: $0.name) } ?? "")
        ),
        (
            "Active days",
            "\(view.totals.activeDays)" + (view.totals.activeDays > 0 ? ", \(hoursMinutes(view.averagePerActiveDay)) a day on average" : "")
        ),
        ("Streak", view.streakText),
    ]
    if let score = view.focusScore { facts.append(("Focus score", "\(score) of 100")) }
    if view.awaySeconds > 0 { facts.append(("Away", hoursMinutes(view.awaySeconds) + " during work")) }
    if view.overtimeSeconds > 0 { facts.append(("Overtime", hoursMinutes(view.overtimeSeconds) + " past the bell, in the focus")) }
    if let b = view.bestTask { facts.append(("Best task", "\(b.label): \(b.aboveAverage)")) }
    if let b = view.bestWeekday { facts.append(("Best weekday", "\(b.label): \(b.aboveAverage)")) }
    if let b = view.bestHour { facts.append(("Best hour", "\(b.label): \(b.aboveAverage)")) }
    return "<section id=\"totals\"><h2>Totals</h2><dl>"
        + facts.map { "<div><dt>\(xmlEscaped($0.0))</dt><dd>\(xmlEscaped($0.1))</dd></div>" }.joined() + "</dl></section>\n"
}

/// Day bars of the period; a period longer than a month: its last 31 days, then the months.
private func daySections(_ view: StatsView) -> String {
    if view.days.count <= 31 {
        let labels = view.days.map { view.days.count <= 7 ? weekdayShort(CalendarDay.weekdayNames[$0.date.weekday - 1]) : "\($0.date.day)" }
        return "<section><h2>Day by day</h2><div class=\"chart\">"
            + columnChart(id: "days", title: "Focused time per day", labels: labels, values: view.days.map(\.focused), color: view.color)
            + "</div></section>\n"
    }
    var sections = ""
    let recent = Array(view.days.filter { $0.date <= view.today }.suffix(31))
    if !recent.isEmpty {
        sections +=
            "<section><h2>The last \(recent.count) days</h2><div class=\"chart\">"
            + columnChart(
                id: "days", title: "Focused time per day, \(recent[0].date) to \(recent[recent.count - 1].date)",
                labels: recent.map { "\($0.date.day)" }, values: recent.map(\.focused), color: view.color)
            + "</div></section>\n"
    }
    let months = view.months.suffix(24)
    sections +=
        "<section><h2>Month by month</h2><div class=\"chart\">"
        + columnChart(
            id: "months", title: "Focused time per month",
            labels: months.map { Int($0.month.suffix(2)).map { monthNames[$0 - 1] } ?? $0.month },
            values: months.map(\.focused), color: view.color)
        + "</div></section>\n"
    return sections
}

/// The tasks with a daily goal: on how many of the period's days so far each was reached.
private func goalsSection(_ view: StatsView) -> String {
    let goals = view.tasks.filter { $0.goal > 0 }
    guard !goals.isEmpty else { return "" }
    let elapsed = view.days.count { $0.date <= view.today }
    return
        "<section id=\"goals\"><h2>Goals</h2><table><thead><tr><th scope=\"col\">Task</th><th scope=\"col\">Daily goal</th><th scope=\"col\">Days reached</th></tr></thead><tbody>"
        + goals.map {
            "<tr><td>\(xmlEscaped($0.name))</td><td>\(plural($0.goal, "session"))</td><td>\($0.goalDays) of \($0.goalDaysCounted ?? elapsed)</td></tr>"
        }.joined()
        + "</tbody></table></section>\n"
}

/// The week holding the period's last day: each day's plan against what was done.
private func weekSection(_ week: JSON, today: CalendarDay) -> String {
    let days = week["days"]?.arrayValue ?? []
    guard !days.isEmpty else { return "" }
    var rows = ""
    for d in days {
        let date = d["date"]?.stringValue ?? ""
        let planned = d["planned"]?.stringValue
        let done = (d["tasks"]?.arrayValue ?? []).map { t in
            "\(t["task"]?.stringValue ?? "") \(t["completed"]?.intValue ?? 0) (\(hoursMinutes(Int(t["focused_seconds"]?.intValue ?? 0))))"
        }
        let plannedCompleted = (d["tasks"]?.arrayValue ?? []).first { $0["task"]?.stringValue == planned }?["completed"]?.intValue ?? 0
        let isToday = d["today"]?.boolValue == true
        let figures = CalendarDay(date).map {
            StatsView.DayFigures(date: $0, completed: 0, focused: 0, planned: planned, plannedCompleted: Int(plannedCompleted))
        }
        let mark = figures.map { ["✓": "✓ done", "✗": "✗ missed", "○": "○ to come"][planMark($0, today: today)] ?? "" } ?? ""
        rows +=
            "<tr\(isToday ? " class=\"today\"" : "")><th scope=\"row\">\(capitalized(d["weekday"]?.stringValue ?? "")) \(date)</th>"
            + "<td>\(xmlEscaped(planned ?? "–"))</td><td>\(xmlEscaped(done.isEmpty ? "–" : done.joined(separator: ", ")))</td><td>\(mark)</td></tr>"
    }
    return "<section id=\"week\"><h2>Week \(xmlEscaped(week["week"]?.stringValue ?? "")): plan and done</h2>"
        + "<table><thead><tr><th scope=\"col\">Day</th><th scope=\"col\">Planned</th><th scope=\"col\">Done</th><th scope=\"col\">Plan</th></tr></thead><tbody>"
        + rows + "</tbody></table></section>\n"
}

/// The page's CSS: light by default, dark when the system prefers it; the heat-map's shades in
/// the report's colour for each.
private func pageStyle(color: String?) -> String {
    let light = RGB(r: 0xeb, g: 0xed, b: 0xf0)
    let dark = RGB(r: 0x21, g: 0x26, b: 0x2d)
    func shades(_ base: RGB) -> String { (0...4).map { "--l\($0):\(HeatScale.rgb($0, color, base: base).hex);" }.joined() }
    return """
        :root{--bg:\(Palette.pageLight.background.hex);--fg:\(Palette.pageLight.text.hex);--muted:\(Palette.pageLight.muted.hex);--line:#d0d7de;\(shades(light))}
        @media (prefers-color-scheme: dark){:root{--bg:\(Palette.pageDark.background.hex);--fg:\(Palette.pageDark.text.hex);--muted:\(Palette.pageDark.muted.hex);--line:#30363d;\(shades(dark))}}
        html{background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,sans-serif}
        body{margin:0}
        main{max-width:60rem;margin:0 auto;padding:1rem}
        h1{font-size:1.5rem;margin:0 0 1rem}
        h2{font-size:1.15rem;margin:1.5rem 0 .5rem}
        dl{display:grid;grid-template-columns:repeat(auto-fit,minmax(15rem,1fr));gap:.5rem 1.5rem;margin:0}
        dl div{border-left:3px solid var(--line);padding-left:.75rem}
        dt{color:var(--muted);font-size:.875rem}
        dd{margin:0}
        .chart{overflow-x:auto}
        svg{max-width:100%;height:auto;display:block}
        svg text{font:10px system-ui,sans-serif;fill:var(--fg)}
        svg text.value{font-size:9px;fill:var(--muted)}
        .l0{fill:var(--l0)}.l1{fill:var(--l1)}.l2{fill:var(--l2)}.l3{fill:var(--l3)}.l4{fill:var(--l4)}
        table{border-collapse:collapse;width:100%}
        th,td{text-align:left;padding:.25rem .5rem;border-bottom:1px solid var(--line)}
        tr.today th{font-weight:bold}
        footer{color:var(--muted);font-size:.875rem;margin-top:2rem}
        """
}
