import DiligenceTestSupport
import Testing

@testable import DiligenceCore

// MARK: Test helpers, written once

/// A task with short, distinct durations by default: work 25m, short break 5m, long break 15m,
/// a long break every 4 rounds, breaks on, autostart none, no focus mode.
func task(
    id: Int64 = 1, name: String = "Writing",
    work: Int = 1500, shortBreak: Int = 300, longBreak: Int = 900,
    every: Int = 4, breaks: Bool = true, autostart: Autostart = .none, focus: Bool = false
) -> TaskConfig {
    TaskConfig(
        id: id, name: name, workSeconds: work, shortBreakSeconds: shortBreak, longBreakSeconds: longBreak,
        longBreakEvery: every, breaks: breaks, autostart: autostart, focusMode: focus)
}

/// A machine already running `config`'s work phase, started at `clock.now`.
func running(_ config: TaskConfig, _ clock: FakeClock) throws -> TimerMachine {
    var machine = TimerMachine()
    _ = try machine.start(config, at: clock.now)
    return machine
}

/// The work sessions among `events`.
func sessions(_ events: [TimerEvent]) -> [WorkSession] {
    events.compactMap { if case .sessionEnded(let s) = $0 { s } else { nil } }
}
