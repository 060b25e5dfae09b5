import DiligenceTime

// The calendar heat-map: days as cells, ISO weeks as columns (Monday on top), shaded by focused
// time. The layout and the shades are shared by the terminal (below) and the report page's SVG.

/// Five shades of focused time: 0 for none, then quarters of the busiest day (1 to 4).
struct HeatScale {
    /// Focused seconds of the busiest day.
    var maximum: Int

    init(_ values: [Int]) { maximum = values.max() ?? 0 }

    func level(_ seconds: Int) -> Int {
        guard seconds > 0, maximum > 0 else { return 0 }
        return min(4, max(1, (seconds * 4 + maximum - 1) / maximum))
    }

    /// The most focused time a day of `level` holds (level 0: none).
    func upperBound(_ level: Int) -> Int { maximum * level / 4 }

    /// The glyph ramp of a screen without colours.
    static let glyphs = ["·", "░", "▒", "▓", "█"]

    /// The colour of `level` for task colour `color`: from a faint shade to the colour itself.
    static func rgb(_ level: Int, _ color: String?, base: RGB) -> RGB {
        base.mixed(with: Palette.rgb(color), [0, 0.3, 0.55, 0.78, 1][min(4, max(0, level))])
    }

    /// One cell on the terminal: the glyph ramp, coloured where the screen has colours (24-bit
    /// and 256: a full block in the shade; 8 colours: the ramp in the colour; none: the ramp).
    func cell(_ seconds: Int, color: String?, paint: Paint) -> String {
        let level = level(seconds)
        switch paint.colors {
        case .none: return Self.glyphs[level]
        case .basic: return level == 0 ? paint.dim(Self.glyphs[0]) : paint(Self.glyphs[level], color ?? Palette.allTasks)
        case .palette256:
            guard level > 0 else { return paint.dim(Self.glyphs[0]) }
            let shades = Palette.heat256[color ?? ""] ?? Palette.heat256[Palette.allTasks] ?? []
            return paint.palette("█", shades[level - 1])
        case .truecolor:
            return level == 0 ? paint.dim(Self.glyphs[0]) : paint.rgb("█", Self.rgb(level, color, base: Palette.terminalBase))
        }
    }

    /// `· none`, `░ to 1h00m`, … `█ to 4h00m`.
    func legendItems(color: String?, paint: Paint) -> [String] {
        guard maximum > 0 else { return ["\(cell(0, color: color, paint: paint)) no focused time"] }
        return (0...4).map { level in
            let sample = cell(level == 0 ? 0 : max(1, upperBound(level)), color: color, paint: paint)
            return sample + (level == 0 ? " none" : " to " + hoursMinutes(upperBound(level)))
        }
    }

    /// The legend on one line.
    func legend(color: String?, paint: Paint) -> String { legendItems(color: color, paint: paint).joined(separator: "  ") }

    /// The legend as lines that fit the screen.
    func legend(color: String?, screen: Screen, paint: Paint) -> String {
        wrappedItems(legendItems(color: color, paint: paint), screen: screen)
    }
}

/// Days laid out as ISO weeks (columns) × weekdays (rows, Monday first).
struct HeatMapLayout {
    /// The Monday of each column.
    var weeks: [CalendarDay]
    /// Focused seconds by date, for the days that are in the map.
    var seconds: [CalendarDay: Int]
    var first: CalendarDay
    var last: CalendarDay

    init(_ days: [StatsView.DayFigures]) {
        first = days.first?.date ?? CalendarDay(daysSince1970: 0)
        last = days.last?.date ?? first
        var seconds: [CalendarDay: Int] = [:]
        for d in days { seconds[d.date] = d.focused }
        self.seconds = seconds
        let count = days.isEmpty ? 0 : (last.monday.daysSince1970 - first.monday.daysSince1970) / 7 + 1
        let monday = first.monday
        weeks = (0..<count).map { monday.adding(days: 7 * $0) }
    }

    /// The day at column `week`, row `weekday` (0 Monday), nil outside the days.
    func day(week: Int, weekday: Int) -> CalendarDay? {
        let date = weeks[week].adding(days: weekday)
        return date < first || date > last ? nil : date
    }

    /// The columns where a month begins (its first day's week), with the month (1–12).
    var monthStarts: [(week: Int, month: Int)] {
        weeks.indices.compactMap { w in
            (0..<7).lazy.compactMap { day(week: w, weekday: $0) }.first { $0.day == 1 || $0 == first }.map { (w, $0.month) }
        }
    }
}

/// The days of each calendar year among `days`, oldest first.
func splitByYear(_ days: [StatsView.DayFigures]) -> [[StatsView.DayFigures]] {
    var years: [[StatsView.DayFigures]] = []
    for d in days {
        if years.last?.last?.date.year == d.date.year { years[years.count - 1].append(d) } else { years.append([d]) }
    }
    return years
}

/// The heat-map of `days` for the terminal: month labels above, weekday labels left, a legend
/// below. A cell is two columns wide when the weeks fit so, else one; weeks that do not fit on
/// one line go on to the next band.
func heatMapText(_ days: [StatsView.DayFigures], scale: HeatScale, color: String?, screen: Screen, paint: Paint) -> String {
    let layout = HeatMapLayout(days)
    guard !layout.weeks.isEmpty else { return "" }
    let labelWidth = 4 // "Mon "
    let room = max(7, screen.columns - labelWidth - 2)
    let cellWidth = layout.weeks.count * 2 <= room ? 2 : 1
    let perBand = max(1, room / cellWidth)
    let starts = layout.monthStarts
    var out = ""
    var bandStart = 0
    while bandStart < layout.weeks.count {
        let band = bandStart..<min(layout.weeks.count, bandStart + perBand)
        // Month labels, each where its month begins, when it does not run into the one before.
        var labels = ""
        for (week, month) in starts where band.contains(week) {
            let at = (week - band.lowerBound) * cellWidth
            if labels.count <= at, at + 3 <= band.count * cellWidth {
                labels += String(repeating: " ", count: at - labels.count) + monthNames[month - 1] + " "
            }
        }
        out += "  " + String(repeating: " ", count: labelWidth) + labels.trimmingTrailingSpaces() + "\n"
        for weekday in 0..<7 {
            var line = "  " + (weekday % 2 == 0 ? capitalized(String(CalendarDay.weekdayNames[weekday].prefix(3))) + " " : "    ")
            for week in band {
                if let date = layout.day(week: week, weekday: weekday) {
                    line += scale.cell(layout.seconds[date] ?? 0, color: color, paint: paint) + (cellWidth == 2 ? " " : "")
                } else {
                    line += String(repeating: " ", count: cellWidth)
                }
            }
            out += line.trimmingTrailingSpaces() + "\n"
        }
        bandStart = band.upperBound
    }
    return out
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var s = Substring(self)
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
