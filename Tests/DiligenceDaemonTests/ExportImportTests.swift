import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import DiligenceTime
import Testing

@testable import DiligenceDaemon
@testable import DiligenceStore

/// Export and import through the control socket of in-process daemons (issue 13): sessions keep
/// their UUIDs across databases, an import matches on them, calendars get them as UIDs, and no
/// export writes an empty or negative interval.
@Suite struct ExportImportTests {
    func export(_ d: InProcessDaemon, _ format: String) throws -> String {
        try d.call("export", [("format", .string(format))])["content"]?.stringValue ?? ""
    }

    func history(_ d: InProcessDaemon) throws -> [JSON] {
        try d.call("history")["sessions"]?.arrayValue ?? []
    }

    @Test func anImportIntoAnotherDatabaseKeepsTheUUIDsAndNeverDoublesThem() throws {
        try withTimeZone("UTC") {
            let source = try InProcessDaemon()
            defer { source.stop() }
            try source.addSession("Work", "2025-05-01 09:00", "2025-05-01 09:25")
            try source.addSession("Study", "2025-05-01 10:00", "2025-05-01 10:25")
            let sessions = try history(source)
            let uuids = sessions.compactMap { $0["uuid"]?.stringValue }
            #expect(uuids.count == 2 && uuids.allSatisfy { UUIDText.parse($0) == $0 }, "\(sessions.map(\.serialized))")
            let jsonl = try export(source, "jsonl")

            let target = try InProcessDaemon()
            defer { target.stop() }
            #expect(try target.call("import", [("content", .string(jsonl))])["imported"]?.intValue == 2)
            #expect(try history(target).compactMap { $0["uuid"]?.stringValue } == uuids)
            // The same file again, and the same sessions moved by a minute (edited in the source
            // after the first export): the same UUIDs, so nothing new.
            #expect(try target.call("import", [("content", .string(jsonl))])["skipped"]?.intValue == 2)
            let moved = jsonl.replacing(":00:00", with: ":01:00").replacing(":25:00", with: ":26:00")
            #expect(moved != jsonl)
            let again = try target.call("import", [("content", .string(moved))])
            #expect(again["imported"]?.intValue == 0 && again["skipped"]?.intValue == 2, "\(again.serialized)")
            #expect(try history(target).count == 2)
            // The calendar gets the same UIDs from either database.
            for d in [source, target] {
                let uids = try export(d, "ics").split(separator: "\r\n").filter { $0.hasPrefix("UID:") }
                #expect(uids == uuids.map { "UID:\($0)"[...] })
            }
            #expect(try export(target, "csv").split(separator: "\r\n").first?.contains(",uuid,note") == true)
            #expect(try export(target, "csv").contains(uuids[0]))
            // A uuid that is not one is refused with its line.
            let bad = try target.failure(
                "import",
                [
                    (
                        "content",
                        .string(
                            #"{"uuid":"x","task":"Work","start":"2025-05-02T09:00:00Z","end":"2025-05-02T09:25:00Z","planned_seconds":1500,"focused_seconds":1500,"pauses":0,"outcome":"completed"}"#
                        )
                    )
                ])
            #expect(bad.code == "invalid_import" && bad.message.contains("line 1") && bad.message.contains("uuid"), "\(bad)")
        }
    }

    /// An export is read off the daemon's queue (issue 26, finding 9): a request pipelined
    /// after it on its connection is still answered after it, a refused one at once, in order,
    /// and a session recorded meanwhile on another connection is in the next export.
    @Test func anExportReadOffTheQueueKeepsItsConnectionsOrder() throws {
        try withTimeZone("UTC") {
            let d = try InProcessDaemon()
            defer { d.stop() }
            try d.addSession("Work", "2025-05-01 09:00", "2025-05-01 09:25")
            let connection = try d.connect()
            try connection.write(
                #"{"command":"export","id":1}"# + "\n" + #"{"command":"export","task":"Nope","id":2}"# + "\n"
                    + #"{"command":"status","id":3}"# + "\n")
            let answers = try (0..<3).map { _ in try connection.readJSONLine() }
            #expect(answers.map { $0["id"]?.intValue } == [1, 2, 3], "\(answers.map(\.serialized))")
            #expect(answers[0]["result"]?["count"]?.intValue == 1, "\(answers[0].serialized)")
            #expect(answers[1]["error"]?["code"]?.stringValue == "unknown_task", "\(answers[1].serialized)")
            try d.addSession("Study", "2025-05-01 10:00", "2025-05-01 10:25")
            #expect(try d.call("export")["count"]?.intValue == 2, "the export's own connection sees the new session")
        }
    }

    /// An export of more sessions than a page (`StatsService.exportPage`) is sent in pieces as it
    /// is read: the pieces join into one answer holding every session once, in order, with one
    /// head and one tail of each format.
    @Test func anExportOfManyPagesIsOneWholeAnswer() throws {
        try withTimeZone("UTC") {
            let d = try InProcessDaemon()
            defer { d.stop() }
            let count = StatsService.exportPage * 2 + 7
            var lines: [String] = []
            for i in 0..<count {
                let start = 1_700_000_000 + i * 1800
                let text = { (t: Int) in RFC3339.format(Double(t)) }
                lines.append(
                    #"{"task":"Work","start":"\#(text(start))","end":"\#(text(start + 1500))","planned_seconds":1500,"focused_seconds":1500,"pauses":0,"outcome":"completed"}"#
                )
            }
            var importID: JSON?
            for (index, chunk) in stride(from: 0, to: count, by: 300).map({ Array(lines[$0..<min($0 + 300, count)]) }).enumerated() {
                let more = (index + 1) * 300 < count
                var fields: [(String, JSON)] = [("content", .string(chunk.joined(separator: "\n") + "\n")), ("more", .bool(more))]
                if let importID { fields.append(("import_id", importID)) }
                let answer = try d.call("import", fields)
                importID = importID ?? answer["import_id"]
            }
            let uuids = try history(d).compactMap { $0["uuid"]?.stringValue }
            #expect(uuids.count == count)
            let jsonl = try d.call("export", [("format", .string("jsonl"))])
            #expect(jsonl["count"]?.intValue == Int64(count))
            let exported = (jsonl["content"]?.stringValue ?? "").split(separator: "\n").map {
                (try? JSON.parse(Array($0.utf8)))?["uuid"]?.stringValue ?? "?"
            }
            #expect(exported == uuids, "every session once, in order")
            let csv = try export(d, "csv").split(separator: "\r\n", omittingEmptySubsequences: false)
            #expect(csv.count == count + 2 && csv.first?.hasPrefix("id,task,") == true && csv.last == "", "one header: \(csv.prefix(2))")
            let ics = try export(d, "ics")
            func occurrences(_ text: String) -> Int { ics.split(separator: "\r\n").filter { $0 == text }.count }
            #expect(occurrences("BEGIN:VCALENDAR") == 1 && occurrences("END:VCALENDAR") == 1 && ics.hasSuffix("END:VCALENDAR\r\n"))
            #expect(occurrences("BEGIN:VEVENT") == count)
        }
    }

    @Test func anICalendarExportWithSegmentsHasOneEventPerStretchOfFocus() throws {
        try withTimeZone("UTC") {
            let d = try InProcessDaemon()
            defer { d.stop() }
            let uuid = "6f1c2d3e-4b5a-4c6d-8e7f-901234567890"
            let paused =
                #"{"task":"Work","start":"2025-05-02T09:00:00Z","end":"2025-05-02T09:35:00Z","planned_seconds":1500,"focused_seconds":1500,"#
                + #""pauses":1,"outcome":"completed","uuid":"\#(uuid)","segments":[{"start":"2025-05-02T09:00:00Z","seconds":600},"#
                + #"{"start":"2025-05-02T09:20:00Z","seconds":900}]}"#
            #expect(try d.call("import", [("content", .string(paused + "\n"))])["imported"]?.intValue == 1)
            func lines(_ fields: [(String, JSON)]) throws -> [Substring] {
                let answer = try d.call("export", [("format", .string("ics"))] + fields)
                return (answer["content"]?.stringValue ?? "").split(separator: "\r\n")
            }
            let stretches = try lines([("segments", .bool(true))])
            #expect(stretches.filter { $0.hasPrefix("UID:") } == ["UID:\(uuid)-1", "UID:\(uuid)-2"], "\(stretches)")
            #expect(stretches.filter { $0.hasPrefix("DTSTART:") } == ["DTSTART:20250502T090000Z", "DTSTART:20250502T092000Z"])
            #expect(stretches.filter { $0.hasPrefix("DTEND:") } == ["DTEND:20250502T091000Z", "DTEND:20250502T093500Z"])
            let whole = try lines([])
            #expect(whole.filter { $0.hasPrefix("UID:") } == ["UID:\(uuid)"] && whole.contains("DTEND:20250502T093500Z"))
            #expect(try d.failure("export", [("format", .string("jsonl")), ("segments", .bool(true))]).code == "invalid_argument")
        }
    }

    @Test func theCSVExportCarriesTheTimeAwayAndWhyWorkEnded() throws {
        try withTimeZone("UTC") {
            let d = try InProcessDaemon()
            defer { d.stop() }
            let left =
                #"{"task":"Work","start":"2025-05-02T09:00:00Z","end":"2025-05-02T09:10:00Z","planned_seconds":1500,"focused_seconds":480,"#
                + #""pauses":0,"outcome":"abandoned","away_seconds":120,"reason":"left"}"#
            #expect(try d.call("import", [("content", .string(left))])["imported"]?.intValue == 1)
            let lines = try export(d, "csv").split(separator: "\r\n")
            #expect(
                lines.first?.hasSuffix(",note,away_seconds,reason,device,device_name,interruptions_internal,interruptions_external")
                    == true, "\(lines)")
            #expect(lines.last?.contains(",120,left,") == true, "\(lines)")
        }
    }

    @Test func noExportWritesAnEmptyOrNegativeInterval() throws {
        try withTimeZone("UTC") {
            let d = try InProcessDaemon()
            defer { d.stop() }
            // Rows an older version wrote: a phase stopped the instant it began, one across a
            // wall clock stepped back, one shorter than a second.
            try d.daemon.queue.sync {
                try d.daemon.store.connection.exec(
                    """
                    INSERT INTO sessions (task_id, start, end, planned_seconds, focused_seconds, pauses, outcome, uuid) VALUES
                        (1, 1746090000, 1746090000, 1500, 0, 0, 'abandoned', '00000000-0000-4000-8000-000000000001'),
                        (1, 1746093600, 1746093000, 1500, 300, 0, 'abandoned', '00000000-0000-4000-8000-000000000002'),
                        (1, 1746097200.2, 1746097200.7, 1500, 0, 0, 'abandoned', '00000000-0000-4000-8000-000000000003');
                    """)
            }
            let ics = try export(d, "ics").replacing("\r\n ", with: "")
            let starts = ics.split(separator: "\r\n").filter { $0.hasPrefix("DTSTART:") }.map { $0.dropFirst(8) }
            let ends = ics.split(separator: "\r\n").filter { $0.hasPrefix("DTEND:") }.map { $0.dropFirst(6) }
            #expect(starts.count == 3 && ends.count == 3)
            for (start, end) in zip(starts, ends) { #expect(end > start, "DTSTART \(start) DTEND \(end)") }
            #expect(ends[1] == "20250501T100500Z", "the focused time from its start")
            // Every format holds all three rows: a loop over an empty export checks nothing.
            let jsonl = try export(d, "jsonl").split(separator: "\n")
            let csvRows = try export(d, "csv").split(separator: "\r\n").dropFirst()
            #expect(jsonl.count == 3 && csvRows.count == 3, "jsonl \(jsonl.count) lines, csv \(csvRows.count) rows")
            for line in jsonl {
                let session = try JSON.parse(String(line))
                let start = try #require(RFC3339.parse(session["start"]?.stringValue ?? ""), "\(line)")
                let end = try #require(RFC3339.parse(session["end"]?.stringValue ?? ""), "\(line)")
                #expect(end > start, "\(line)")
            }
            for row in csvRows {
                let fields = row.split(separator: ",", omittingEmptySubsequences: false)
                try #require(fields.count > 3, "\(row)")
                let start = try #require(RFC3339.parse(String(fields[2])), "\(row)")
                let end = try #require(RFC3339.parse(String(fields[3])), "\(row)")
                #expect(end > start, "\(row)")
            }
        }
    }
}
