// When do I focus best: focused time per hour of the day as vertical bars, 24 columns (or 48,
// 72 on a wide screen), in eighths of a line.

func hourHistogramText(_ hours: [Int], color: String?, screen: Screen, paint: Paint) -> String {
    guard hours.count == 24, let maximum = hours.max(), maximum > 0 else { return "" }
    let cellWidth = max(1, min(3, (screen.columns - 4) / 24))
    let height = 4
    let eighths = ["", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]
    var out = ""
    for row in (0..<height).reversed() {
        var line = "  "
        for h in 0..<24 {
            let filled = hours[h] * height * 8 / maximum - row * 8
            let glyph = filled >= 8 ? "█" : (filled > 0 ? eighths[filled] : (row == 0 && hours[h] > 0 ? "▁" : " "))
            let cell = String(repeating: glyph, count: max(1, cellWidth - 1)) + (cellWidth > 1 ? " " : "")
            line += glyph == " " ? cell : paint(cell, color ?? Palette.allTasks)
        }
        out += line.trimmingTrailingSpaces() + "\n"
    }
    // Hour labels every 3 hours (6 when cells are one column wide), under their hour.
    let every = cellWidth == 1 ? 6 : 3
    var labels = "  "
    for h in stride(from: 0, to: 24, by: every) {
        let at = 2 + h * cellWidth
        labels += String(repeating: " ", count: max(0, at - labels.count)) + twoDigits(h)
    }
    out += labels + "\n"
    out += "  tallest: \(hoursMinutes(maximum)), \(hourRange(hours.firstIndex(of: maximum) ?? 0))\n"
    return out
}
