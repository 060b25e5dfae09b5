import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EndToEnd {
    @Suite("Interruptions: marked on running work, in status, history, watchers, hooks and across a SIGKILL")
    struct Interruptions {
        /// A daemon that records work of any length (`min_session = 0`), with `hooks` in its config.
        static func daemon(_ hooks: String = "") throws -> DaemonUnderTest {
            let d = try DaemonUnderTest(launch: false)
            try d.writeConfig("[timer]\nmin_session = 0\n\(hooks)")
            try d.start()
            return d
        }

        @Test("diligencectl interrupt marks the work without stopping it; status, history and watchers show it")
        func markedAndShown() throws {
            let d = try Self.daemon()
            try d.addTask("Deep", [("work", .string("1h"))])
            let idle = try d.ctl("interrupt")
            #expect(idle.exitCode == 1 && idle.stderr.contains("no work phase runs"), "\(idle)")
            let watcher = try d.watch()
            try d.call("start", [("task", .string("Deep"))])
            let before = try d.status()["ends_at"]?.stringValue
            #expect(try d.ctl("interrupt", "mail").exitCode == 0)
            let external = try d.ctl("interrupt", "--external", "phone call")
            #expect(external.exitCode == 0, "\(external)")
            #expect(try d.ctl("interrupt", "--internal", "--external").exitCode == 2)
            let status = try d.status()
            #expect(status["state"]?.stringValue == "running")
            #expect(status["interruptions"]?.intValue == 2)
            #expect(status["ends_at"]?.stringValue == before, "an interruption moved the deadline")
            #expect(try d.ctl("status", "--format", "{interruptions}").stdout == "2\n")
            let event = watcher.waitFor(timeout: 3) { $0.name == "interrupted" && $0.json["interruption"]?["kind"] == .string("external") }
            #expect(event?.event.json["interruption"]?["note"]?.stringValue == "phone call", "\(watcher.transcript)")
            #expect(event?.event.status?["interruptions"]?.intValue == 2)
            try d.call("stop")
            let history = try d.ctl("history", "--json").json()
            let list = try #require(history["sessions"]?.arrayValue?.first?["interruptions"]?.arrayValue)
            #expect(list.map { $0["kind"]?.stringValue ?? "" } == ["internal", "external"])
            #expect(list.map { $0["note"]?.stringValue ?? "" } == ["mail", "phone call"])
            let table = try d.ctl("history")
            #expect(table.stdout.contains("INTERRUPTED") && table.stdout.contains("'- 1' 1-"), "\(table)")
        }

        @Test("a void_on_interrupt task's work ends at an external interruption, abandoned for that reason")
        func voidOnInterrupt() throws {
            let d = try Self.daemon()
            let added = try d.ctl("task", "add", "Strict", "--work", "1h", "--void-on-interrupt", "on")
            #expect(added.exitCode == 0, "\(added)")
            #expect(try d.call("task_show", [("task", .string("Strict"))])["void_on_interrupt"]?.boolValue == true)
            try d.call("start", [("task", .string("Strict"))])
            sleepFor(1.1)
            #expect(try d.ctl("interrupt").exitCode == 0)
            #expect(try d.status()["state"]?.stringValue == "running")
            let voided = try d.ctl("interrupt", "--external")
            #expect(voided.exitCode == 0, "\(voided)")
            #expect(try d.status()["state"]?.stringValue == "idle")
            let session = try #require(try d.call("history")["sessions"]?.arrayValue?.first)
            #expect(session["outcome"]?.stringValue == "abandoned")
            #expect(session["reason"]?.stringValue == "interrupted")
            #expect(session["interruptions"]?.arrayValue?.count == 2)
        }

        @Test("on_interrupt gets DILIGENCE_INTERRUPTION_KIND and the interruption on stdin")
        func hook() throws {
            let d = try DaemonUnderTest(launch: false)
            let record = d.root + "/interrupt.out"
            let script = try d.writeScript(
                "record-interrupt",
                """
                #!/bin/sh
                { printf 'event=%s\\nkind=%s\\nnote=%s\\nstdin=' "$DILIGENCE_EVENT" "$DILIGENCE_INTERRUPTION_KIND" "$DILIGENCE_INTERRUPTION_NOTE"; cat; } > "\(record).tmp"
                mv "\(record).tmp" "\(record)"
                """)
            try d.writeConfig("[hooks]\non_interrupt = \"\(script)\"\n")
            try d.start()
            try d.addTask("Deep", [("work", .string("1h"))])
            try d.call("start", [("task", .string("Deep"))])
            try d.call("interrupt", [("kind", .string("external")), ("note", .string("door"))])
            let deadline = monotonicNow() + 6
            while access(record, F_OK) != 0 && monotonicNow() < deadline { sleepFor(0.05) }
            let lines = readTextFile(record).split(separator: "\n").map(String.init)
            #expect(lines.contains("event=interrupt"), "\(lines)\n\(d.diagnostics)")
            #expect(lines.contains("kind=external"), "\(lines)")
            #expect(lines.contains("note=door"), "\(lines)")
            let stdin = try JSON.parse(lines.first { $0.hasPrefix("stdin=") }.map { String($0.dropFirst(6)) } ?? "")
            #expect(stdin["event"]?.stringValue == "interrupted")
            #expect(stdin["interruption"]?["kind"]?.stringValue == "external")
            try d.call("stop")
        }

        @Test("SIGKILL in the middle of the work: the restarted daemon has its interruptions, and records them")
        func survivesSIGKILL() throws {
            let d = try Self.daemon()
            try d.addTask("Deep", [("work", .string("1h"))])
            try d.call("start", [("task", .string("Deep"))])
            try d.call("interrupt", [("note", .string("idea"))])
            try d.call("interrupt", [("kind", .string("external"))])
            try d.call("interrupt")
            d.kill()
            try d.start()
            let status = try d.status()
            #expect(status["state"]?.stringValue == "running", "\(status.serialized)")
            #expect(status["interruptions"]?.intValue == 3, "\(status.serialized)")
            try d.call("stop")
            let list = try d.call("history")["sessions"]?.arrayValue?.first?["interruptions"]?.arrayValue ?? []
            #expect(list.map { $0["kind"]?.stringValue ?? "" } == ["internal", "external", "internal"])
            #expect(list.first?["note"]?.stringValue == "idea")
        }
    }
}

extension EndToEnd {
    @Suite("Interruptions in exports, import and sync")
    struct InterruptionRecords {
        /// A daemon whose one recorded session of Deep has an internal and an external interruption.
        static func markedSession(_ d: DaemonUnderTest) throws {
            try d.addTask("Deep", [("work", .string("1h"))])
            try d.call("start", [("task", .string("Deep"))])
            try d.call("interrupt", [("note", .string("idea, \"big\""))])
            try d.call("interrupt", [("kind", .string("external"))])
            sleepFor(1.1)
            try d.call("stop")
        }

        static func daemon(_ d: DaemonUnderTest) throws {
            try d.writeConfig("[timer]\nmin_session = 0\n")
            try d.start()
        }

        @Test("JSON lines carry the list and import reads it back into a fresh database; CSV counts, iCalendar describes")
        func exportsAndImport() throws {
            let a = try DaemonUnderTest(launch: false)
            try Self.daemon(a)
            try Self.markedSession(a)
            let jsonl = try a.ctl("export", "--format", "jsonl", "--with-tasks")
            #expect(jsonl.exitCode == 0, "\(jsonl)")
            let csv = try a.ctl("export", "--format", "csv").stdout.split(separator: "\r\n").map(String.init)
            #expect(csv.first?.hasSuffix(",interruptions_internal,interruptions_external") == true, "\(csv)")
            #expect(csv.dropFirst().first?.hasSuffix(",1,1") == true, "\(csv)")
            let ics = try a.ctl("export", "--format", "ics").stdout.replacing("\r\n ", with: "")
            #expect(ics.contains("interruptions '- (1 internal\\, 1 external): idea\\, \"big\""), "\(ics)")

            let b = try DaemonUnderTest(launch: false)
            try Self.daemon(b)
            let file = b.root + "/export.jsonl"
            try jsonl.stdout.write(toFile: file, atomically: true, encoding: .utf8)
            let imported = try b.ctl("import", file)
            #expect(imported.exitCode == 0, "\(imported)")
            let original = try a.call("history")["sessions"]?.arrayValue?.first?["interruptions"]
            let back = try b.call("history")["sessions"]?.arrayValue?.first?["interruptions"]
            #expect(back != nil && back == original, "\(String(describing: back?.serialized))")
            #expect(try b.call("task_show", [("task", .string("Deep"))])["void_on_interrupt"]?.boolValue == false)
        }

        @Test("a second device's history shows them after the merge, and a voided session stays voided")
        func throughSync() throws {
            let (a, folderA, idA) = try EndToEnd.SyncMerge.device("laptop")
            let (b, folderB, _) = try EndToEnd.SyncMerge.device("desktop")
            // Work of a second is recorded (`min_session = 0`).
            try a.writeConfig("[timer]\nmin_session = 0\n")
            try a.call("reload")
            try a.call("task_add", [("name", .string("Strict")), ("work", .string("1h")), ("void_on_interrupt", .bool(true))])
            try a.call("start", [("task", .string("Strict"))])
            try a.call("interrupt", [("note", .string("idea"))])
            sleepFor(1.1)
            try a.call("interrupt", [("kind", .string("external")), ("note", .string("door"))])
            _ = try a.status()
            let journal = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(folderA)/\(idA).jsonl")))
            let text = String(decoding: journal, as: UTF8.self)
            // Readers before interruptions refuse a reason they do not know; they read `voided` as nothing.
            #expect(text.contains(#""voided":true"#) && !text.contains(#""reason":"interrupted""#), "\(text)")
            try EndToEnd.SyncMerge.deliver(journal, to: "\(folderB)/\(idA).jsonl")
            try EndToEnd.SyncMerge.eventually("B shows A's session") { try (b.call("history")["sessions"]?.arrayValue ?? []).count == 1 }
            let merged = try #require(try b.call("history")["sessions"]?.arrayValue?.first)
            #expect(merged["reason"]?.stringValue == "interrupted", "\(merged.serialized)")
            let list = merged["interruptions"]?.arrayValue ?? []
            #expect(list.map { $0["kind"]?.stringValue ?? "" } == ["internal", "external"], "\(merged.serialized)")
            #expect(list.map { $0["note"]?.stringValue ?? "" } == ["idea", "door"])
            let table = try b.ctl("history")
            #expect(table.stdout.contains("'- 1' 1-"), "\(table)")
        }
    }
}

extension EndToEnd {
    @Suite("Interruptions in reports")
    struct InterruptionReports {
        @Test("stats and the HTML report count per day and task exactly what history --json lists, and focus per interruption")
        func perDayMatchesHistory() throws {
            let d = try DaemonUnderTest(launch: false)
            try d.writeConfig("[timer]\nmin_session = 0\n")
            try d.start()
            try d.addTask("Deep", [("work", .string("1h"))])
            try d.addTask("Mail", [("work", .string("1h"))])
            for (task, kinds) in [("Deep", ["internal", "external", "internal"]), ("Mail", ["external"])] {
                try d.call("start", [("task", .string(task))])
                for kind in kinds { try d.call("interrupt", [("kind", .string(kind))]) }
                sleepFor(1.1)
                try d.call("stop")
            }
            // What history --json says, per local day of each interruption's moment.
            var expected: [String: (Int, Int)] = [:]
            var expectedHours: [Int: (Int, Int)] = [:]
            for session in try d.ctl("history", "--json").json()["sessions"]?.arrayValue ?? [] {
                for i in session["interruptions"]?.arrayValue ?? [] {
                    let at = i["at"]?.stringValue ?? ""
                    let day = String(at.prefix(10))
                    let hour = try #require(Int(at.dropFirst(11).prefix(2)), "\(at)")
                    var counts = expected[day] ?? (0, 0)
                    var hourly = expectedHours[hour] ?? (0, 0)
                    if i["kind"]?.stringValue == "internal" {
                        counts.0 += 1
                        hourly.0 += 1
                    } else {
                        counts.1 += 1
                        hourly.1 += 1
                    }
                    expected[day] = counts
                    expectedHours[hour] = hourly
                }
            }
            #expect(expected.values.reduce(0) { $0 + $1.0 + $1.1 } == 4)
            let stats = try d.ctl("stats", "week", "--json").json()
            var reported: [String: (Int, Int)] = [:]
            for day in stats["days"]?.arrayValue ?? [] {
                let i = day["interruptions"]
                let counts = (Int(i?["internal"]?.intValue ?? 0), Int(i?["external"]?.intValue ?? 0))
                if counts.0 + counts.1 > 0 { reported[day["date"]?.stringValue ?? ""] = counts }
            }
            #expect(reported.mapValues { "\($0)" } == expected.mapValues { "\($0)" }, "\(stats.serialized)")
            let totals = try #require(stats["interruptions"])
            #expect(totals["internal"]?.intValue == 2 && totals["external"]?.intValue == 2)
            let focused = stats["focused_seconds"]?.intValue ?? 0
            #expect(totals["focused_seconds_per_interruption"]?.intValue == Int64((Double(focused) / 4).rounded()))
            let tasks = totals["tasks"]?.arrayValue ?? []
            #expect(
                tasks.map { "\($0["task"]?.stringValue ?? ""):\($0["internal"]?.intValue ?? 0)/\($0["external"]?.intValue ?? 0)" } == [
                    "Deep:2/1", "Mail:0/1",
                ])
            var reportedHours: [Int: String] = [:]
            for hour in totals["hours"]?.arrayValue ?? [] {
                let counts = (hour["internal"]?.intValue ?? 0, hour["external"]?.intValue ?? 0)
                if counts.0 + counts.1 > 0 { reportedHours[Int(hour["hour"]?.intValue ?? -1)] = "\(counts)" }
            }
            #expect(reportedHours == expectedHours.mapValues { "\((Int64($0.0), Int64($0.1)))" }, "\(totals.serialized)")
            let text = try d.ctl("stats", "week", "--plain")
            #expect(text.stdout.contains("Interruptions") && text.stdout.contains("4: 2 internal ('), 2 external (-)"), "\(text)")
            let lines = text.stdout.split(separator: "\n")
            for (hour, counts) in expectedHours {
                let label = Self.hourLabel(hour)
                let row = lines.first { $0.drop { $0 == " " }.hasPrefix(label) }.map { $0.split(separator: " ").map(String.init) }
                #expect(row == [label, "\(counts.0)'", "\(counts.1)-"], "\(text.stdout)")
            }
            let page = try d.ctl("report", "week", "--html")
            #expect(page.exitCode == 0, "\(page)")
            for (day, counts) in expected {
                #expect(
                    page.stdout.contains("<tr><th scope=\"row\">\(day)</th><td>\(counts.0)</td><td>\(counts.1)</td></tr>"),
                    "\(page.stdout.suffix(3000))")
            }
            #expect(page.stdout.contains("<tr><th scope=\"row\">Deep</th><td>2</td><td>1</td></tr>"))
            for (hour, counts) in expectedHours {
                #expect(
                    page.stdout.contains(
                        "<tr><th scope=\"row\">\(Self.hourLabel(hour))</th><td>\(counts.0)</td><td>\(counts.1)</td></tr>"),
                    "\(page.stdout.suffix(3000))")
            }
        }

        /// `09:00–10:00`, written out here rather than taken from the client.
        static func hourLabel(_ hour: Int) -> String {
            let two = { (h: Int) in h < 10 ? "0\(h)" : "\(h)" }
            return "\(two(hour)):00–\(two(hour + 1)):00"
        }
    }
}
