import DiligenceJSON
import DiligenceProtocol
import DiligenceSync
import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// The daemon's side of a sync folder (docs/sync.md): `sync enable DIR` gives the device its
// journal, `DIR/<device id>.jsonl`; the first enable writes the history there, and from then on
// every change the daemon makes is one line of it, read back here with the merge side's own
// reader (`JournalReader`).

extension EndToEnd {
    @Suite("Sync: the daemon's journal")
    struct SyncJournal {
        /// The journal's entries past `cursor`, and where they end (the test fails on a line the
        /// reader cannot take).
        static func read(_ path: String, device: String, from cursor: inout JournalCursor) throws -> [JournalEntry] {
            let batch = try JournalReader.read(path: path, device: device, from: cursor)
            #expect(batch.problems.isEmpty, "\(batch.problems)")
            cursor = batch.cursor
            return batch.entries.map(\.entry)
        }

        /// The change names of `entries`, and the ids (or days) they name, in order.
        static func summary(_ entries: [JournalEntry]) -> [String] {
            entries.map { entry in
                switch entry.change {
                case .sessionRecorded(let s), .sessionEdited(let s): "\(entry.change.name) \(s.id) task=\(s.task)"
                case .sessionRemoved(let id), .taskRemoved(let id): "\(entry.change.name) \(id)"
                case .taskAdded(let t), .taskEdited(let t), .taskArchived(let t):
                    "\(entry.change.name) \(t.id) \(t.config.name)\(t.archived ? " (archived)" : "")"
                case .planSet(let day, let task): "plan_set \(day) \(task)"
                case .planCleared(let day): "plan_cleared \(day)"
                case .deviceNamed(let name): "device_named \(name)"
                }
            }
        }

        @Test("sync enable writes the history as the journal's start, then every change once, in order; sync disable stops it")
        func everyChangeOnce() throws {
            let d = try DaemonUnderTest()
            let folder = d.root + "/Sync/diligence" // not there yet: enable makes it
            // History from before sync was enabled: a session and a plan.
            let early = try d.call(
                "history_add", [("task", .string("Study")), ("start", .string("2026-11-30 09:00")), ("end", .string("2026-11-30 09:25"))])
            try d.call("plan_set", [("day", .string("2026-11-30")), ("task", .string("Study"))])
            let tasks = try #require(try d.call("task_list")["tasks"]?.arrayValue)
            let uuid = { (name: String) in tasks.first { $0["name"]?.stringValue == name }?["uuid"]?.stringValue ?? "?" }

            let enable = try d.ctl("sync", "enable", folder, "--name", "laptop", "--json")
            #expect(enable.exitCode == 0, "\(enable)\n\(d.diagnostics)")
            let status = try d.ctl("sync", "status", "--json")
            #expect(status.exitCode == 0, "\(status)")
            let state = try status.json()
            let device = try #require(state["device"]?["id"]?.stringValue, "sync status names the device: \(state.serialized)")
            #expect(SyncID.parse(device) == device, "a UUID: \(device)")
            #expect(state["device"]?["name"]?.stringValue == "laptop", "\(state.serialized)")
            #expect(state["enabled"]?.boolValue == true && state["directory"]?.stringValue == folder, "\(state.serialized)")
            let journal = "\(folder)/\(device).jsonl"
            #expect(state["journal"]?.stringValue == journal, "\(state.serialized)")

            var cursor = JournalCursor.start
            let start = try Self.read(journal, device: device, from: &cursor)
            let startLines = Self.summary(start)
            #expect(
                startLines.filter { $0.hasPrefix("task_added") }.count == 7 && startLines.contains("task_added \(uuid("Study")) Study"),
                "the seven tasks: \(startLines)")
            let earlyID = early["uuid"]?.stringValue ?? "?"
            #expect(startLines.contains("session_recorded \(earlyID) task=\(uuid("Study"))"), "\(startLines)")
            #expect(startLines.contains("plan_set 2026-11-30 \(uuid("Study"))"), "\(startLines)")
            #expect(startLines.first == "device_named laptop", "the journal starts with the device's name: \(startLines)")
            #expect(start.count == 10, "nothing else, nothing twice: \(startLines)")

            // Every kind of change, one line each, once the daemon answered the next request.
            func changes(_ body: () throws -> Void) throws -> [String] {
                try body()
                _ = try d.status()
                return Self.summary(try Self.read(journal, device: device, from: &cursor))
            }
            let added = try d.addTask("Reading")
            let reading = added["uuid"]?.stringValue ?? "?"
            #expect(try changes {} == ["task_added \(reading) Reading"])
            #expect(
                try changes { try d.call("task_edit", [("task", .string("Reading")), ("new_name", .string("Books"))]) }
                    == ["task_edited \(reading) Books"])
            #expect(
                try changes { try d.call("task_archive", [("task", .string("Books"))]) } == ["task_archived \(reading) Books (archived)"])
            #expect(try changes { try d.call("task_unarchive", [("task", .string("Books"))]) } == ["task_archived \(reading) Books"])
            let manual = try d.call(
                "history_add", [("task", .string("Books")), ("start", .string("2026-11-30 10:00")), ("end", .string("2026-11-30 10:30"))])
            let manualID = manual["uuid"]?.stringValue ?? "?"
            #expect(try changes {} == ["session_recorded \(manualID) task=\(reading)"])
            let manualNumber = manual["id"] ?? .null
            #expect(
                try changes { try d.call("history_edit", [("id", manualNumber), ("task", .string("Work"))]) }
                    == ["session_edited \(manualID) task=\(uuid("Work"))"])
            #expect(try changes { try d.call("history_remove", [("id", manualNumber)]) } == ["session_removed \(manualID)"])
            #expect(
                try changes { try d.call("plan_set", [("day", .string("2026-12-02")), ("task", .string("Books"))]) }
                    == ["plan_set 2026-12-02 \(reading)"])
            #expect(try changes { try d.call("plan_clear", [("day", .string("2026-12-02"))]) } == ["plan_cleared 2026-12-02"])
            #expect(
                try changes { try d.call("task_remove", [("task", .string("Books")), ("confirm", .bool(true))]) }
                    == ["task_removed \(reading)"])
            // A new name is one line; enabling again without a name keeps it and writes nothing.
            func enableAgain(_ name: String...) throws {
                let run = try d.ctl(arguments: ["sync", "enable", folder] + name)
                guard run.exitCode == 0 else { throw HarnessError("sync enable: \(run)") }
            }
            #expect(try changes { try enableAgain("--name", " Desk ") } == ["device_named Desk"])
            #expect(try changes { try enableAgain() } == [])
            #expect(try d.call("sync_status")["device"]?["name"] == .string("Desk"))

            // A session of the timer: a 1-second work phase that completes.
            try d.addTask("Quick", [("work", .int(1))])
            try d.call("start", [("task", .string("Quick"))])
            sleepFor(2)
            let timerLines = try changes {}
            let recorded = try d.call("history", [("task", .string("Quick"))])["sessions"]?.arrayValue ?? []
            #expect(recorded.count == 1, "\(recorded)")
            let quickID = recorded.first?["uuid"]?.stringValue ?? "?"
            #expect(timerLines.filter { $0.hasPrefix("session_recorded \(quickID) ") }.count == 1, "\(timerLines)")
            #expect(timerLines.filter { $0.hasPrefix("session") }.count == 1, "\(timerLines)")
            try d.call("stop")

            // Every line is this device's, stamped later than the one before.
            var whole = JournalCursor.start
            let entries = try Self.read(journal, device: device, from: &whole)
            #expect(entries.allSatisfy { $0.device == device })
            #expect(zip(entries, entries.dropFirst()).allSatisfy { $0.hlc < $1.hlc }, "clock readings grow")

            let disable = try d.ctl("sync", "disable")
            #expect(disable.exitCode == 0, "\(disable)")
            #expect(try changes { try d.addTask("Later") } == [], "nothing is written once sync is off")
            #expect(try d.ctl("sync", "status", "--json").json()["enabled"]?.boolValue == false)
        }

        /// The daemon in a UTS namespace of its own whose host name the test sets (`unshare
        /// --uts` at start, `nsenter --uts` while it runs): the journal says each new name once.
        @Test(
            "no name given: the device is the host's, and a renamed host's new name is written once, after the next change or at start",
            .enabled(if: geteuid() == 0, "a host name of its own needs root (a UTS namespace)"))
        func hostRenamed() throws {
            let d = try DaemonUnderTest(launch: false)
            let unshare = try requireProgram("util-linux", "/usr/bin/unshare", "/bin/unshare")
            let nsenter = try requireProgram("util-linux", "/usr/bin/nsenter")
            func launch(asHost name: String) { d.launcher = [unshare, "--uts", "/bin/sh", "-c", "hostname \(name) && exec \"$0\" \"$@\""] }
            launch(asHost: "desk-one")
            try d.start()
            let folder = d.root + "/sync"
            #expect(try d.ctl("sync", "enable", folder).exitCode == 0)
            let device = try #require(try d.call("sync_status")["device"]?["id"]?.stringValue)
            var cursor = JournalCursor.start
            func namesWritten() throws -> [String] {
                _ = try d.status()
                return Self.summary(try Self.read("\(folder)/\(device).jsonl", device: device, from: &cursor)).filter {
                    $0.hasPrefix("device_named")
                }
            }
            #expect(try namesWritten() == ["device_named desk-one"])

            let pid = try #require(d.process?.pid)
            let rename = try runProgram(
                [nsenter, "--uts", "-t", String(pid), "hostname", "desk-two"], environment: ["PATH": "/usr/bin:/bin"], directory: d.root)
            #expect(rename.succeeded, "\(rename)")
            try d.addTask("Reading")
            #expect(try namesWritten() == ["device_named desk-two"], "renamed while it runs: the next change writes the name")
            #expect(try d.call("sync_status")["device"]?["name"] == .string("desk-two"))
            try d.addTask("Piano")
            #expect(try namesWritten() == [], "once")

            launch(asHost: "desk-three")
            try d.restart()
            #expect(try namesWritten() == ["device_named desk-three"], "renamed while stopped: written at start")
            #expect(try d.ctl("sync", "enable", folder, "--name", "fixed").exitCode == 0)
            launch(asHost: "desk-four")
            try d.restart()
            try d.addTask("Chess")
            #expect(try namesWritten() == ["device_named fixed"], "a name given no longer follows the host")
        }

        @Test("a journal that cannot be written loses no change: the database has it, and the next change writes both")
        func writeFailureKeepsTheChange() throws {
            let d = try DaemonUnderTest()
            let folder = d.root + "/sync"
            #expect(try d.ctl("sync", "enable", folder).exitCode == 0)
            let device = try #require(try d.ctl("sync", "status", "--json").json()["device"]?["id"]?.stringValue)
            let journal = "\(folder)/\(device).jsonl"
            var cursor = JournalCursor.start
            _ = try Self.read(journal, device: device, from: &cursor)
            // The journal replaced (at once: the daemon watches it, and a journal gone it writes
            // again) by a link into a folder that is not there: every write of it fails.
            try FileManager.default.copyItem(atPath: journal, toPath: journal + ".kept")
            symlink(d.root + "/no-such-folder/journal", journal + ".link")
            rename(journal + ".link", journal)
            let first = try d.addTask("First")
            #expect(first["name"]?.stringValue == "First", "the change is made: \(first.serialized)")
            _ = try d.status()
            #expect(try d.ctl("task", "show", "First").exitCode == 0)
            rename(journal + ".kept", journal)
            let second = try d.addTask("Second")
            _ = try d.status()
            let lines = Self.summary(try Self.read(journal, device: device, from: &cursor))
            #expect(
                lines == [
                    "task_added \(first["uuid"]?.stringValue ?? "?") First", "task_added \(second["uuid"]?.stringValue ?? "?") Second",
                ],
                "the change the journal missed comes first: \(lines)\n\(d.diagnostics)")
            let log = d.diagnostics
            #expect(log.components(separatedBy: "could not be written").count - 1 == 1, "logged once:\n\(log)")
        }

        @Test("[sync] directory in the config file: the journal is written at start; enable and disable refuse while it is set")
        func configuredDirectory() throws {
            let d = try DaemonUnderTest(launch: false)
            let folder = d.root + "/configured"
            mkdir(d.configHome + "/diligence", 0o700)
            try "[sync]\ndirectory = \(folder)\n".write(
                toFile: d.configHome + "/diligence/diligenced.conf", atomically: true, encoding: .utf8)
            try d.start()
            let state = try d.ctl("sync", "status", "--json").json()
            #expect(state["enabled"]?.boolValue == true && state["directory"]?.stringValue == folder, "\(state.serialized)")
            #expect(state["configured"]?.boolValue == true, "\(state.serialized)")
            let device = try #require(state["device"]?["id"]?.stringValue)
            var cursor = JournalCursor.start
            #expect(try Self.read("\(folder)/\(device).jsonl", device: device, from: &cursor).count == 8, "the name and the seven tasks")
            let enable = try d.ctl("sync", "enable", d.root + "/other")
            #expect(enable.exitCode == 1 && enable.stderr.contains("[sync] directory"), "\(enable)")
            let disable = try d.ctl("sync", "disable")
            #expect(disable.exitCode == 1 && disable.stderr.contains("[sync] directory"), "\(disable)")
            // The way out of a shared device id (SyncOwnJournalTests) is open in the configured folder only.
            let elsewhere = try d.ctl("sync", "enable", d.root + "/other", "--new-device")
            #expect(elsewhere.exitCode == 1 && elsewhere.stderr.contains("[sync] directory"), "\(elsewhere)")
            let renewed = try d.ctl("sync", "enable", folder, "--new-device", "--json")
            #expect(renewed.exitCode == 0, "\(renewed)\n\(d.diagnostics)")
            let after = try d.call("sync_status")
            let newID = try #require(after["device"]?["id"]?.stringValue)
            #expect(
                newID != device && after["configured"] == .bool(true) && after["directory"]?.stringValue == folder, "\(after.serialized)")
            cursor = .start
            #expect(try Self.read("\(folder)/\(newID).jsonl", device: newID, from: &cursor).count == 8, "the new device's journal")

            // A relative directory in the file is refused where it enters.
            try "[sync]\ndirectory = relative/dir\n".write(
                toFile: d.configHome + "/diligence/diligenced.conf", atomically: true, encoding: .utf8)
            let reload = try d.ctl("reload")
            #expect(reload.exitCode == 1 && reload.stderr.contains("directory"), "\(reload)")
        }

        @Test(
            "[sync] name in the config file names the device: the journal says it, a reload writes a new one, sync enable --name is refused"
        )
        func configuredName() throws {
            let d = try DaemonUnderTest(launch: false)
            let folder = d.root + "/sync"
            let file = d.configHome + "/diligence/diligenced.conf"
            mkdir(d.configHome + "/diligence", 0o700)
            try "[sync]\nname = Study room\n".write(toFile: file, atomically: true, encoding: .utf8)
            try d.start()
            let refused = try d.ctl("sync", "enable", folder, "--name", "other")
            #expect(refused.exitCode == 1 && refused.stderr.contains("[sync] name"), "\(refused)")
            #expect(try d.ctl("sync", "enable", folder).exitCode == 0)
            let state = try d.call("sync_status")
            #expect(state["device"]?["name"] == .string("Study room"), "\(state.serialized)")
            let device = try #require(state["device"]?["id"]?.stringValue)
            var cursor = JournalCursor.start
            func read() throws -> [String] {
                _ = try d.status()
                return Self.summary(try Self.read("\(folder)/\(device).jsonl", device: device, from: &cursor))
            }
            #expect(try read().first == "device_named Study room")

            try "[sync]\nname = Office\n".write(toFile: file, atomically: true, encoding: .utf8)
            #expect(try d.ctl("reload").exitCode == 0)
            #expect(try read() == ["device_named Office"], "the reloaded name is written once")
            // A name out of the rules is refused where it enters; the name in force stays.
            try "[sync]\nname = zero\u{200B}width\n".write(toFile: file, atomically: true, encoding: .utf8)
            let reload = try d.ctl("reload")
            #expect(reload.exitCode == 1 && reload.stderr.contains("device name"), "\(reload)")
            #expect(try d.call("sync_status")["device"]?["name"] == .string("Office"))
            #expect(try read() == [])
        }

        @Test(
            "sync enable checks its directory and name: relative, a file, not writable, a name out of the rules are refused with the reason"
        )
        func enableChecksTheDirectory() throws {
            let d = try DaemonUnderTest()
            let answer = try d.send(Request(command: "sync_enable", arguments: [("directory", .string("relative/dir"))]))
            #expect(answer.errorCode == "invalid_directory", "\(answer.serialized)")
            let file = d.root + "/a-file"
            #expect(FileManager.default.createFile(atPath: file, contents: Data()))
            let onFile = try d.send(Request(command: "sync_enable", arguments: [("directory", .string(file))]))
            #expect(onFile.errorCode == "invalid_directory", "\(onFile.serialized)")
            #expect(try d.ctl("sync", "status", "--json").json()["enabled"]?.boolValue == false, "nothing enabled")
            // A name a person could not tell apart or type back (the task-name rules) is refused, and enables nothing.
            for name in ["", "   ", "tab\there", "zero\u{200B}width", String(repeating: "n", count: 65)] {
                let refused = try d.ctl("sync", "enable", d.root + "/named", "--name", name)
                #expect(refused.exitCode == 2 && refused.stderr.contains("device name"), "\(name.debugDescription): \(refused)")
            }
            #expect(try d.ctl("sync", "status", "--json").json()["enabled"]?.boolValue == false, "nothing enabled")
            #expect(access(d.root + "/named", F_OK) != 0, "no folder made")
            let tilde = try d.ctl("sync", "enable", "~/Sync/diligence")
            #expect(tilde.exitCode == 0, "\(tilde)")
            #expect(
                try d.ctl("sync", "status", "--json").json()["directory"]?.stringValue == d.home + "/Sync/diligence",
                "~ is the home directory")
        }

        @Test("sync enable takes a folder reached through a symbolic link, kept as resolved; a FIFO or device is refused")
        func enableResolvesALinkToAFolder() throws {
            let d = try DaemonUnderTest()
            let data = d.root + "/data/Sync"
            try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
            #expect(symlink(data, d.root + "/Sync") == 0)
            let real = try #require(
                realpath(data, nil).map { pointer in
                    defer { free(pointer) }
                    return String(cString: pointer)
                })
            // A folder not made yet under a linked one (~/Sync -> /data/Sync), and the link itself.
            let below = try d.ctl("sync", "enable", d.root + "/Sync/diligence")
            #expect(below.exitCode == 0, "\(below)")
            #expect(try d.ctl("sync", "status", "--json").json()["directory"]?.stringValue == real + "/diligence", "resolved once")
            #expect(access(real + "/diligence/" + (try d.call("sync_status")["device"]?["id"]?.stringValue ?? "?") + ".jsonl", F_OK) == 0)
            let link = try d.ctl("sync", "enable", d.root + "/Sync")
            #expect(link.exitCode == 0, "\(link)")
            #expect(try d.ctl("sync", "status", "--json").json()["directory"]?.stringValue == real)
            // What is not a folder stays refused, through a link or not, and changes nothing.
            #expect(mkfifo(d.root + "/fifo", 0o600) == 0)
            #expect(symlink(d.root + "/fifo", d.root + "/to-fifo") == 0)
            #expect(symlink("/dev/null", d.root + "/to-device") == 0)
            #expect(symlink(d.root + "/nowhere", d.root + "/dangling") == 0)
            for refused in ["/fifo", "/to-fifo", "/to-device", "/fifo/below", "/dangling"] {
                let answer = try d.send(Request(command: "sync_enable", arguments: [("directory", .string(d.root + refused))]))
                #expect(answer.errorCode == "invalid_directory", "\(refused): \(answer.serialized)")
            }
            #expect(try d.ctl("sync", "status", "--json").json()["directory"]?.stringValue == real, "the folder in force stays")
        }
    }
}
