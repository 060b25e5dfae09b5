import DiligenceTime

// `stats month` as a calendar: ISO weeks as rows, Monday to Sunday as columns, each day shaded
// by focused time (HeatScale), today marked, and for a planned day whether its plan was done.

/// The plan mark of a day: done (the planned task has a completed session), missed (a past
/// day without one), to come (today or later), or none.
func planMark(_ d: StatsView.DayFigures, today: CalendarDay) -> String {
    guard d.planned != nil else { return " " }
    if d.plannedCompleted > 0 { return "✓" }
    return d.date < today ? "✗" : "○"
}

func monthCalendarText(_ view: StatsView, scale: HeatScale, screen: Screen, paint: Paint) -> String {
    guard let first = view.days.first?.date else { return "" }
    let byDate = Dictionary(view.days.map { ($0.date, $0) }, uniquingKeysWith: { a, _ in a })
    // Wide: `W12` labels and two-cell shades; narrow (under 60 columns): neither.
    let wide = screen.columns >= 60
    let shadeWidth = wide ? 2 : 1
    let cellWidth = 1 + 2 + (wide ? 1 : 0) + shadeWidth + 1 // mark, day, gap, shade, plan
    let weekLabel = wide ? "     " : "  "
    var out =
        weekLabel
        + CalendarDay.weekdayNames.map { (" " + capitalized($0).prefix(wide ? 3 : 2)).padded(toWidth: cellWidth) }.joined()
        .trimmingTrailingSpaces() + "\n"
    var monday = first.monday
    while monday <= view.days[view.days.count - 1].date {
        var line = wide ? "  " + "W" + String(monday.isoWeekName.suffix(2)) : "  "
        for offset in 0..<7 {
            let date = monday.adding(days: offset)
            guard let d = byDate[date] else {
                line += String(repeating: " ", count: cellWidth)
                continue
            }
            let isToday = date == view.today
            let number = String(date.day).padded(toWidth: 2, right: true)
            let shade = String(repeating: scale.cell(d.focused, color: view.color, paint: paint), count: shadeWidth)
            line +=
                (isToday ? "▸" : " ") + (isToday ? paint.inverse(number) : number) + (wide ? " " : "") + shade
                + planMark(d, today: view.today)
        }
        out += line.trimmingTrailingSpaces() + "\n"
        monday = monday.adding(days: 7)
    }
    return out
}

/// The line under the calendar: the shades, and the plan marks when a day of the month has a plan.
func monthLegend(_ view: StatsView, scale: HeatScale, screen: Screen, paint: Paint) -> String {
    var items = scale.legendItems(color: view.color, paint: paint) + ["▸ today"]
    let planned = view.days.filter { $0.planned != nil }
    if !planned.isEmpty {
        items += [
            "plan: ✓ done", "✗ missed", "○ to come", "\(planned.count { $0.plannedCompleted > 0 }) of \(planned.count) planned days done",
        ]
    }
    return wrappedItems(items, screen: screen)
}
