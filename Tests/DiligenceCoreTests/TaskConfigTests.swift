import DiligenceTestSupport
import Testing

@testable import DiligenceCore

@Suite("DurationText")
struct DurationTextTests {
    @Test(arguments: [
        ("90s", 90), ("25m", 1500), ("1h", 3600), ("1h30m", 5400), ("1h30m15s", 5415),
        ("25", 1500), ("0", 0), ("1m30s", 90), ("2h15s", 7215), (" 5m ", 300),
        ("168h", 604_800), ("10080", 604_800), ("007m", 420),
        // Longer than a phase may be, but a duration: the range is the caller's to check.
        ("169h", 608_400), ("10081", 604_860), ("999999999h", 3_599_999_996_400),
    ])
    func parses(_ text: String, _ seconds: Int) {
        #expect(DurationText.parse(text) == seconds)
    }

    @Test(arguments: [
        "", " ", "abc", "1m1h", "1h1h", "30s1m", "-5", "5x", "1.5h", "h", "m5", "5m5", "1h 30m", "+5",
        "99999999999999999999", "9999999999h", "1000000000s", "1000000000", "٥",
    ])
    func rejects(_ text: String) {
        #expect(DurationText.parse(text) == nil)
    }

    @Test(arguments: [(0, "0s"), (90, "1m30s"), (1500, "25m"), (3600, "1h"), (5400, "1h30m"), (5415, "1h30m15s"), (7201, "2h1s")])
    func formats(_ seconds: Int, _ text: String) {
        #expect(DurationText.format(seconds) == text)
        #expect(DurationText.parse(text) == seconds)
    }

    @Test(arguments: [(0, "0:00"), (5, "0:05"), (245, "4:05"), (1500, "25:00"), (3723, "1:02:03"), (36000, "10:00:00"), (-3, "0:00")])
    func clock(_ seconds: Int, _ text: String) {
        #expect(DurationText.clock(seconds) == text)
    }
}

@Suite("TaskConfig")
struct TaskConfigTests {
    @Test func defaultsAreValid() throws {
        for config in TaskConfig.defaults { try config.validate() }
        #expect(TaskConfig.defaults.map(\.name) == ["Work", "Study", "Exercise", "Meditate", "Wish", "Daily", "Errands"])
        #expect(TaskConfig.defaults.map(\.color) == [.purple, .blue, .cyan, .green, .yellow, .orange, .red])
        let work = TaskConfig.defaults[0]
        #expect(work.workSeconds == 1500 && work.shortBreakSeconds == 300 && work.longBreakSeconds == 900)
        #expect(work.longBreakEvery == 4 && work.breaks && work.autostart == .none && !work.focusMode)
    }

    /// The name is checked when it is set (TaskName), not by validate(): a task whose name
    /// predates today's rules can still be edited.
    @Test func validateLeavesTheNameAlone() throws {
        try TaskConfig(name: "Old\u{200B}name").validate()
    }

    @Test(arguments: [
        TaskConfig(name: "T", workSeconds: 0), TaskConfig(name: "T", shortBreakSeconds: -1),
        TaskConfig(name: "T", longBreakSeconds: DurationText.maxSeconds + 1),
    ])
    func invalidDurations(_ config: TaskConfig) {
        #expect(errorCode { try config.validate() } == "invalid_duration")
    }

    @Test func durationBounds() throws {
        try TaskConfig(name: "T", workSeconds: 1, shortBreakSeconds: DurationText.maxSeconds, longBreakSeconds: 1).validate()
    }

    @Test(arguments: [
        TaskConfig(name: "T", description: String(repeating: "d", count: 1001)),
        TaskConfig(name: "T", longBreakEvery: -1), TaskConfig(name: "T", longBreakEvery: 101),
        TaskConfig(name: "T", goal: -1), TaskConfig(name: "T", goal: 1001),
        TaskConfig(name: "T", reminderMinute: -1), TaskConfig(name: "T", reminderMinute: 1440),
        TaskConfig(name: "T", sound: ""), TaskConfig(name: "T", sound: String(repeating: "s", count: 65)),
        TaskConfig(name: "T", sound: "rain\n"),
    ])
    func invalidValues(_ config: TaskConfig) {
        #expect(errorCode { try config.validate() } == "invalid_value")
    }

    @Test func valueBounds() throws {
        try TaskConfig(
            name: "T", description: String(repeating: "d", count: 1000), longBreakEvery: 0, goal: 1000,
            reminderMinute: 1439, sound: "rain"
        ).validate()
        try TaskConfig(name: "T", longBreakEvery: 100, reminderMinute: 0).validate()
    }

    @Test func autostartStarts() {
        #expect(Phase.allCases.map(Autostart.none.starts) == [false, false, false])
        #expect(Phase.allCases.map(Autostart.breaks.starts) == [false, true, true])
        #expect(Phase.allCases.map(Autostart.work.starts) == [true, false, false])
        #expect(Phase.allCases.map(Autostart.all.starts) == [true, true, true])
    }
}
