import DiligenceJSON
import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A private Taskwarrior (Debian's `task`): its own TASKRC and TASKDATA under the test's root,
/// which the daemon and the client get too.
struct PrivateTaskwarrior {
    let environment: [String: String]
    let root: String

    /// The same Taskwarrior with the daemon's environment as it is now (after more variables).
    init(sharing other: PrivateTaskwarrior, environment: [String: String]) throws {
        root = other.root
        self.environment = environment
    }

    init(for d: DaemonUnderTest) throws {
        root = d.root
        let rc = d.root + "/taskrc"
        try "".write(toFile: rc, atomically: true, encoding: .utf8)
        mkdir(d.root + "/task", 0o700)
        d.extraEnvironment["TASKRC"] = rc
        d.extraEnvironment["TASKDATA"] = d.root + "/task"
        environment = d.environment
    }

    /// `task ARGS` without questions or chatter; throws unless it exits 0.
    @discardableResult
    func run(_ arguments: String...) throws -> String {
        let run = try runProgram(
            ["/usr/bin/task", "rc.confirmation=off", "rc.verbose=nothing"] + arguments, environment: environment, directory: root)
        guard run.succeeded else { throw HarnessError("\(run)") }
        return run.output
    }

    /// The task as `task UUID export` shows it.
    func export(_ reference: String) throws -> JSON {
        guard let task = try JSON.parse(try run("rc.json.array=on", reference, "export")).arrayValue?.first else {
            throw HarnessError("task \(reference) export listed nothing")
        }
        return task
    }

    func add(_ words: String...) throws -> (id: String, uuid: String) {
        try runProgram(
            ["/usr/bin/task", "rc.confirmation=off", "rc.verbose=nothing", "add"] + words, environment: environment, directory: root)
        let id = try run("_ids").split(separator: "\n").last.map(String.init) ?? ""
        return (id, try run("_get", "\(id).uuid"))
    }
}

extension EndToEnd {
    @Suite("Taskwarrior: start by ID or UUID, project map, refusals")
    struct TaskwarriorStart {
        @Test("--taskwarrior ID and tw:UUID start the mapped task with the description as note; default otherwise")
        func startByIDAndUUID() throws {
            let d = try DaemonUnderTest(launch: false)
            let tw = try PrivateTaskwarrior(for: d)
            try d.writeConfig("[taskwarrior]\nmap = Home:Chores, Work.report:Writing\ndefault = Inbox\n")
            try d.start()
            for name in ["Chores", "Writing", "Inbox"] { try d.addTask(name) }
            let garden = try tw.add("project:Home.garden", "Water the plants")
            let loose = try tw.add("Loose end")
            let byID = try d.ctl("start", "--taskwarrior", garden.id)
            #expect(byID.exitCode == 0, "\(byID)")
            var status = try d.ctlStatus()
            #expect(status["task"]?.stringValue == "Chores", "\(status)")
            #expect(status["note"]?.stringValue == "Water the plants", "\(status)")
            #expect(try d.ctl("stop").exitCode == 0)
            let byUUID = try d.ctl("start", "tw:" + loose.uuid, "--note", "my own")
            #expect(byUUID.exitCode == 0, "\(byUUID)")
            status = try d.ctlStatus()
            #expect(status["task"]?.stringValue == "Inbox", "\(status)")
            #expect(status["note"]?.stringValue == "my own", "\(status)")
            #expect(try d.ctl("stop").exitCode == 0)
            // A task named beside it wins over the map.
            #expect(try d.ctl("start", "Writing", "--taskwarrior", garden.uuid).exitCode == 0)
            #expect(try d.ctlStatus()["task"]?.stringValue == "Writing")
        }

        @Test("a project nothing maps, an unknown ID, a bad reference, bad JSON and no task: clear errors")
        func refusals() throws {
            let d = try DaemonUnderTest(launch: false)
            let tw = try PrivateTaskwarrior(for: d)
            try d.writeConfig("[taskwarrior]\nmap = Home:Chores\n")
            try d.start()
            try d.addTask("Chores")
            let work = try tw.add("project:Work", "Report")
            let unmapped = try d.ctl("start", "tw:" + work.id)
            #expect(unmapped.exitCode == 2, "\(unmapped)")
            #expect(unmapped.stderr.contains("\"Work\" maps to no diligence task"), "\(unmapped)")
            #expect(unmapped.stderr.contains("map = Work:TASK"), "\(unmapped)")
            let missing = try d.ctl("start", "--taskwarrior", "99")
            #expect(missing.exitCode == 2 && missing.stderr.contains("Taskwarrior has no task 99"), "\(missing)")
            let bad = try d.ctl("start", "tw:+next")
            #expect(bad.exitCode == 2 && bad.stderr.contains("by its ID (12) or its UUID"), "\(bad)")
            let both = try d.ctl("start", "tw:1", "--taskwarrior", "1")
            #expect(both.exitCode == 2, "\(both)")
            // A `task` that prints no JSON, and none on the PATH.
            let fakeBin = d.root + "/fakebin"
            mkdir(fakeBin, 0o755)
            try "#!/bin/sh\necho 'not json'\n".write(toFile: fakeBin + "/task", atomically: true, encoding: .utf8)
            chmod(fakeBin + "/task", 0o755)
            var env = d.environment
            env["PATH"] = fakeBin + ":/usr/bin:/bin"
            let garbage = try d.ctl(arguments: ["start", "tw:1"], environment: env)
            #expect(garbage.exitCode == 1 && garbage.stderr.contains("printed no JSON array"), "\(garbage)")
            unlink(fakeBin + "/task")
            env["PATH"] = fakeBin
            let absent = try d.ctl(arguments: ["start", "tw:1"], environment: env)
            #expect(absent.exitCode == 1 && absent.stderr.contains("could not run Taskwarrior"), "\(absent)")
            #expect(try d.ctlStatus()["state"]?.stringValue == "idle")
        }
    }

    @Suite("Taskwarrior: task start and stop follow the work phase, the session annotates the task")
    struct TaskwarriorFollow {
        /// Polls `task export` until `condition` holds for the task (5 s at most).
        static func waitFor(_ tw: PrivateTaskwarrior, _ uuid: String, _ condition: (JSON) -> Bool) throws -> JSON {
            let deadline = monotonicNow() + 8
            var task = try tw.export(uuid)
            while !condition(task) && monotonicNow() < deadline {
                sleepFor(0.1)
                task = try tw.export(uuid)
            }
            return task
        }

        static func annotations(_ task: JSON) -> [String] {
            task["annotations"]?.arrayValue?.compactMap { $0["description"]?.stringValue } ?? []
        }

        @Test("start during work, gone after; `pomodoro 3s completed, 1 interruption` once recorded")
        func startStopAnnotate() throws {
            let d = try DaemonUnderTest(launch: false)
            let tw = try PrivateTaskwarrior(for: d)
            try d.writeConfig("[taskwarrior]\nmap = Home:Chores\n")
            try d.start()
            try d.addTask("Chores", [("work", .string("3s"))])
            let garden = try tw.add("project:Home", "Water the plants")
            #expect(try d.ctl("start", "tw:" + garden.id).exitCode == 0)
            _ = try d.call("interrupt", [("kind", .string("external"))])
            let during = try Self.waitFor(tw, garden.uuid) { $0["start"] != nil }
            #expect(during["start"] != nil, "no start attribute during work: \(during)\n\(d.diagnostics)")
            let after = try Self.waitFor(tw, garden.uuid) { $0["start"] == nil && !Self.annotations($0).isEmpty }
            #expect(after["start"] == nil, "\(after)\n\(d.diagnostics)")
            #expect(Self.annotations(after) == ["pomodoro 3s completed, 1 interruption"], "\(after)\n\(d.diagnostics)")
            #expect(try d.ctlStatus()["phase"]?.stringValue == "short_break")
        }

        @Test("a daemon without task: the timer goes on, one warning for all the failed calls")
        func missingTaskLogsOnce() throws {
            let d = try DaemonUnderTest(launch: false)
            let tw = try PrivateTaskwarrior(for: d)
            let empty = d.root + "/nobin"
            mkdir(empty, 0o755)
            d.daemonEnvironment["PATH"] = empty
            try d.writeConfig("[taskwarrior]\ndefault = Inbox\n")
            try d.start()
            try d.addTask(
                "Inbox", [("work", .string("1s")), ("short_break", .string("1s")), ("autostart", .string("all"))])
            let loose = try tw.add("Loose end")
            let watcher = try d.watch()
            #expect(try d.ctl("start", "tw:" + loose.id).exitCode == 0)
            let second = watcher.waitFor(timeout: 8) { $0.state == "running" && $0.phase == "work" && $0.status?["round"]?.intValue == 2 }
            #expect(second != nil, "the second round never started\n\(watcher.transcript)\n\(d.diagnostics)")
            sleepFor(0.5)
            let warnings = d.stderr.split(separator: "\n").filter { $0.hasPrefix("<4>") && $0.contains("event=taskwarrior") }
            #expect(warnings.count == 1, "\(d.stderr)")
        }

        /// A daemon whose `default` is Inbox, and a Taskwarrior task whose work it started and
        /// stopped (`task start`, then `task stop`, seen in `task export`): that task as it is now.
        static func followedThenStopped() throws -> (DaemonUnderTest, PrivateTaskwarrior, (id: String, uuid: String), JSON) {
            let d = try DaemonUnderTest(launch: false)
            let tw = try PrivateTaskwarrior(for: d)
            try d.writeConfig("[taskwarrior]\ndefault = Inbox\n")
            try d.start()
            try d.addTask("Inbox")
            let loose = try tw.add("Loose end")
            #expect(try d.ctl("start", "--taskwarrior", loose.uuid).exitCode == 0)
            #expect(try Self.waitFor(tw, loose.uuid) { $0["start"] != nil }["start"] != nil, "\(d.diagnostics)")
            #expect(try d.ctl("stop").exitCode == 0)
            let stopped = try Self.waitFor(tw, loose.uuid) { $0["start"] == nil }
            #expect(stopped["start"] == nil, "\(stopped)\n\(d.diagnostics)")
            return (d, tw, loose, stopped)
        }

        @Test("a stopped phase stops the task; enabled = no runs no task at all")
        func stopAndDisabled() throws {
            let (d, tw, loose, stopped) = try Self.followedThenStopped()
            // Under min_session: not recorded, no annotation.
            #expect(Self.annotations(stopped).isEmpty, "\(stopped)")
            try d.writeConfig("[taskwarrior]\ndefault = Inbox\nenabled = no\n")
            #expect(try d.ctl("reload").exitCode == 0)
            #expect(try d.ctl("start", "--taskwarrior", loose.id).exitCode == 0)
            sleepFor(1)
            #expect(try tw.export(loose.uuid)["start"] == nil)
            #expect(try d.ctlStatus()["task"]?.stringValue == "Inbox")
        }

        @Test("toggle from idle after followed work starts the task's work alone, not the Taskwarrior task again")
        func toggleFromIdleFollowsNothing() throws {
            let (d, tw, loose, _) = try Self.followedThenStopped()
            #expect(try d.ctl("toggle").exitCode == 0)
            #expect(try d.ctlStatus()["state"]?.stringValue == "running")
            sleepFor(1)
            #expect(try tw.export(loose.uuid)["start"] == nil, "toggle started the Taskwarrior task again\n\(d.diagnostics)")
        }
    }

    @Suite("Taskwarrior: the contrib on-modify hook")
    struct TaskwarriorHook {
        @Test("task start starts diligence on the mapped task, task stop stops it, without a loop")
        func hookDrivesDiligence() throws {
            let d = try DaemonUnderTest(launch: false)
            let tw = try PrivateTaskwarrior(for: d)
            let hooks = d.root + "/hooks"
            mkdir(hooks, 0o700)
            let source = try String(contentsOfFile: Self.repository + "/contrib/taskwarrior/on-modify.diligence", encoding: .utf8)
            try source.write(toFile: hooks + "/on-modify.diligence", atomically: true, encoding: .utf8)
            chmod(hooks + "/on-modify.diligence", 0o755)
            try "hooks.location=\(hooks)\n".write(toFile: d.root + "/taskrc", atomically: true, encoding: .utf8)
            d.extraEnvironment["DILIGENCECTL"] = try Binaries.client
            let tw2 = try PrivateTaskwarrior(sharing: tw, environment: d.environment)
            try d.writeConfig("[taskwarrior]\nmap = Home:Chores\n")
            try d.start()
            try d.addTask("Chores")
            let garden = try tw2.add("project:Home", "Water the plants")
            try tw2.run(garden.id, "start")
            var status = try d.ctlStatus()
            #expect(status["state"]?.stringValue == "running" && status["task"]?.stringValue == "Chores", "\(status)\n\(d.diagnostics)")
            #expect(status["note"]?.stringValue == "Water the plants", "\(status)")
            #expect(try tw2.export(garden.uuid)["start"] != nil)
            sleepFor(1)
            try tw2.run(garden.id, "stop")
            status = try d.ctlStatus()
            #expect(status["state"]?.stringValue == "idle", "\(status)\n\(d.diagnostics)")
            sleepFor(1)
            #expect(try tw2.export(garden.uuid)["start"] == nil)
            // The daemon's own task start and stop went through the hook untouched: no warning.
            #expect(!d.stderr.contains("task \(garden.uuid) start failed"), "\(d.stderr)")
            #expect(!d.stderr.contains("task \(garden.uuid) stop failed"), "\(d.stderr)")
        }

        static var repository: String {
            var dir = #filePath
            for _ in 0..<3 { dir = String(dir[..<(dir.lastIndex(of: "/") ?? dir.endIndex)]) }
            return dir
        }
    }
}
