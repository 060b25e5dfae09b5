import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The findings of the integrity review (issue 11), each reproduced against the real daemon
/// through the protocol alone, so the same tests run against an older build
/// (`DILIGENCE_BIN_DIR=<old build> swift test --filter Integrity`) and fail there.
extension EndToEnd {
    @Suite("Integrity: no request, file or second instance can crash the daemon or corrupt a statistic")
    struct Integrity {
        /// `line` on `d`'s shared connection; the answer, or a failure naming what happened to the daemon.
        static func ask(_ d: DaemonUnderTest, _ line: String) throws -> JSON {
            do {
                return try d.request(line)
            } catch {
                let state = d.process?.poll().map { "the daemon ended: \($0)" } ?? "the daemon still runs"
                throw HarnessError("no answer to \(line) (\(state)): \(error)\n\(d.diagnostics)")
            }
        }

        @Test("finding 1: an offset far outside the dates kept is refused, naming the field; the daemon lives")
        func extremeOffsets() throws {
            let d = try DaemonUnderTest()
            // Past the protocol's range (±100 000), and inside it but outside the date window.
            let offsets = [
                "1099511627776", "-1099511627776", "2147483648", "-2147483649", "9223372036854775807",
                "-9223372036854775808", "1e308", "100000", "-100000",
            ]
            for offset in offsets {
                var lines = [
                    #"{"command":"week","offset":\#(offset)}"#, #"{"command":"plan_set","day":"monday","task":"Work","offset":\#(offset)}"#,
                ]
                for period in ["today", "week", "month", "year"] {
                    lines.append(#"{"command":"stats","period":"\#(period)","offset":\#(offset)}"#)
                }
                for line in lines {
                    let answer = try Self.ask(d, line)
                    #expect(answer.errorCode == "out_of_range", "\(line) → \(answer.serialized)")
                    // The message names the field: the offset, or for a plan the day it led to.
                    let message = answer["error"]?["message"]?.stringValue ?? ""
                    #expect(message.contains("\"offset\"") || message.contains("\"day\""), "\(line) → \(answer.serialized)")
                }
            }
            // A year before 1990, two years ahead: outside the window, refused the same way.
            for offset in [-37, -100, 2] {
                let answer = try Self.ask(d, #"{"command":"stats","period":"year","offset":\#(offset)}"#)
                #expect(answer.errorCode == "out_of_range", "year offset \(offset) → \(answer.serialized)")
            }
            #expect(d.process?.isRunning == true, "\(d.diagnostics)")
            #expect(try d.status()["state"]?.stringValue == "idle")
        }

        @Test("finding 4: a session in year 0001 neither stretches `stats all` back to it nor bloats the daemon")
        func ancientSessionDoesNotBloatReports() throws {
            let d = try DaemonUnderTest()
            // Written straight into the table, as older versions' import let it in.
            _ = try d.sqlite(
                "INSERT INTO sessions (task_id, start, end, planned_seconds, focused_seconds, pauses, outcome) "
                    + "VALUES (1, -62135596800, -62135595300, 1500, 1500, 0, 'completed')")
            let before = residentBytes(of: d.process?.pid)
            let connection = try d.connect()
            try connection.write(#"{"command":"stats","period":"all"}"# + "\n")
            guard let line = try connection.readLine() else { throw HarnessError("no answer to stats all\n\(d.diagnostics)") }
            let answer = try JSON.parse(line)
            #expect(answer.isOK, "\(answer.serialized.prefix(300))")
            #expect(answer.result?["from"]?.stringValue == "1990-01-01", "\(answer.serialized.prefix(300))")
            // One entry a day since 1990: well under 2 MB (it was 56 MB, 739 951 days).
            #expect(line.count < 2_000_000, "stats all answered \(line.count) bytes")
            #expect(answer.result?["completed"]?.intValue == 0, "a session before 1990 is not counted")
            let growth = residentBytes(of: d.process?.pid) - before
            #expect(growth < 40 * 1024 * 1024, "the daemon grew \(growth / 1024 / 1024) MiB answering stats all")
            // The streak's look-back stops at 1990 too, and today's report still works.
            #expect(try d.call("stats")["streak"]?["current"]?.intValue == 0)
        }

        /// A session line as `export --format jsonl` writes it.
        static func line(
            _ task: String, _ start: String, _ end: String, planned: Int = 1500, focused: Int = 1500, pauses: Int = 0,
            outcome: String = "completed"
        ) -> String {
            #"{"task":"\#(task)","start":"\#(start)","end":"\#(end)","planned_seconds":\#(planned),"focused_seconds":\#(focused),"pauses":\#(pauses),"outcome":"\#(outcome)"}"#
        }

        static func importing(_ d: DaemonUnderTest, _ lines: [String]) throws -> JSON {
            try d.send(Request(command: "import", arguments: [("content", .string(lines.joined(separator: "\n") + "\n"))]))
        }

        @Test("finding 3: import applies the session rules, all or nothing, names each refused line, and a second import adds nothing")
        func importAppliesTheSessionRules() throws {
            let d = try DaemonUnderTest()
            let good = Self.line("Work", "2025-05-01T09:00:00Z", "2025-05-01T09:25:00Z")
            let bad: [(String, String)] = [
                (Self.line("Work", "2025-05-01T10:00:00Z", "2025-05-01T10:25:00Z", focused: 86_400), "focused time"),
                (Self.line("Study", "2025-05-01T09:10:00Z", "2025-05-01T09:35:00Z"), "overlaps"),
                (Self.line("Work", "2025-05-02T09:00:00Z", "2025-05-04T09:00:00Z", planned: 172_800, focused: 172_800), "lasts 48h"),
                (Self.line("Work", "2099-01-01T09:00:00Z", "2099-01-01T09:25:00Z"), "more than a day from now"),
                (Self.line("Work", "0001-01-01T09:00:00Z", "0001-01-01T09:25:00Z"), "before 1990-01-01"),
                (Self.line("Work", "2025-05-05T09:00:00Z", "2025-05-05T09:00:00Z", planned: 1500, focused: 0), "lasts no time"),
                (
                    Self.line("Work", "2025-05-06T09:00:00Z", "2025-05-06T09:25:00Z").replacing("}", with: #","away_seconds":-60}"#),
                    "time away"
                ),
                (
                    Self.line("Work", "2025-05-07T09:00:00Z", "2025-05-07T09:25:00Z").replacing("}", with: #","away_seconds":90000}"#),
                    "time away"
                ),
            ]
            for (line, reason) in bad {
                let answer = try Self.importing(d, [good, line])
                #expect(answer.errorCode == "invalid_import", "\(line) → \(answer.serialized)")
                let message = answer["error"]?["message"]?.stringValue ?? ""
                #expect(message.contains("line 2: ") && message.contains(reason), "\(line) → \(message)")
                #expect(try d.call("history")["sessions"]?.arrayValue?.isEmpty == true, "nothing imported after \(line)")
            }
            // Every refused line of a file is named, not only the first.
            let many = try Self.importing(d, [good] + bad.map(\.0))
            let message = many["error"]?["message"]?.stringValue ?? ""
            for n in 2...(bad.count + 1) { #expect(message.contains("line \(n): "), "line \(n) in \(message)") }

            // An identical line is the same session: imported once, and the file twice adds nothing.
            let first = try Self.importing(d, [good, good])
            #expect(first.result?["imported"]?.intValue == 1 && first.result?["skipped"]?.intValue == 1, "\(first.serialized)")
            let again = try Self.importing(d, [good, good])
            #expect(again.result?["imported"]?.intValue == 0 && again.result?["skipped"]?.intValue == 2, "\(again.serialized)")
            #expect(try d.call("history")["sessions"]?.arrayValue?.count == 1)
            #expect(try d.call("stats", [("period", .string("all"))])["focused_seconds"]?.intValue == 1500)

            // `history add` is the same door: no year 0001, no 2099.
            for (start, end) in [("0001-01-01 09:00", "0001-01-01 09:25"), ("2099-01-01 09:00", "2099-01-01 09:25")] {
                let added = try d.send(
                    Request(
                        command: "history_add", arguments: [("task", .string("Work")), ("start", .string(start)), ("end", .string(end))]))
                #expect(added.errorCode == "invalid_session", "\(start) → \(added.serialized)")
            }
        }

        /// A spill file as the first format wrote it: sessions naming their task by id.
        static func oldSpill(_ sessions: [(taskID: Int, taskName: String, start: Double)]) -> String {
            "["
                + sessions.map { s in
                    #"{"id":0,"taskID":\#(s.taskID),"taskName":"\#(s.taskName)","start":\#(s.start),"end":\#(s.start + 1500),"plannedSeconds":1500,"focusedSeconds":1500,"pauses":0,"outcome":"completed"}"#
                }.joined(separator: ",") + "]"
        }

        @Test(
            "finding 2: spilled sessions go to their own task by name, in their own database; a bad one blocks nothing; no other write is needed"
        )
        func spilledSessionsLandWhereTheyBelong() throws {
            let d = try DaemonUnderTest()
            try d.addTask("Reading") // id 8: the id a spilled "Ghost" session carries
            try d.restart()
            d.kill()
            let spill = d.runtimeDir + "/diligence/unsaved-sessions.json"
            let may1 = 1_746_090_000.0 // 2025-05-01T09:00:00Z
            // Ghost (id 8) is gone, so its session must not become Reading's; the second names
            // its task by an id no task has, and must not be held up by the first.
            try Self.oldSpill([(8, "Ghost", may1), (99, "Work", may1 + 3600)]).write(toFile: spill, atomically: true, encoding: .utf8)
            try d.start()
            let sessions = try d.call("history")["sessions"]?.arrayValue ?? []
            #expect(sessions.map { $0["task"]?.stringValue ?? "" } == ["Work"], "\(sessions.map(\.serialized))")
            #expect(!FileManager.default.fileExists(atPath: spill), "the spill file is emptied once its sessions are in")
            let setAside = readTextFile(d.databasePath + ".set-aside.jsonl")
            #expect(setAside.contains("\"task\":\"Ghost\"") && setAside.contains("No task named"), "set aside: \(setAside)")

            // An entry of another database stays in the file for it, untouched.
            d.kill()
            let foreign =
                #"{"format":2,"entries":[{"database":"0123456789abcdef0123456789abcdef","session":{"task":"Work","start":"2025-05-02T09:00:00Z","end":"2025-05-02T09:25:00Z","planned_seconds":1500,"focused_seconds":1500,"pauses":0,"outcome":"completed"}}]}"#
            try foreign.write(toFile: spill, atomically: true, encoding: .utf8)
            try d.start()
            #expect(try d.call("history")["sessions"]?.arrayValue?.count == 1)
            #expect(readTextFile(spill).contains("0123456789abcdef0123456789abcdef"), "another database's entry must stay in \(spill)")

            // This database's entry, with the database locked by another process at the start:
            // written by the retry timer once the lock goes, with no other write coming along.
            d.kill()
            let identity = try d.sqlite("SELECT value FROM database_info WHERE name = 'uuid'").first?.first ?? ""
            let mine = foreign.replacing("0123456789abcdef0123456789abcdef", with: identity).replacing("2025-05-02", with: "2025-05-03")
            try mine.write(toFile: spill, atomically: true, encoding: .utf8)
            let holder = try d.holdWriteLock(for: 3)
            defer { holder.killAndReap() }
            try d.start()
            let deadline = monotonicNow() + 10
            var count = 0
            while monotonicNow() < deadline {
                count = try d.call("history")["sessions"]?.arrayValue?.count ?? 0
                if count == 2 { break }
                sleepFor(0.2)
            }
            #expect(count == 2, "the spilled session was not written after the lock went\n\(d.diagnostics)")
        }

        @Test("finding 7: another program's SQLite file is refused at start and left byte for byte as it was")
        func foreignDatabaseIsLeftAlone() throws {
            let d = try DaemonUnderTest(launch: false)
            let other = d.root + "/other.db"
            _ = try d.sqliteRun(
                other, "CREATE TABLE photos (id INTEGER PRIMARY KEY, path TEXT); INSERT INTO photos (path) VALUES ('a.jpg');")
            let before = FileManager.default.contents(atPath: other)
            let daemon = try d.spawnDaemon(arguments: ["--database", other])
            let status = daemon.wait(timeout: 10)
            #expect(status == .exited(1), "\(status.map { "\($0)" } ?? "still running")\n\(d.diagnostics)")
            #expect(d.stderr.contains("foreign_database") || d.stderr.contains("another program"), "\(d.diagnostics)")
            #expect(d.stderr.contains(other), "the message names the file: \(d.diagnostics)")
            #expect(FileManager.default.contents(atPath: other) == before, "the file was modified")
            #expect(!FileManager.default.fileExists(atPath: other + "-wal"), "a WAL file was made beside it")
            #expect(try d.sqliteRun(other, "SELECT name FROM sqlite_master ORDER BY name;") == [["photos"]])
        }

        @Test(
            "finding 8: a read-only data directory holding -wal and -shm stops the start; nothing claims a save that did not happen",
            .enabled(if: geteuid() == 0, "bind mounts need root"))
        func readOnlyDataDirectoryStopsTheStart() throws {
            let d = try DaemonUnderTest()
            try d.call("start", [("task", .string("Work"))])
            d.kill() // no clean close: the -wal and -shm files stay
            let data = d.dataHome + "/diligence"
            #expect(
                FileManager.default.fileExists(atPath: d.databasePath + "-wal")
                    && FileManager.default.fileExists(atPath: d.databasePath + "-shm"))
            #expect(mount(data, data, nil, UInt(MS_BIND), nil) == 0)
            defer { umount2(data, Int32(MNT_DETACH)) }
            #expect(mount(nil, data, nil, UInt(MS_REMOUNT | MS_BIND | MS_RDONLY), nil) == 0)
            let daemon = try d.spawnDaemon()
            let status = daemon.wait(timeout: 10)
            if status == nil {
                daemon.signal(SIGTERM)
                _ = daemon.wait(timeout: 10)
            }
            #expect(status == .exited(1), "the daemon must not start on a read-only database\n\(d.diagnostics)")
            let log = readTextFile(d.stderrPaths.last ?? "")
            #expect(log.contains("storage_error") || log.contains("read-only"), "\(log)")
            #expect(log.contains(d.databasePath), "the message names the database: \(log)")
            #expect(!log.contains("timer state saved"), "a save that did not happen is claimed: \(log)")
        }

        @Test("finding 5: a second daemon on the database stops at once naming it and the first's socket; the client points there")
        func oneDaemonPerDatabase() throws {
            let d = try DaemonUnderTest()
            try d.call("start", [("task", .string("Work"))])
            // A shell without XDG_RUNTIME_DIR: its client looks in /tmp (here: a path of its own).
            var shell = d.environment
            shell["XDG_RUNTIME_DIR"] = nil
            shell["DILIGENCE_SOCKET"] = d.root + "/elsewhere.sock"
            let lost = try d.ctl(arguments: ["status"], socketFlag: false, environment: shell)
            #expect(lost.exitCode == 3, "\(lost)")
            #expect(
                lost.stderr.contains(d.socketPath) && lost.stderr.contains("is running"),
                "the hint names the running daemon's socket: \(lost)")
            #expect(!lost.stderr.contains("Start it with"), "no advice to start a second daemon: \(lost)")

            // Started anyway, on another socket: it stops at once and says why.
            let second = try d.spawnDaemon(arguments: ["--socket", d.root + "/elsewhere.sock"])
            let status = second.wait(timeout: 10)
            if status == nil { second.killAndReap() }
            #expect(status == .exited(1), "a second daemon on the same database must not run\n\(d.diagnostics)")
            let log = readTextFile(d.stderrPaths.last ?? "")
            #expect(
                log.contains(d.databasePath) && log.contains(d.socketPath),
                "the message names the database and the running daemon's socket: \(log)")
            #expect(!FileManager.default.fileExists(atPath: d.root + "/elsewhere.sock"))
            // The first runs on alone.
            #expect(try d.status()["state"]?.stringValue == "running")
        }

        @Test("finding 6: a daemon stopped after another took over its socket path leaves that socket alone")
        func theSocketIsRemovedOnlyWhileItIsOurs() throws {
            let d = try DaemonUnderTest()
            // Another listener takes the path over (as systemd's socket unit does).
            unlink(d.socketPath)
            let takeover = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            defer { close(takeover) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(d.socketPath.utf8)) }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(takeover, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            #expect(bound == 0 && listen(takeover, 4) == 0)
            d.signal(SIGTERM)
            #expect(try d.waitExit() == .exited(0))
            #expect(fileStatus(d.socketPath) != nil, "the daemon removed a socket that was no longer its own")
            #expect((try? ControlConnection(path: d.socketPath)) != nil, "the new listener is still reachable")
        }

        @Test(
            "finding 9: while another process holds the database, reads answer at once; the waiting write answers database_locked, or succeeds once the lock goes"
        )
        func readsDoNotWaitBehindALockedWrite() throws {
            let d = try DaemonUnderTest()
            for (held, expected) in [(3.0, "database_locked"), (1.0, "ok")] {
                let holder = try d.holdWriteLock(for: held)
                defer { holder.killAndReap() }
                let writer = try d.connect()
                try writer.write(#"{"command":"task_add","name":"Locked \#(Int(held))"}"# + "\n")
                // Meanwhile, on other connections: status, stats and watch answer at once
                // (they waited 1.8 s behind the write).
                let reader = try d.connect()
                var slowest = 0.0
                for line in [#"{"command":"status"}"#, #"{"command":"stats"}"#, #"{"command":"week"}"#, #"{"command":"status"}"#] {
                    let t0 = monotonicNow()
                    let answer = try DaemonUnderTest.roundTrip(reader, line, diagnostics: { d.diagnostics })
                    slowest = max(slowest, monotonicNow() - t0)
                    #expect(answer.isOK, "\(line) → \(answer.serialized)")
                }
                let watcher = try d.connect()
                let t0 = monotonicNow()
                let ack = try DaemonUnderTest.roundTrip(watcher, #"{"command":"watch"}"#, diagnostics: { d.diagnostics })
                slowest = max(slowest, monotonicNow() - t0)
                #expect(ack.isOK)
                #expect(slowest < 0.5, "a read waited \(slowest) s behind the locked write (lock held \(held) s)")
                let box = UncheckedSendable(writer)
                let answer = try withTimeout(10, "the waiting write's answer") { try box.value.readJSONLine() }
                if expected == "ok" {
                    #expect(answer.isOK, "a write whose lock goes within 2 s succeeds: \(answer.serialized)")
                } else {
                    #expect(answer.errorCode == "database_locked", "\(answer.serialized)")
                }
                _ = holder.wait(timeout: 10)
            }
            let names = try d.call("task_list")["tasks"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
            #expect(names.contains("Locked 1") && !names.contains("Locked 3"), "\(names)")
        }

        @Test("finding 11: with 300 idle connections open, 1 000 clients at once are all answered and the status bar stays connected")
        func idleConnectionsLockNobodyOut() throws {
            // This process holds 1 300 sockets: its soft descriptor limit may be 1 024.
            var limit = rlimit()
            getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            if limit.rlim_cur < 4096 && limit.rlim_max >= 4096 {
                limit.rlim_cur = 4096
                setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            }
            let d = try DaemonUnderTest()
            let bar = try d.watch()
            let idle = try (0..<300).map { _ in try d.connect() }
            let clients = try (0..<1000).map { _ in try d.connect() }
            for (i, c) in clients.enumerated() { try c.write(#"{"command":"status","id":\#(i)}"# + "\n") }
            let box = UncheckedSendable(clients)
            let answered = try withTimeout(60, "1 000 answers") { () -> Int in
                var ok = 0
                for (i, c) in box.value.enumerated() {
                    let answer = try c.readJSONLine()
                    if answer.isOK && answer["id"]?.intValue == Int64(i) { ok += 1 }
                }
                return ok
            }
            #expect(answered == 1000, "\(answered) of 1 000 clients answered\n\(d.diagnostics)")
            // The status bar still hears the daemon.
            let cursor = bar.events.count
            try d.call("start", [("task", .string("Work"))])
            #expect(bar.waitFor(after: cursor, timeout: 5) { $0.name == "phase_started" } != nil, "the watcher was dropped")
            withExtendedLifetime(idle) {}
        }

        @Test(
            "finding 10: \\u0000 is accepted; import errors for a raw NUL or non-UTF-8 line name it; out-of-range numbers name their field")
        func jsonEdges() throws {
            let d = try DaemonUnderTest()
            let escaped = try d.request(#"{"command":"task_show","task":"Work\u0000"}"#)
            #expect(escaped.errorCode == "unknown_task", "\\u0000 is JSON like any escape: \(escaped.serialized)")
            for number in ["1e20", "99999999999999999999"] {
                let answer = try d.request(#"{"command":"week","offset":\#(number)}"#)
                let message = answer["error"]?["message"]?.stringValue ?? ""
                #expect(
                    answer.errorCode == "out_of_range" && message.contains("\"offset\"") && message.contains("-100000"),
                    "\(number) → \(answer.serialized)")
            }
            let good = Self.line("Work", "2025-05-01T09:00:00Z", "2025-05-01T09:25:00Z")
            let file = d.root + "/import.jsonl"
            // A raw NUL byte on line 2.
            var bytes = Array((good + "\n").utf8) + Array("{\"task\":\"Work\"".utf8) + [0] + Array("}\n".utf8)
            #expect(FileManager.default.createFile(atPath: file, contents: Data(bytes)))
            let nul = try d.ctl("import", file)
            #expect(nul.exitCode == 1 && nul.stderr.contains("line 2"), "\(nul)")
            // A line that is not UTF-8 (line 3).
            bytes = Array((good + "\n" + good + "\n").utf8) + [0xFF, 0xFE, 0x0A]
            #expect(FileManager.default.createFile(atPath: file, contents: Data(bytes)))
            let latin = try d.ctl("import", file)
            #expect(latin.exitCode != 0 && latin.stderr.contains("line 3"), "\(latin)")
            #expect(try d.call("history")["sessions"]?.arrayValue?.isEmpty == true)
        }

        @Test("finding 12: invisible and look-alike task names are refused or trimmed; names are stored NFC; old odd names keep working")
        func taskNamesShowWhatTheyAre() throws {
            let d = try DaemonUnderTest()
            for name in [#"Work\u200b"#, #"\u202eWork"#, #"Wo\u200drk"#, #"Work\u2066"#, #"Work\ue000"#] {
                let answer = try d.request(#"{"command":"task_add","name":"\#(name)"}"#)
                #expect(answer.errorCode == "invalid_name", "\(name) → \(answer.serialized)")
                #expect(
                    answer["error"]?["message"]?.stringValue?.contains("U+") == true,
                    "the message names the character: \(answer.serialized)")
            }
            // A trailing no-break space is trimmed: "Work" exists already.
            #expect(try d.request(#"{"command":"task_add","name":"Work\u00a0"}"#).errorCode == "duplicate_name")
            let added = try d.request(#"{"command":"task_add","name":" Cafe\u0301\u00a0"}"#)
            #expect(
                added.result?["name"]?.stringValue.map { Array($0.unicodeScalars) } == Array("Caf\u{E9}".unicodeScalars),
                "\(added.serialized)")
            // A name stored before these rules is still found, edited, started.
            _ = try d.sqlite("UPDATE tasks SET name = 'Old' || char(8203) WHERE name = 'Errands'")
            let old = "Old\u{200B}"
            #expect(try d.send(Request(command: "task_edit", arguments: [("task", .string(old)), ("goal", .int(3))])).isOK)
            #expect(try d.send(Request(command: "start", arguments: [("task", .string(old))])).isOK)
            #expect(
                try d.send(Request(command: "task_edit", arguments: [("task", .string(old)), ("new_name", .string("New\u{200B}"))]))
                    .errorCode == "invalid_name")
        }
    }
}
