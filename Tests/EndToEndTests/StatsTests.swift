import DiligenceJSON
import DiligenceProtocol
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EndToEnd {
    @Suite("diligencectl: stats, history, export and import")
    struct StatsCommands {
        /// Three sessions entered by hand through diligencectl (the daemon runs in UTC).
        static func seed(_ d: DaemonUnderTest) throws {
            for (task, start, end, pauses) in [
                ("Work", "2025-05-01 09:00", "2025-05-01 09:25", "0"),
                ("Study", "2025-05-01 23:50", "2025-05-02 00:15", "2"),
                ("Work", "2025-05-03 14:00", "2025-05-03 14:50", "1"),
            ] {
                let r = try d.ctl("history", "add", task, start, end, "--pauses", pauses)
                #expect(r.exitCode == 0, "\(r)")
            }
        }

        @Test("export jsonl, import into another daemon: equal field by field")
        func exportImportRoundTrip() throws {
            let source = try DaemonUnderTest()
            try Self.seed(source)
            let exported = try source.ctl("export", "--format", "jsonl")
            #expect(exported.exitCode == 0, "\(exported)")
            #expect(exported.stdout.split(separator: "\n").count == 3)
            let file = source.root + "/sessions.jsonl"
            try exported.stdout.write(toFile: file, atomically: true, encoding: .utf8)

            let target = try DaemonUnderTest()
            let imported = try target.ctl("import", file)
            #expect(imported.exitCode == 0, "\(imported)")
            #expect(imported.stdout.contains("Imported 3 sessions"), "\(imported)")
            let before = try source.ctl("history", "--json").json()["sessions"]?.arrayValue ?? []
            let after = try target.ctl("history", "--json").json()["sessions"]?.arrayValue ?? []
            #expect(after.count == 3)
            #expect(before.allSatisfy { $0["uuid"]?.stringValue?.count == 36 }, "every session has its UUID")
            for (a, b) in zip(before, after) {
                for key in ["uuid", "task", "start", "end", "planned_seconds", "focused_seconds", "pauses", "outcome"] {
                    #expect(a[key] == b[key], "\(key): \(a.serialized) vs \(b.serialized)")
                }
            }
            let again = try target.ctl("import", file)
            #expect(again.stdout.contains("Imported 0 sessions (3 already recorded"), "\(again)")

            // One bad line: the file is refused with its line number, nothing imported.
            let bad = source.root + "/bad.jsonl"
            try (exported.stdout + "{\"task\":\"Work\",\"start\":\"yesterday\"}\n").write(toFile: bad, atomically: true, encoding: .utf8)
            let fresh = try DaemonUnderTest()
            let refused = try fresh.ctl("import", bad)
            #expect(refused.exitCode == 1)
            #expect(refused.stderr.contains("line 4"), "\(refused)")
            #expect(try fresh.sqlite("SELECT count(*) FROM sessions") == [["0"]])
        }

        @Test("ics export parses back: one VEVENT per session with its times")
        func icsParsesBack() throws {
            let d = try DaemonUnderTest()
            try Self.seed(d)
            let r = try d.ctl("export", "--format", "ics")
            #expect(r.exitCode == 0, "\(r)")
            let raw = r.stdout
            #expect(raw.hasSuffix("END:VCALENDAR\r\n"))
            let physical = raw.components(separatedBy: "\r\n").dropLast()
            #expect(physical.allSatisfy { $0.utf8.count <= 75 }, "lines are folded at 75 octets")
            // Unfold (RFC 5545 3.1), then read properties per event.
            let lines = raw.replacingOccurrences(of: "\r\n ", with: "").components(separatedBy: "\r\n").filter { !$0.isEmpty }
            #expect(lines.first == "BEGIN:VCALENDAR")
            #expect(lines.contains("VERSION:2.0"))
            var events: [[String: String]] = []
            var current: [String: String]?
            for line in lines {
                if line == "BEGIN:VEVENT" {
                    current = [:]
                    continue
                }
                if line == "END:VEVENT" {
                    events.append(current ?? [:])
                    current = nil
                    continue
                }
                if current != nil, let colon = line.firstIndex(of: ":") {
                    current?[String(line[..<colon])] = String(line[line.index(after: colon)...])
                }
            }
            #expect(events.count == 3)
            #expect(events.map { $0["SUMMARY"] } == ["Work", "Study", "Work"])
            #expect(events[1]["DTSTART"] == "20250501T235000Z")
            #expect(events[1]["DTEND"] == "20250502T001500Z")
            let uuids = try d.ctl("history", "--json").json()["sessions"]?.arrayValue?.compactMap { $0["uuid"]?.stringValue }
            #expect(events.compactMap { $0["UID"] } == uuids, "the sessions' UUIDs are the UIDs")
            #expect(Set(events.compactMap { $0["UID"] }).count == 3, "unique UIDs")
            #expect(events.allSatisfy { $0["DTSTAMP"]?.hasSuffix("Z") == true })
        }

        @Test("csv export has a header and one row per session; stats figures and plain text")
        func csvAndStats() throws {
            let d = try DaemonUnderTest()
            try Self.seed(d)
            let csv = try d.ctl("export", "--format", "csv", "--since", "2025-05-02")
            #expect(csv.exitCode == 0, "\(csv)")
            let rows = csv.stdout.components(separatedBy: "\r\n").filter { !$0.isEmpty }
            #expect(
                rows.first
                    == "id,task,start,end,planned_seconds,focused_seconds,pauses,outcome,uuid,note,away_seconds,reason,device,device_name,"
                    + "interruptions_internal,interruptions_external")
            #expect(rows.count == 2, "since 2025-05-02: the 14:00 session only: \(rows)")

            let all = try d.ctl("stats", "all", "--json").json()
            #expect(all["completed"]?.intValue == 3)
            #expect(all["focused_seconds"]?.intValue == 6000)
            let days = all["days"]?.arrayValue ?? []
            #expect(days.first?["date"]?.stringValue == "2025-05-01")
            // The 23:50 session: 10 minutes on the 1st, 15 on the 2nd, where it ended.
            #expect(days.first?["focused_seconds"]?.intValue == 2100)
            #expect(days.dropFirst().first?["focused_seconds"]?.intValue == 900)
            #expect(days.dropFirst().first?["completed"]?.intValue == 1)

            let text = try d.ctl("stats", "all", "--task", "work")
            #expect(text.exitCode == 0, "\(text)")
            #expect(text.stdout.contains("2 completed"), "\(text.stdout)")
            #expect(!text.stdout.contains("\u{1B}["), "no colours when stdout is not a terminal")
            #expect(try d.ctl("stats", "decade").exitCode == 2)
            #expect(try d.ctl("export", "--format", "xml").exitCode == 2)
            #expect(try d.ctl("stats", "--task", "Nope").exitCode == 2)
        }

        @Test("week view shows the plan; the last task cannot be removed")
        func weekAndLastTask() throws {
            let d = try DaemonUnderTest()
            #expect(try d.ctl("plan", "set", "today", "Study").exitCode == 0)
            let week = try d.ctl("week")
            #expect(week.exitCode == 0, "\(week)")
            #expect(week.stdout.contains("plan: Study"), "\(week.stdout)")
            let json = try d.ctl("week", "--offset", "-1", "--json").json()
            #expect(json["days"]?.arrayValue?.contains { $0["today"]?.boolValue == true } == false)
            for name in ["Work", "Exercise", "Meditate", "Wish", "Daily", "Errands"] {
                #expect(try d.ctl("task", "remove", name, "--yes").exitCode == 0)
            }
            let last = try d.ctl("task", "remove", "Study", "--yes")
            #expect(last.exitCode == 1 && last.stderr.contains("last task"), "\(last)")
            #expect(try d.ctl("week", "--json").json()["days"]?.arrayValue?.contains { $0["planned"]?.stringValue == "Study" } == true)
        }
    }
}
