import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// Issue 26, item 10: the data directory removed under a running daemon, files from Windows
// editors (CRLF, a UTF-8 BOM), and a request line of spaces.

extension EndToEnd {
    @Suite("What other hands and tools do to the daemon's files and lines")
    struct OutsideHands {
        @Test(
            "the data directory removed while running: said in the log at once, every write refused, no false 'saved'; a restart starts anew"
        )
        func dataDirectoryRemoved() throws {
            let d = try DaemonUnderTest()
            _ = try d.addTask("Before")
            let directory = d.dataHome + "/diligence"
            let removed = try runProgram(["/bin/rm", "-rf", directory], environment: [:], directory: d.root)
            try #require(removed.succeeded, "\(removed)")
            try SyncMerge.eventually("database_gone logged") { d.stderr.contains("event=database_gone") }
            let gone = d.stderr.split(separator: "\n").filter { $0.contains("event=database_gone") }
            #expect(gone.count == 1 && gone.first?.contains(d.databasePath) == true, "\(gone)")

            for (command, arguments) in [
                ("task_add", [("name", JSON.string("After"))]),
                (
                    "history_add",
                    [("task", .string("Before")), ("start", .string("2026-11-30 09:00")), ("end", .string("2026-11-30 09:25"))]
                ),
            ] {
                let answer = try d.send(Request(command: command, arguments: arguments), timeout: 5)
                let message = answer["error"]?["message"]?.stringValue ?? ""
                #expect(
                    answer.errorCode == "storage_error" && message.contains("\(d.databasePath) was removed"),
                    "\(command) → \(answer.serialized)")
            }
            #expect(try d.status()["state"]?.stringValue == "idle", "reads still answer")
            #expect(try SyncMerge.taskNames(d).contains("Before"))
            #expect(gone.count == Self.count(d, "event=database_gone"), "logged once, whatever was refused since")

            d.signal(SIGTERM)
            #expect(try d.waitExit() == .exited(0))
            let last = readTextFile(d.root + "/diligenced-1.stderr")
            #expect(!last.contains("timer state saved") && last.contains("could not be saved"), "\(last)")
            try d.restart()
            #expect(try SyncMerge.taskNames(d).contains("After") == false, "nothing acknowledged was lost: it was refused")
        }

        static func count(_ d: DaemonUnderTest, _ text: String) -> Int {
            d.stderr.split(separator: "\n").filter { $0.contains(text) }.count
        }

        @Test("an import file and a config file that begin with a UTF-8 BOM and end their lines with CRLF are read as without")
        func byteOrderMarkAndCRLF() throws {
            let d = try DaemonUnderTest(launch: false)
            try d.writeConfig("\u{FEFF}[timer]\r\nsuspend = continue\r\n")
            try d.start()
            #expect(try d.ctlStatus()["config_problems"]?.arrayValue?.isEmpty == true, "\(d.diagnostics)")
            let file = d.root + "/from-windows.jsonl"
            let lines = [
                Integrity.line("Work", "2025-05-01T09:00:00Z", "2025-05-01T09:25:00Z"),
                Integrity.line("Work", "2025-05-01T10:00:00Z", "2025-05-01T10:25:00Z"),
            ]
            try ("\u{FEFF}" + lines.joined(separator: "\r\n") + "\r\n").write(toFile: file, atomically: false, encoding: .utf8)
            let imported = try d.ctl("import", file)
            #expect(imported.exitCode == 0 && imported.stdout.hasPrefix("Imported 2 sessions"), "\(imported)")
        }

        @Test("a request line of spaces and tabs is blank: ignored, as docs/protocol.md says, the next line answered")
        func whitespaceOnlyLine() throws {
            let d = try DaemonUnderTest()
            let answer = try d.request(" \t  \r\n{\"command\":\"status\",\"id\":7}")
            #expect(answer.isOK && answer["id"]?.intValue == 7, "\(answer.serialized)")
        }
    }
}
