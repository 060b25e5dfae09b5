import DiligenceCore
import DiligenceJSON
import DiligenceTestSupport
import Testing

@testable import DiligenceStore

/// A task with every flow and overtime setting away from its default.
func deepFlow(name: String = "Deep") throws -> TaskConfig {
    TaskConfig(
        name: name, mode: .flow, breakRule: try #require(FlowBreakRule.parse("<25m=5m,<50m=8m,else=15m")),
        minBreakSeconds: 240, maxBreakSeconds: 1200, flowNudgeSeconds: 5400, overtime: true)
}

/// The schema's flow sessions and overtime: a task's mode, its break rule and bounds, its nudge.
@Suite("Store: flow sessions and overtime")
struct FlowStoreTests {
    @Test func aTasksFlowSettingsAreStoredAndChanged() throws {
        let s = try Store(location: .memory)
        let added = try s.addTask(try deepFlow())
        let stored = try #require(try s.task(id: added.id))
        #expect(stored == added && stored.mode == .flow && stored.flowNudgeSeconds == 5400 && stored.overtime)
        var edited = stored
        edited.mode = .pomodoro
        edited.breakRule = .ratio(1, 4)
        edited.flowNudgeSeconds = nil
        edited.overtime = false
        _ = try s.updateTask(edited)
        #expect(try s.task(id: added.id) == edited)
        var bad = edited
        bad.minBreakSeconds = 2000
        let refused = error { () throws(DiligenceError) in try s.updateTask(bad) }
        #expect(refused?.code == .invalidValue, "min_break above max_break is refused")
        #expect(try s.task(id: added.id) == edited, "a refused edit changes nothing")
    }

    @Test func anOlderDatabaseGainsTheColumnsAndItsTasksArePomodoros() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let s = try Store(location: .path(dir.database))
            _ = try s.addTask(TaskConfig(name: "Old", workSeconds: 600, doNotDisturb: true))
            try s.connection.exec(
                Store.dropSessionNotes + "ALTER TABLE sessions DROP COLUMN segments; " + withoutInterruptions + withoutFlowColumns
                    + " PRAGMA user_version = 10;")
        }
        let s = try Store(location: .path(dir.database))
        #expect(try s.connection.query("PRAGMA user_version").first?.int(0) == Store.schemaVersion)
        let old = try s.findTask("Old")
        #expect(old.mode == .pomodoro && old.breakRule == .standard && !old.overtime && old.flowNudgeSeconds == nil)
        #expect(old.minBreakSeconds == TaskConfig.defaultMinBreak && old.maxBreakSeconds == TaskConfig.defaultMaxBreak)
        #expect(old.workSeconds == 600 && old.doNotDisturb == true)
    }

    @Test func aSavedFlowTimerRestoresItsCount() throws {
        let s = try Store(location: .memory)
        let flow = try s.addTask(try deepFlow())
        let saved = try savedTimer(flow, wall: 1_800_000_000, elapsed: 5500) { machine, now in
            _ = machine.tick(at: now)
        }
        #expect(saved.run?.countsUp == .flow && saved.run?.nudged == true)
        try s.saveTimer(saved, wall: 1_800_005_500, boottime: 20, bootID: "boot")
        #expect(try s.loadTimer()?.saved == saved)
    }

    @Test func aSavedOvertimeTimerRestoresItsCount() throws {
        let s = try Store(location: .memory)
        var config = TaskConfig(name: "Long", overtime: true)
        config = try s.addTask(config)
        let saved = try savedTimer(config, wall: 1_800_000_000, elapsed: 1600) { machine, now in
            _ = machine.tick(at: now)
        }
        #expect(saved.run?.countsUp == .overtime)
        try s.saveTimer(saved, wall: 1_800_001_600, boottime: 20, bootID: "boot")
        #expect(try s.loadTimer()?.saved == saved)
    }
}

/// The task object carries the flow and overtime settings; an older one without them defaults.
@Suite("Task object: flow and overtime")
struct FlowTaskObjectTests {
    @Test func theTaskObjectReadsBackEveryFlowSetting() throws {
        let task = try deepFlow()
        let json = task.json
        #expect(json["mode"] == .string("flow") && json["break_ratio"] == .string("<25m=5m,<50m=8m,else=15m"))
        #expect(json["min_break_seconds"] == .int(240) && json["max_break_seconds"] == .int(1200))
        #expect(json["flow_nudge_seconds"] == .int(5400) && json["overtime"] == .bool(true))
        var back = try TaskConfig.exported(json, complete: true).get()
        back.id = task.id
        #expect(back == task)
        let none = TaskConfig(name: "Plain").json
        #expect(none["flow_nudge_seconds"] == .null && none["mode"] == .string("pomodoro"))
    }

    @Test func anOlderTaskObjectWithoutThemDefaultsEvenWhenComplete() throws {
        guard case .object(var members) = TaskConfig(name: "Old").json else {
            Issue.record("not an object")
            return
        }
        members.removeAll {
            ["mode", "break_ratio", "min_break_seconds", "max_break_seconds", "flow_nudge_seconds", "overtime"].contains($0.0)
        }
        let task = try TaskConfig.exported(.object(members), complete: true).get()
        #expect(task.mode == .pomodoro && task.breakRule == .standard && !task.overtime && task.flowNudgeSeconds == nil)
    }

    @Test(
        arguments: [
            ("mode", #""stopwatch""#), ("mode", "1"), ("break_ratio", #""1/0""#), ("break_ratio", "0.2"),
            ("min_break_seconds", #""60""#), ("max_break_seconds", "1.5"), ("flow_nudge_seconds", "true"),
            ("overtime", #""yes""#),
        ])
    func aFlowMemberOfTheWrongTypeIsRefusedNamingIt(member: String, value: String) throws {
        let json = try JSON.parse(Array(#"{"name":"Write","\#(member)":\#(value)}"#.utf8))
        guard case .failure(let error) = TaskConfig.exported(json) else {
            Issue.record("\(member): \(value) was taken")
            return
        }
        #expect(error.message.contains("\"\(member)\""), "\(error.message)")
    }

    @Test func boundsOutOfOrderAreRefused() throws {
        let json = try JSON.parse(Array(#"{"name":"Write","min_break_seconds":900,"max_break_seconds":300}"#.utf8))
        guard case .failure = TaskConfig.exported(json) else {
            Issue.record("min_break above max_break was taken")
            return
        }
    }
}
