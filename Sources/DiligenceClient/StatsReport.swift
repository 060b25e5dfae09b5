import DiligenceTime

// The text of `stats`: the figures with their change against the previous period, then the
// period's pictures — a day's timeline; a week's day bars; a month's calendar; a year's
// heat-map and month bars (`all`: a heat-map per year); the hours of the day, the tasks, the
// best task, weekday and hour. Everything fits `screen.columns`.

func statsReport(_ view: StatsView, screen: Screen, paint: Paint) -> String {
    let out = statsFacts(view, screen: screen, paint: paint)
    switch view.period {
    case "today", "day": return out + daySections(view, screen: screen, paint: paint)
    case "week": return out + weekSection(view, screen: screen, paint: paint) + spreadSections(view, screen: screen, paint: paint)
    case "month": return out + monthSection(view, screen: screen, paint: paint) + spreadSections(view, screen: screen, paint: paint)
    default: return out + yearSections(view, screen: screen, paint: paint) + spreadSections(view, screen: screen, paint: paint)
    }
}

/// A day's name in the title: `Today`, `Yesterday` (whichever way it was asked for), else `Day`.
private func dayTitle(_ view: StatsView) -> String {
    if view.from == view.today { return "Today" }
    if view.from == view.today.adding(days: -1) { return "Yesterday" }
    return "Day"
}

/// The title and the figures, with their change against the previous period.
private func statsFacts(_ view: StatsView, screen: Screen, paint: Paint) -> String {
    var title =
        view.isDay
        ? dayTitle(view) + " · \(view.totals.from)"
        : "\(capitalized(view.period)) · \(view.totals.from) – \(view.totals.to)"
    if let task = view.task { title += " · " + task }
    var out = paint.bold(title.truncated(toWidth: screen.columns - 1)) + "\n"
    let focusChange = view.comparison.map { " " + changeText(view.totals.focused, $0.totals, against: $0.name) } ?? ""
    let sessionsChange = view.comparison.map { " " + sessionChange(view.totals.completed, $0.totals, against: $0.name) } ?? ""
    var facts: [[String]]
    if view.isDay {
        facts = [
            ["Completed", plural(view.totals.completed, "session") + sessionsChange],
            ["Focused", hoursMinutes(view.totals.focused) + focusChange],
        ]
    } else {
        let active = view.totals.activeDays
        facts = [
            ["Sessions", "\(view.totals.completed) completed\(sessionsChange), \(view.recorded) recorded"],
            [
                "Focused",
                "\(hoursMinutes(view.totals.focused))\(focusChange) on \(plural(active, "active day"))"
                    + (active > 0 ? ", \(hoursMinutes(view.averagePerActiveDay)) a day on average" : ""),
            ],
        ]
    }
    if let score = view.focusScore { facts.append(["Focus score", "\(score) of 100"]) }
    if view.awaySeconds > 0 { facts.append(["Away", hoursMinutes(view.awaySeconds) + " during work"]) }
    if view.overtimeSeconds > 0 { facts.append(["Overtime", hoursMinutes(view.overtimeSeconds) + " past the bell, in the focus"]) }
    let marked = view.interruptions
    if marked.total > 0 {
        facts.append(["Interruptions", StatsView.Interruptions.text(marked.internal, marked.external) + ", " + marked.perInterruptionText])
    }
    facts.append(["Streak", view.streakText])
    out += columns(facts, width: screen.columns)
    return out + interruptionSection(marked, screen: screen)
}

/// Interruptions per day, per task and per hour of the day, when the period has any.
private func interruptionSection(_ marked: StatsView.Interruptions, screen: Screen) -> String {
    guard marked.total > 0 else { return "" }
    let rows = (marked.days.count > 1 ? marked.days : []) + marked.tasks + marked.hours
    return "\nInterruptions\n"
        + columns(
            rows.map { [$0.label.truncated(toWidth: nameWidth(screen)), String($0.internal) + "'", String($0.external) + "-"] },
            right: [1, 2], width: screen.columns)
}

/// A day's timeline, sessions and goals.
private func daySections(_ view: StatsView, screen: Screen, paint: Paint) -> String {
    var out = ""
    let timeline = dayTimelineText(view, screen: screen, paint: paint)
    if !timeline.isEmpty { out += "\nTimeline\n" + timeline }
    if !view.sessions.isEmpty {
        out +=
            "\nSessions\n"
            + columns(
                view.sessions.map { s in
                    [
                        RFC3339.clockText(s.start) + "–" + RFC3339.clockText(s.end), s.task.truncated(toWidth: nameWidth(screen)),
                        hoursMinutes(s.focused),
                        s.outcome + (s.pauses > 0 ? ", \(plural(s.pauses, "pause"))" : ""),
                    ]
                }, right: [2], width: screen.columns)
    }
    if !view.goals.isEmpty {
        out +=
            "\nGoals\n"
            + columns(
                view.goals.map { g in
                    let cells = min(g.goal, 20)
                    let filled = g.goal == 0 ? 0 : min(cells, g.completed * cells / g.goal)
                    return [
                        g.task.truncated(toWidth: nameWidth(screen)),
                        paint(String(repeating: "█", count: filled), g.color) + String(repeating: "░", count: cells - filled),
                        "\(g.completed)/\(g.goal)" + (g.completed >= g.goal ? " ✓" : ""),
                    ]
                }, width: screen.columns)
    }
    return out
}

/// A week's day bars.
private func weekSection(_ view: StatsView, screen: Screen, paint: Paint) -> String {
    "\nFocus per day\n"
        + barRows(
            view.days.map { d in
                [
                    weekdayShort(CalendarDay.weekdayNames[d.date.weekday - 1]) + " " + String(d.date.description.suffix(5)),
                    hoursMinutes(d.focused),
                ]
            }, values: view.days.map(\.focused), colors: { _ in view.color }, screen: screen, paint: paint)
}

/// A month's calendar and its legend.
private func monthSection(_ view: StatsView, screen: Screen, paint: Paint) -> String {
    let scale = HeatScale(view.days.map(\.focused))
    return "\nCalendar\n" + monthCalendarText(view, scale: scale, screen: screen, paint: paint)
        + monthLegend(view, scale: scale, screen: screen, paint: paint)
}

/// A year's (or everything's) heat-maps, month bars and weekday bars.
private func yearSections(_ view: StatsView, screen: Screen, paint: Paint) -> String {
    let scale = HeatScale(view.days.map(\.focused))
    var out = ""
    for year in splitByYear(view.days) {
        out += "\nFocus in \(year[0].date.year)\n" + heatMapText(year, scale: scale, color: view.color, screen: screen, paint: paint)
    }
    out += scale.legend(color: view.color, screen: screen, paint: paint)
    let months = view.months.count > 24 ? Array(view.months.suffix(24)) : view.months
    out +=
        "\nPer month" + (months.count < view.months.count ? " (the last 24)" : "") + "\n"
        + barRows(
            months.map { m in
                [
                    (Int(m.month.suffix(2)).map { monthNames[$0 - 1] } ?? m.month)
                        + (view.period == "all" ? " " + m.month.prefix(4) : ""), hoursMinutes(m.focused),
                    plural(m.completed, "session"),
                ]
            }, values: months.map(\.focused), right: [1, 2], colors: { _ in view.color }, screen: screen, paint: paint)
    out +=
        "\nFocus per weekday\n"
        + barRows(
            view.weekdays.map { [weekdayShort($0.name), hoursMinutes($0.focused)] },
            values: view.weekdays.map(\.focused), colors: { _ in view.color }, screen: screen, paint: paint)
    return out
}

/// How the period's focus spreads: over the hours of the day and the tasks, and the best of each.
private func spreadSections(_ view: StatsView, screen: Screen, paint: Paint) -> String {
    var out = ""
    let histogram = hourHistogramText(view.hours, color: view.color, screen: screen, paint: paint)
    if !histogram.isEmpty { out += "\nHours of the day\n" + histogram }
    let tasks = view.tasks.filter { $0.focused > 0 || $0.completed > 0 }
    if !tasks.isEmpty {
        out +=
            "\nPer task\n"
            + barRows(
                tasks.map { t in
                    [
                        paint(t.label.truncated(toWidth: nameWidth(screen)), t.color), hoursMinutes(t.focused),
                        plural(t.completed, "session"),
                    ]
                }, values: tasks.map(\.focused), right: [1, 2], colors: { tasks[$0].color }, screen: screen, paint: paint)
    }
    // A narrow terminal gets the short form, so that the figure is not broken over three lines.
    func above(_ b: StatsView.Best) -> String {
        screen.columns < 60 ? "\(hoursMinutes(b.focused)) +\(b.abovePercent)%" : b.aboveAverage
    }
    var bests: [[String]] = []
    if let b = view.bestTask {
        bests.append(["Best task", paint(b.label.truncated(toWidth: nameWidth(screen)), view.color(of: b.label)), above(b)])
    }
    if let b = view.bestWeekday { bests.append(["Best weekday", b.label, above(b)]) }
    if let b = view.bestHour { bests.append(["Best hour", b.label, above(b)]) }
    if !bests.isEmpty { out += "\n" + columns(bests, width: screen.columns) }
    return out
}

/// The widest a task name is shown in a report's rows.
func nameWidth(_ screen: Screen) -> Int { max(6, screen.columns / 5) }

/// `items` on lines of at most `screen.columns`, two spaces apart, each line indented by two.
func wrappedItems(_ items: [String], screen: Screen) -> String {
    var lines: [String] = []
    var line = ""
    for item in items {
        if line.isEmpty {
            line = item
        } else if 2 + line.displayWidth + 2 + item.displayWidth <= screen.columns {
            line += "  " + item
        } else {
            lines.append(line)
            line = item
        }
    }
    return (lines + [line]).map { "  " + $0 + "\n" }.joined()
}

/// `rows` as `columns` with a bar of `values[i]` after each row, as long as the screen leaves
/// room for (5 to 30 cells; less room: no bars, the numbers stay), in `colors(i)`.
func barRows(_ rows: [[String]], values: [Int], right: Set<Int> = [1], colors: (Int) -> String?, screen: Screen, paint: Paint) -> String {
    let used = columns(rows).split(separator: "\n").map { String($0).displayWidth }.max() ?? 0
    let width = min(30, screen.columns - used - 2)
    guard width >= 5 else { return columns(rows, right: right, width: screen.columns) }
    let maximum = values.max() ?? 0
    return columns(rows.indices.map { i in rows[i] + [paint(bar(values[i], of: maximum, width: width), colors(i))] }, right: right)
}

/// `(+12% on the previous week)`, `(−3% …)`: focused time against `previous`, named `name`.
func changeText(_ current: Int, _ previous: StatsView.Totals, against name: String) -> String {
    guard previous.focused > 0 else { return nothingBefore(current > 0, name) }
    let percent = Int((Double(current - previous.focused) * 100 / Double(previous.focused)).rounded())
    return "(\(signed(percent))% on the \(name))"
}

/// `(+3 on the previous week)`, `(−1 …)`, `(±0 …)`: completed sessions against `previous`.
func sessionChange(_ current: Int, _ previous: StatsView.Totals, against name: String) -> String {
    guard previous.completed > 0 || previous.focused > 0 else { return nothingBefore(current > 0, name) }
    return "(\(signed(current - previous.completed)) on the \(name))"
}

/// A period before with nothing in it, said one way for every figure: `(previous week: none)`,
/// or nothing when this one has nothing either.
private func nothingBefore(_ somethingNow: Bool, _ name: String) -> String {
    somethingNow ? "(\(name): none)" : ""
}

/// `+3`, `−3` (a true minus sign), `±0`.
func signed(_ n: Int) -> String { n > 0 ? "+\(n)" : (n < 0 ? "−\(-n)" : "±0") }
