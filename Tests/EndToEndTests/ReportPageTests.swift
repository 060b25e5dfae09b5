import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Foundation
import Testing

/// `diligencectl report --html` in a real browser: Debian's headless chromium loads the page
/// offline, and the test reads back what it rendered (docs/statistics.md, "The page").
@Suite("report page in headless chromium", .serialized)
struct ReportPageTests {
    /// A daemon with sessions in March 2025 (a CJK task among them) and plans.
    static func seeded() throws -> DaemonUnderTest {
        let d = try DaemonUnderTest()
        #expect(try d.ctl("task", "add", "日本語の勉強", "--color", "red", "--goal", "2").exitCode == 0)
        let sessions: [(String, String, String)] = [
            ("Work", "2025-03-03 09:00", "2025-03-03 09:25"), ("Work", "2025-03-03 10:00", "2025-03-03 10:50"),
            ("日本語の勉強", "2025-03-04 20:00", "2025-03-04 20:25"), ("日本語の勉強", "2025-03-04 21:00", "2025-03-04 21:25"),
            ("Study", "2025-03-14 23:50", "2025-03-15 00:20"), ("Work", "2025-03-31 08:00", "2025-03-31 09:30"),
        ]
        for (task, start, end) in sessions {
            let r = try d.ctl("history", "add", task, start, end)
            #expect(r.exitCode == 0, "\(r)")
        }
        #expect(try d.ctl("plan", "set", "2025-03-03", "Work").exitCode == 0)
        #expect(try d.ctl("plan", "set", "2025-03-05", "Study").exitCode == 0)
        return d
    }

    /// Runs headless chromium on `file` in `dir` with the network unreachable (every host name
    /// resolves to nothing) and a NetLog of every request; its home, profile and temporary
    /// files stay in a directory of the run, removed after, and the harness ends whatever it
    /// leaves running. That directory sits right under the run's temporary base: chromium's
    /// socket in it must fit a socket address (108 bytes).
    static func chromium(_ action: [String], file: String, in dir: String, width: Int = 1000, height: Int = 1400) throws -> ProgramRun {
        let program = try requireProgram("chromium", "/usr/bin/chromium")
        let profile = TestRun.makeDirectory(in: TestRun.temporaryBase, prefix: "cr")
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let run = try runProgram(
            [
                program, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
                "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
                "--disable-crash-reporter", "--disable-breakpad",
                "--host-resolver-rules=MAP * ~NOTFOUND", "--user-data-dir=\(profile)/profile", "--enable-logging=stderr", "--v=0",
                "--log-net-log=\(dir)/netlog.json", "--window-size=\(width),\(height)", "--hide-scrollbars",
            ] + action + ["file://" + file],
            environment: [
                "PATH": "/usr/bin:/bin", "HOME": profile, "TMPDIR": profile, "XDG_CONFIG_HOME": profile, "XDG_CACHE_HOME": profile,
                "LANG": "C.UTF-8",
            ], directory: dir, timeout: 90)
        // Its crash handler leaves the process group and outlives it a moment: wait for every
        // process that names the profile to end (ending it by pid after 10 s), then remove it.
        let helpers = { processes(naming: profile) }
        if (try? waitUntil("chromium's helper processes exit", timeout: 10, { helpers().isEmpty })) == nil {
            for pid in helpers() { kill(pid, SIGKILL) }
        }
        try? FileManager.default.removeItem(atPath: profile)
        return run
    }

    /// The processes whose command line holds `text`.
    static func processes(naming text: String) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry in
            guard let pid = pid_t(entry), pid != getpid(),
                let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline")
            else { return nil }
            return String(decoding: data, as: UTF8.self).contains(text) ? pid : nil
        }
    }

    /// Lines chromium logs for the page's console (errors, warnings, CSP refusals).
    static func consoleLines(_ stderr: String) -> [String] {
        stderr.split(separator: "\n").map(String.init).filter { $0.contains(":CONSOLE") }
    }

    /// Requests the page made (the browser's own background ones have another isolation key).
    static func pageRequests(netlog path: String) -> Int {
        readTextFile(path).components(separatedBy: "\"network_isolation_key\":\"file://").count - 1
    }

    /// The heat-map cells of a page: date → focused seconds.
    static func dayCells(_ dom: String) -> [String: Int] {
        var cells: [String: Int] = [:]
        for part in dom.components(separatedBy: "<rect class=\"day ").dropFirst() {
            func attribute(_ name: String) -> String? {
                guard let r = part.range(of: name + "=\"") else { return nil }
                return String(part[r.upperBound...].prefix { $0 != "\"" })
            }
            if let date = attribute("data-date"), let seconds = attribute("data-seconds").flatMap(Int.init) { cells[date] = seconds }
        }
        return cells
    }

    @Test("the checks can fail: a page that fetches and logs is caught")
    func detectorsCatchABadPage() throws {
        let d = try DaemonUnderTest(launch: false)
        let page = d.root + "/bad.html"
        try
            #"<!DOCTYPE html><html><head><link rel="stylesheet" href="http://example.com/x.css"/></head><body><img src="https://example.org/a.png"/><script>console.error("boom")</script></body></html>"#
            .write(toFile: page, atomically: true, encoding: .utf8)
        let run = try Self.chromium(["--dump-dom"], file: page, in: d.root)
        #expect(run.succeeded, "\(run)")
        #expect(Self.consoleLines(run.stderr).contains { $0.contains("boom") }, "\(run.stderr)")
        #expect(Self.pageRequests(netlog: d.root + "/netlog.json") >= 2)
    }

    @Test("the month page loads offline without a console message; one cell per day with its total; not blank")
    func monthPage() throws {
        let d = try Self.seeded()
        let stats = try d.ctl("stats", "month", "2025-03-01", "--json").json()
        let report = try d.ctl("report", "month", "2025-03-01", "--html")
        #expect(report.exitCode == 0, "\(report)")
        let page = d.root + "/report.html"
        try report.stdout.write(toFile: page, atomically: true, encoding: .utf8)
        let lint = try runProgram(
            [try requireProgram("libxml2-utils", "/usr/bin/xmllint"), "--noout", page], environment: [:], directory: d.root)
        #expect(lint.succeeded && lint.stderr.isEmpty, "\(lint)")
        #expect(!report.stdout.contains("<script"), "no script")

        let dom = try Self.chromium(["--dump-dom"], file: page, in: d.root)
        try #require(dom.succeeded, "\(dom)")
        #expect(Self.consoleLines(dom.stderr).isEmpty, "console: \(Self.consoleLines(dom.stderr))")
        #expect(Self.pageRequests(netlog: d.root + "/netlog.json") == 0, "the page fetched something")
        let cells = Self.dayCells(dom.stdout)
        let days = stats["days"]?.arrayValue ?? []
        #expect(days.count == 31 && cells.count == 31, "\(cells.count) cells")
        for day in days {
            let date = day["date"]?.stringValue ?? ""
            let seconds: Int? = day["focused_seconds"]?.intValue.map { Int($0) }
            #expect(cells[date] == seconds, "\(date)")
        }
        #expect(cells["2025-03-03"] == 4500 && cells["2025-03-14"] == 600 && cells["2025-03-15"] == 1200)
        let total: Int = cells.values.reduce(0, +)
        #expect(total == 14700)
        #expect(dom.stdout.contains("日本語の勉強"), "the CJK task's bar")
        #expect(dom.stdout.contains("Week 2025-W14: plan and done"), "the week of the month's last day")

        // A phone-sized screenshot, against one of an empty page of the same size.
        let blankPage = d.root + "/blank.html"
        try "<!DOCTYPE html><html><body></body></html>".write(toFile: blankPage, atomically: true, encoding: .utf8)
        let shot = d.root + "/report.png"
        let blankShot = d.root + "/blank.png"
        #expect(try Self.chromium(["--screenshot=\(shot)"], file: page, in: d.root, width: 412, height: 1600).succeeded)
        #expect(try Self.chromium(["--screenshot=\(blankShot)"], file: blankPage, in: d.root, width: 412, height: 1600).succeeded)
        let size = (try? FileManager.default.attributesOfItem(atPath: shot)[.size] as? Int) ?? 0
        let blankSize = (try? FileManager.default.attributesOfItem(atPath: blankShot)[.size] as? Int) ?? 0
        #expect(blankSize > 0 && size > 5 * blankSize, "screenshot \(size) bytes, blank \(blankSize)")
    }

    @Test("report --svg is the heat-map alone, valid XML; all years of stats all get a cell per day")
    func svgAndAllYears() throws {
        let d = try Self.seeded()
        let svg = try d.ctl("report", "month", "2025-03-01", "--svg")
        #expect(svg.exitCode == 0 && svg.stdout.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""), "\(svg)")
        let file = d.root + "/heatmap.svg"
        try svg.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        let lint = try runProgram(
            [try requireProgram("libxml2-utils", "/usr/bin/xmllint"), "--noout", file], environment: [:], directory: d.root)
        #expect(lint.succeeded && lint.stderr.isEmpty, "\(lint)")
        #expect(Self.dayCells(svg.stdout).count == 31)
        let all = try d.ctl("stats", "all", "--json").json()
        let page = try d.ctl("report", "all", "--html")
        #expect(Self.dayCells(page.stdout).count == all["days"]?.arrayValue?.count, "one cell per day since the first session")
        #expect(try d.ctl("report", "--html", "--svg").exitCode == 2)
    }
}
