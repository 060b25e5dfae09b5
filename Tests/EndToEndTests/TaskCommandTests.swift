import DiligenceJSON
import DiligenceProtocol
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EndToEnd {
    @Suite("diligencectl: task rules and exit codes")
    struct TaskCommands {
        static let seedTasks = ["Work", "Study", "Exercise", "Meditate", "Wish", "Daily", "Errands"]

        /// The task names `task list --json` prints, in order; accepts a bare list or `{"tasks": [...]}`.
        static func listedNames(_ d: DaemonUnderTest) throws -> [String] {
            let r = try d.ctl("task", "list", "--json")
            #expect(r.exitCode == 0, "\(r)")
            let json = try r.json()
            let tasks = json.arrayValue ?? json["tasks"]?.arrayValue
            let list = try #require(tasks, "task list --json should print a list of tasks (or {\"tasks\": [...]}): \(r)")
            return list.compactMap { $0["name"]?.stringValue }
        }

        /// `task show NAME --json`, parsed; accepts the task object or `{"task": {...}}`.
        static func shown(_ d: DaemonUnderTest, _ name: String) throws -> JSON {
            let r = try d.ctl("task", "show", name, "--json")
            #expect(r.exitCode == 0, "\(r)")
            let json = try r.json()
            return json["name"] != nil ? json : (json["task"] ?? json)
        }

        @Test("task add, edit, show and list")
        func addEditShowList() throws {
            let d = try DaemonUnderTest()
            let add = try d.ctl(
                "task", "add", "Fast", "--work", "2s", "--short-break", "1s", "--long-break", "3s",
                "--long-break-every", "2", "--autostart", "all")
            #expect(add.exitCode == 0, "\(add)\n\(d.diagnostics)")
            var task = try Self.shown(d, "Fast")
            #expect(task["work_seconds"]?.intValue == 2, "\(task.serialized)")
            #expect(task["short_break_seconds"]?.intValue == 1, "\(task.serialized)")
            #expect(task["long_break_seconds"]?.intValue == 3, "\(task.serialized)")
            #expect(task["long_break_every"]?.intValue == 2, "\(task.serialized)")
            #expect(task["autostart"]?.stringValue == "all", "\(task.serialized)")
            #expect(task["color"]?.stringValue == "blue", "default colour: \(task.serialized)")

            let edit = try d.ctl("task", "edit", "Fast", "--work", "1h30m", "--color", "green", "--name", "Faster")
            #expect(edit.exitCode == 0, "\(edit)")
            task = try Self.shown(d, "Faster")
            #expect(task["work_seconds"]?.intValue == 5400, "\(task.serialized)")
            #expect(task["color"]?.stringValue == "green", "\(task.serialized)")
            #expect(task["short_break_seconds"]?.intValue == 1, "untouched fields stay: \(task.serialized)")
            let names = try d.ctl("task", "list", "--names")
            #expect(
                names.stdout.split(separator: "\n").contains("Faster") && !names.stdout.split(separator: "\n").contains("Fast"),
                "the old name is gone: \(names)")

            // A bare number means minutes.
            let minutes = try d.ctl("task", "edit", "Faster", "--short-break", "10")
            #expect(minutes.exitCode == 0, "\(minutes)")
            #expect(try d.call("task_show", [("task", .string("Faster"))])["short_break_seconds"]?.intValue == 600)

            let plain = try d.ctl("task", "list")
            #expect(plain.exitCode == 0, "\(plain)")
            for name in Self.seedTasks + ["Faster"] {
                #expect(plain.stdout.contains(name), "task list should show \(name): \(plain)")
            }
            #expect(try Self.listedNames(d) == Self.seedTasks + ["Faster"], "creation order")

            let duplicate = try d.ctl("task", "add", "Work")
            #expect(duplicate.exitCode == 1, "a duplicate name is the daemon's error: \(duplicate)")
        }

        @Test("task add and edit --dnd on|off|default: task show says it, another word is refused")
        func doNotDisturbOption() throws {
            let d = try DaemonUnderTest()
            let add = try d.ctl("task", "add", "Deep", "--dnd", "on")
            #expect(add.exitCode == 0, "\(add)")
            #expect(try Self.shown(d, "Deep")["dnd"]?.stringValue == "on")
            #expect(try Self.shown(d, "Work")["dnd"]?.stringValue == "default", "a task follows [focus] unless told")
            for word in ["off", "default", "on"] {
                let edit = try d.ctl("task", "edit", "Deep", "--dnd", word)
                #expect(edit.exitCode == 0, "\(edit)")
                #expect(try Self.shown(d, "Deep")["dnd"]?.stringValue == word)
            }
            let bad = try d.ctl("task", "edit", "Deep", "--dnd", "maybe")
            #expect(bad.exitCode == 2, "\(bad)")
            #expect(try Self.shown(d, "Deep")["dnd"]?.stringValue == "on", "a refused edit changes nothing")
        }

        @Test("task remove needs --yes off a terminal; the last task cannot be removed")
        func removeRules() throws {
            let d = try DaemonUnderTest()
            let noYes = try d.ctl("task", "remove", "Work") // stdin is /dev/null, not a terminal
            #expect(noYes.exitCode == 2, "remove without --yes off a terminal is a usage error: \(noYes)")
            #expect(try Self.listedNames(d).contains("Work"), "Work must still exist")

            for name in Self.seedTasks.dropLast() {
                let r = try d.ctl("task", "remove", name, "--yes")
                #expect(r.exitCode == 0, "\(r)\n\(d.diagnostics)")
            }
            #expect(try Self.listedNames(d) == ["Errands"])
            let last = try d.ctl("task", "remove", "Errands", "--yes")
            #expect(last.exitCode == 1, "removing the last task is refused by the daemon: \(last)")
            #expect(!last.stderr.isEmpty, "and says why: \(last)")
            #expect(try Self.listedNames(d) == ["Errands"])
            let raw = try d.request(#"{"command":"task_remove","task":"Errands","confirm":true}"#)
            #expect(raw.errorCode == "last_task", "\(raw.serialized)")
        }

        @Test(
            "exit codes: unknown task 2 like every mistake in what was typed, usage errors 2 (no daemon needed), daemon stopped 3 naming the socket"
        )
        func exitCodes() throws {
            let d = try DaemonUnderTest()
            for args in [["task", "show", "Nope"], ["start", "Nope"], ["task", "edit", "Nope", "--work", "5m"]] {
                let r = try d.ctl(arguments: args)
                #expect(r.exitCode == 2, "unknown task: \(r)")
                #expect(!r.stderr.isEmpty, "an error says why: \(r)")
            }

            let badDuration = try d.ctl("task", "add", "Bad", "--work", "5x")
            #expect(badDuration.exitCode == 2, "\(badDuration)")
            #expect(!(try Self.listedNames(d)).contains("Bad"))
            for args in [["frobnicate"], ["task", "add"], ["extend", "soon"]] {
                let r = try d.ctl(arguments: args)
                #expect(r.exitCode == 2, "usage error: \(r)")
            }
            // A usage error is found before any connection: no daemon at that path at all.
            let offline = try d.ctl(
                arguments: ["--socket", d.root + "/nobody/here.sock", "task", "add", "Bad", "--work", "5x"],
                socketFlag: false)
            #expect(offline.exitCode == 2, "a bad duration is a usage error even without a daemon: \(offline)")

            d.signal(SIGTERM)
            #expect(try d.waitExit() == .exited(0), "\(d.diagnostics)")
            for args in [["status"], ["task", "list"], ["start"]] {
                let r = try d.ctl(arguments: args)
                #expect(r.exitCode == 3, "daemon stopped: \(r)")
                #expect((r.stderr + r.stdout).contains(d.socketPath), "the message should name the socket \(d.socketPath): \(r)")
            }
        }
    }
}
