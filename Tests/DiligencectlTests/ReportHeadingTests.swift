import DiligenceJSON
import Foundation
import Testing

@testable import DiligenceClient

/// Issue 13, finding 9: report titles and headings say what they show; per-task rows are
/// sorted by time; a report of one task names no "best task".
@Suite struct ReportHeadingTests {
    func text(_ fixture: String, width: Int = 80) throws -> String {
        statsReport(StatsView(try PictureTests.fixture(fixture)), screen: Screen(columns: width, colors: .none), paint: Paint(.none))
    }

    /// The lines of the section under `heading`, up to the next blank line.
    func section(_ text: String, _ heading: String) -> [String] {
        let lines = text.components(separatedBy: "\n")
        guard let start = lines.firstIndex(of: heading) else { return [] }
        return Array(lines[(start + 1)...].prefix { !$0.isEmpty })
    }

    @Test func perTaskRowsAreSortedByTimeMostFirst() throws {
        let rows = section(try text("week"), "Per task")
        let names = rows.compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(names == ["Exercise", "Study", "日本語の勉強", "Work"], "\(rows)")
    }

    @Test func headingsOverHoursAndMinutesDoNotSayMinutes() throws {
        for fixture in ["week", "year", "all"] {
            let report = try text(fixture)
            #expect(!report.contains("Minutes per"), "\(fixture): \(report)")
        }
        #expect(!section(try text("week"), "Focus per day").isEmpty)
        #expect(!section(try text("year"), "Focus per weekday").isEmpty)
    }

    @Test func aReportOfOneTaskNamesNoBestTask() throws {
        let report = try text("year-task")
        #expect(!report.contains("Best task"), "\(report)")
        #expect(report.contains("Best weekday"))
    }

    @Test func aDayBeforeTodayIsNotTitledToday() throws {
        let json = try JSON.parse(
            #"{"period":"today","offset":-1,"from":"2026-03-13","to":"2026-03-13","today":"2026-03-14","days":[]}"#)
        let title = statsReport(StatsView(json), screen: .plain, paint: Paint(.none)).split(separator: "\n").first ?? ""
        #expect(title == "Yesterday · 2026-03-13", "\(title)")
        let today = try JSON.parse(#"{"period":"today","offset":0,"from":"2026-03-14","to":"2026-03-14","today":"2026-03-14","days":[]}"#)
        #expect(statsReport(StatsView(today), screen: .plain, paint: Paint(.none)).hasPrefix("Today · 2026-03-14\n"))
    }

    @Test func aNarrowTerminalKeepsEachBestOnOneLine() throws {
        let lines = try text("week", width: 40).components(separatedBy: "\n")
        #expect(lines.contains { $0.hasPrefix("  Best task") && $0.hasSuffix("+64%") }, "\(lines)")
        #expect(!lines.contains { $0.trimmingCharacters(in: .whitespaces) == "above" }, "\(lines)")
    }
}
