import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Foundation
import Testing

@testable import DiligenceClient

/// The terminal pictures as text, at 40, 80 and 120 columns without colours (what NO_COLOR, a
/// dumb terminal or a pipe gets), against golden files in Tests/DiligencectlTests/Pictures/.
/// The inputs are statistics objects the daemon wrote (the same directory, *.json), with a CJK
/// task among them. After a deliberate change to a picture, rewrite the golden files with
/// `make golden` (DILIGENCE_UPDATE_GOLDEN=1) and review the diff.
@Suite struct PictureTests {
    static let directory = PackageFiles.path("Tests/DiligencectlTests/Pictures")
    /// `make golden` only: never under CI, whatever leaks into its environment (make test clears it too).
    static let updating =
        ProcessInfo.processInfo.environment["DILIGENCE_UPDATE_GOLDEN"] == "1"
        && ["", "0", "false"].contains(ProcessInfo.processInfo.environment["CI"] ?? "")

    static func fixture(_ name: String) throws -> JSON {
        let text = try String(contentsOfFile: directory + "/\(name).json", encoding: .utf8)
        return try JSON.parse(text)
    }

    /// Compares `text` with the golden file `name` (or writes it when updating).
    static func golden(_ name: String, _ text: String) throws {
        let path = directory + "/\(name).txt"
        if updating {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return
        }
        let expected = try? String(contentsOfFile: path, encoding: .utf8)
        #expect(expected == text, "\(name).txt differs (make golden rewrites it); got:\n\(text)")
    }

    @Test(arguments: ["day", "week", "month", "year", "year-task", "all"], [40, 80, 120])
    func statsPictures(fixture: String, width: Int) throws {
        let text = statsReport(StatsView(try Self.fixture(fixture)), screen: Screen(columns: width, colors: .none), paint: Paint(.none))
        try Self.golden("stats-\(fixture)-\(width)", text)
        for line in text.split(separator: "\n") {
            #expect(String(line).displayWidth <= width, "wider than \(width) columns: \(line)")
        }
        #expect(!text.contains("\u{1B}"), "no escape sequence without colours")
    }

    @Test(arguments: [80, 120])
    func taskListSparklines(width: Int) throws {
        let tasks = try Self.fixture("task-list")["tasks"]?.arrayValue ?? []
        let text = taskTable(tasks, screen: Screen(columns: width, colors: .none))
        try Self.golden("task-list-\(width)", text)
        for line in text.split(separator: "\n") { #expect(String(line).displayWidth <= width, "\(line)") }
    }

    /// Issue 32, item 5: `week` ran to 101 columns at COLUMNS=80 and had no plan-kept marks.
    @Test(arguments: [40, 80, 120])
    func weekPlan(width: Int) throws {
        let text = show(try Self.fixture("week-plan"), for: try parse(["week"]), screen: Screen(columns: width, colors: .none))
        try Self.golden("week-plan-\(width)", text)
        for line in text.split(separator: "\n") { #expect(String(line).displayWidth <= width, "wider than \(width): \(line)") }
        // Monday's plan kept, Tuesday's not, Thursday (today) kept, Saturday to come, Friday unplanned.
        let marks = text.split(separator: "\n").compactMap { line in line.first { "✓✗○".contains($0) } }
        #expect(marks == ["✓", "✗", "✓", "✓", "○", "○"], "\(text)")
    }

    /// Issue 32, item 6: the sparkline went once a name was 12 columns wide (日本語の勉強) or with
    /// `--all`, and a 64-character name made the table ~220 columns: names are shortened to fit.
    @Test(arguments: [80, 120])
    func taskListAllKeepsItsSparkline(width: Int) throws {
        let tasks = try Self.fixture("task-list-all")["tasks"]?.arrayValue ?? []
        let text = taskTable(tasks, screen: Screen(columns: width, colors: .none))
        try Self.golden("task-list-all-\(width)", text)
        for line in text.split(separator: "\n") { #expect(String(line).displayWidth <= width, "\(line)") }
        #expect(text.hasPrefix("NAME") && text.split(separator: "\n").first?.hasSuffix(" DAYS") == true, "\(text)")
        #expect(text.contains("Reading eve") && text.contains("…") && text.contains("日本語の勉強"), "\(text)")
        #expect(text.contains(width < 120 ? " (arch.)" : "Piano (archived)"), "\(text)")
        let narrow = taskTable(Array(tasks.prefix(3)), screen: Screen(columns: 80, colors: .none))
        #expect(narrow.split(separator: "\n").first?.hasSuffix(" DAYS") == true, "a 12-column name leaves room at 80: \(narrow)")
    }

    /// Issue 32, item 9: the page's "Days reached N of M" counts the days the daemon counted.
    @Test func goalDaysOfThePageAreTheCountedOnes() throws {
        let json = try JSON.parse(
            #"{"period":"year","offset":0,"from":"2026-01-01","to":"2026-12-31","today":"2026-12-01","days":[],"tasks":["#
                + #"{"task":"Study","color":"blue","goal":2,"completed":9,"focused_seconds":13500,"goal_days":6,"goal_days_counted":20}]}"#)
        let page = reportHTML(StatsView(json), week: .object([("days", .array([]))]), device: nil)
        #expect(page.contains("<td>6 of 20</td>") && !page.contains("6 of 335"), "\(page)")
    }

    @Test("a period far from now keeps its dates in the title, whatever CalendarDay can hold")
    func farPeriodTitle() throws {
        let json = try JSON.parse(
            #"{"period":"year","offset":100000,"from":"102026-01-01","to":"102026-12-31","today":"2026-12-01","days":[]}"#)
        let text = statsReport(StatsView(json), screen: .plain, paint: Paint(.none))
        #expect(text.hasPrefix("Year · 102026-01-01 – 102026-12-31\n"), "\(text)")
    }

    @Test("time away during work is a line of the figures, only when there was some")
    func awayDuringWork() throws {
        let base = #"{"period":"week","offset":0,"from":"2026-11-30","to":"2026-12-06","today":"2026-12-01","days":[]"#
        let away = statsReport(StatsView(try JSON.parse(base + #","away_seconds":3900}"#)), screen: .plain, paint: Paint(.none))
        #expect(away.contains("Away") && away.contains("1h05m during work"), "\(away)")
        let none = statsReport(StatsView(try JSON.parse(base + "}")), screen: .plain, paint: Paint(.none))
        #expect(!none.contains("during work"), "\(none)")
        let page = reportHTML(StatsView(try JSON.parse(base + #","away_seconds":3900}"#)), week: .object([]))
        #expect(page.contains("<dt>Away</dt><dd>1h05m during work</dd>"), "\(page)")
        #expect(!reportHTML(StatsView(try JSON.parse(base + "}")), week: .object([])).contains("during work"))
    }

    @Test("a period under way is compared with the period before to the same point, and says so; a whole one as before")
    func comparedToThisPoint() throws {
        let base =
            #"{"period":"month","offset":0,"from":"2026-12-01","to":"2026-12-31","today":"2026-12-01","completed":1,"focused_seconds":1500,"days":[],"#
            + #""previous":{"from":"2026-11-01","to":"2026-11-30","completed":40,"focused_seconds":60000}"#
        let toDate = #","previous_to_date":{"from":"2026-11-01","to":"2026-11-01","completed":2,"focused_seconds":3000}}"#
        let partial = statsReport(StatsView(try JSON.parse(base + toDate)), screen: .plain, paint: Paint(.none))
        #expect(partial.contains("(−1 on the previous month to this point)"), "\(partial)")
        #expect(partial.contains("(−50% on the previous month to this point)"), "\(partial)")
        let whole = statsReport(StatsView(try JSON.parse(base + "}")), screen: .plain, paint: Paint(.none))
        #expect(whole.contains("(−39 on the previous month)") && whole.contains("(−98% on the previous month)"), "\(whole)")
    }

    @Test("a period before with nothing in it is said one way for sessions and focused time")
    func nothingBeforeSaidOnce() throws {
        let json = try JSON.parse(
            #"{"period":"week","offset":0,"from":"2026-11-30","to":"2026-12-06","today":"2026-12-01","completed":3,"focused_seconds":4500,"days":[],"#
                + #""previous":{"from":"2026-11-23","to":"2026-11-29","completed":0,"focused_seconds":0}}"#)
        let text = statsReport(StatsView(json), screen: .plain, paint: Paint(.none))
        #expect(text.contains("3 completed (previous week: none)") && text.contains("1h15m (previous week: none)"), "\(text)")
        #expect(!text.contains("+3 on"), "\(text)")
    }

    @Test("a past period shows its own longest streak, not the streak that runs up to today")
    func streakOfAPastPeriod() throws {
        let base = #"{"period":"day","offset":0,"from":"2026-10-14","to":"2026-10-14","days":[],"streak":{"current":9,"longest":1},"#
        let past = statsReport(StatsView(try JSON.parse(base + #""today":"2026-12-01"}"#)), screen: .plain, paint: Paint(.none))
        #expect(past.contains("Streak     longest 1 day\n") && !past.contains("9 days"), "\(past)")
        let today = statsReport(StatsView(try JSON.parse(base + #""today":"2026-10-14"}"#)), screen: .plain, paint: Paint(.none))
        #expect(today.contains("Streak     9 days now, longest 1\n"), "\(today)")
    }

    @Test func sparklineScalesToTheBusiestDay() {
        #expect(sparkline([0, 100, 200, 300, 400]) == "▁▂▃▅▇")
        #expect(sparkline([0, 0, 0]) == "▁▁▁")
        #expect(sparkline([1, 400]) == "▂▇")
    }

    @Test("colours: 24-bit shades in the task's colour, 256 from the palette, 8 as the glyph ramp in the colour")
    func coloursFollowTheScreen() throws {
        let view = StatsView(try Self.fixture("year-task"))
        func render(_ colors: ColorSupport) -> String {
            statsReport(view, screen: Screen(columns: 120, colors: colors), paint: Paint(colors))
        }
        let red = Palette.rgb("red")
        let full = HeatScale.rgb(4, "red", base: Palette.terminalBase)
        #expect(full == red)
        #expect(render(.truecolor).contains("\u{1B}[38;2;\(red.r);\(red.g);\(red.b)m█"))
        #expect(render(.palette256).contains("\u{1B}[38;5;\(Palette.heat256["red"]?[3] ?? 0)m█"))
        #expect(render(.basic).contains("\u{1B}[31m█"))
        // The same picture, colours taken away, is the plain one.
        let plain = render(.none)
        let stripped = render(.truecolor).replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
        #expect(stripped.split(separator: "\n").count == plain.split(separator: "\n").count)
    }

    @Test("NO_COLOR and TERM=dumb give the plain picture on a terminal")
    func noColorOnATerminal() {
        let terminal = Terminal(isInteractive: true, ask: { _ in nil }, outputIsTerminal: true, windowColumns: 100)
        for environment in [["TERM": "xterm-256color", "NO_COLOR": "1"], ["TERM": "dumb"]] {
            let screen = Screen.detect(
                environment: environment, isTerminal: terminal.outputIsTerminal, windowColumns: terminal.windowColumns)
            #expect(screen == Screen(columns: 100, colors: .none))
        }
    }

    /// WCAG 2 contrast ratio of two colours.
    static func contrast(_ a: RGB, _ b: RGB) -> Double {
        func luminance(_ c: RGB) -> Double {
            func channel(_ v: Int) -> Double {
                let x = Double(v) / 255
                return x <= 0.03928 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4)
            }
            return 0.2126 * channel(c.r) + 0.7152 * channel(c.g) + 0.0722 * channel(c.b)
        }
        let (l1, l2) = (luminance(a), luminance(b))
        return (max(l1, l2) + 0.05) / (min(l1, l2) + 0.05)
    }

    @Test("the page's text has 4.5:1 contrast and every task colour 3:1, in light and dark")
    func contrast() {
        for page in [Palette.pageLight, Palette.pageDark] {
            #expect(Self.contrast(page.text, page.background) >= 4.5)
            #expect(Self.contrast(page.muted, page.background) >= 4.5)
            for (name, color) in Palette.tasks {
                #expect(Self.contrast(color, page.background) >= 3, "\(name) on \(page.background.hex)")
            }
        }
    }

    @Test("the page holds no script and fetches nothing; its SVG cells are the period's days")
    func pageIsSelfContained() throws {
        let view = StatsView(try Self.fixture("month"))
        let page = reportHTML(view, week: .object([]))
        #expect(!page.contains("<script") && !page.contains("href=") && !page.contains("src=") && !page.contains("url("))
        #expect(page.contains("Content-Security-Policy") && page.contains("prefers-color-scheme: dark"))
        #expect(page.components(separatedBy: "<rect class=\"day ").count - 1 == 31)
        #expect(page.components(separatedBy: "<title").count - 1 >= 31 + 4, "a title on every chart and cell")
        #expect(page.contains("日本語の勉強"))
        #expect(xmlEscaped("a<b & \"c\"") == "a&lt;b &amp; &quot;c&quot;")
    }

    @Test("a year's page has the weekday chart the terminal's year report has; a month's has none")
    func pageWeekdays() throws {
        let year = StatsView(try Self.fixture("year"))
        #expect(year.weekdays.count == 7 && year.weekdays.contains { $0.focused > 0 })
        let page = reportHTML(year, week: .object([]))
        #expect(page.contains("<h2>Weekdays</h2>") && page.contains("Focused time per weekday"), "\(page.suffix(4000))")
        for day in year.weekdays {
            #expect(page.contains(">\(weekdayShort(day.name))<"), "\(day.name)")
        }
        #expect(!reportHTML(StatsView(try Self.fixture("month")), week: .object([])).contains("<h2>Weekdays</h2>"))
    }

    @Test("heat levels are quarters of the busiest day; the legend names them")
    func heatScale() {
        let scale = HeatScale([0, 3600, 7200])
        #expect([0, 1, 1800, 1801, 3600, 5400, 5401, 7200].map(scale.level) == [0, 1, 1, 2, 2, 3, 4, 4])
        #expect(scale.legend(color: nil, paint: Paint(.none)) == "· none  ░ to 30m  ▒ to 1h00m  ▓ to 1h30m  █ to 2h00m")
    }

    @Test("a 2-column cell where 53 weeks fit, else 1, else bands of weeks")
    func heatMapFitsTheWidth() throws {
        let days = StatsView(try Self.fixture("year")).days
        let scale = HeatScale(days.map(\.focused))
        for width in [20, 40, 60, 80, 120, 200] {
            let text = heatMapText(days, scale: scale, color: nil, screen: Screen(columns: width, colors: .none), paint: Paint(.none))
            let cells = text.filter { "·░▒▓█".contains($0) }.count
            #expect(cells == 365, "every day once at \(width) columns")
            #expect(text.split(separator: "\n").allSatisfy { String($0).displayWidth <= max(width, 20) })
        }
    }
}
