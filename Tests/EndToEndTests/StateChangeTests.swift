// Every change of the timer, whatever its cause, goes through one path that records it, saves
// the timer and pushes an event. This walks every timer command from every state the timer
// can be in and checks both ends of that path: a watcher sees the new status, and a daemon
// killed with SIGKILL right after comes back in the same state.

import DiligenceJSON
import DiligenceProtocol
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The parts of a status that a change must carry to watchers and across a crash.
struct TimerShape: Equatable, CustomStringConvertible {
    var state: String
    var phase: String?
    var task: String?
    var round: Int
    var duration: Int
    var remaining: Int

    init(_ status: JSON) {
        state = status["state"]?.stringValue ?? "?"
        phase = status["phase"]?.stringValue
        task = status["task"]?.stringValue
        round = Int(status["round"]?.intValue ?? -1)
        duration = Int(status["duration_seconds"]?.intValue ?? -1)
        remaining = Int(status["remaining_seconds"]?.intValue ?? -1)
    }

    /// Equal but for the time a running phase loses meanwhile (`slack` seconds at most).
    func matches(_ other: TimerShape, slack: Int = 3) -> Bool {
        var a = self
        var b = other
        a.remaining = 0
        b.remaining = 0
        return a == b && abs(remaining - other.remaining) <= (state == "running" ? slack : 0)
    }

    var description: String {
        "\(state) \(phase ?? "-") \(task ?? "-") round \(round) \(remaining)/\(duration) s"
    }
}

extension EndToEnd {
    @Suite("One path for every state change: each reaches a watcher and survives SIGKILL")
    struct StateChanges {
        /// The states and the commands that lead to each from idle (task Walk: work 10m, breaks 3m
        /// and 7m, a long break after two rounds, nothing starts by itself).
        static let states: [(name: String, steps: [String])] = [
            ("idle", []),
            ("running work", ["start"]),
            ("paused work", ["start", "pause"]),
            ("pending short break", ["start", "skip"]),
            ("running short break", ["start", "skip", "start"]),
            ("paused short break", ["start", "skip", "start", "pause"]),
            ("pending work, round 2", ["start", "skip", "start", "skip"]),
            ("pending long break", ["start", "skip", "start", "skip", "start", "skip"]),
            ("running long break", ["start", "skip", "start", "skip", "start", "skip", "start"]),
            ("paused long break", ["start", "skip", "start", "skip", "start", "skip", "start", "pause"]),
        ]

        /// Every command that can change the timer, as sent on the socket.
        static let commands: [(name: String, arguments: [(String, JSON)])] = [
            ("start", []),
            ("start", [("task", .string("Other"))]),
            ("toggle", []),
            ("pause", []),
            ("resume", []),
            ("stop", []),
            ("skip", []),
            ("extend", [("duration", .int(60))]),
            // The running task's new lengths: a pending phase takes its new one at once.
            (
                "task_edit",
                [
                    ("task", .string("Walk")), ("work", .string("11m")), ("short_break", .string("4m")),
                    ("long_break", .string("8m")),
                ]
            ),
            // Removing the running task drops its phase.
            ("task_remove", [("task", .string("Walk")), ("confirm", .bool(true))]),
        ]

        static let walk: [(String, JSON)] = [
            ("work", .string("10m")), ("short_break", .string("3m")),
            ("long_break", .string("7m")), ("long_break_every", .int(2)),
        ]

        /// Idle, with Walk (at its usual lengths) and Other.
        static func reset(_ d: DaemonUnderTest) throws {
            if try d.status()["state"]?.stringValue != "idle" { try d.call("stop") }
            let names = try d.call("task_list")["tasks"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
            if names.contains("Walk") {
                try d.call("task_edit", [("task", .string("Walk"))] + walk)
            } else {
                try d.addTask("Walk", walk)
            }
            if !names.contains("Other") { try d.addTask("Other", [("work", .string("20m"))]) }
        }

        @Test(
            "every command from every state: the watcher sees the new status, a SIGKILLed daemon restores it",
            arguments: states.map(\.name))
        func everyCommandFromState(_ stateName: String) throws {
            let steps = try #require(Self.states.first { $0.name == stateName }?.steps)
            let d = try DaemonUnderTest()
            var changes = 0
            for command in Self.commands {
                try Self.reset(d)
                for (index, step) in steps.enumerated() {
                    try d.call(step, index == 0 ? [("task", .string("Walk"))] : [])
                }
                let before = TimerShape(try d.status())
                let what = "\(command.name)\(command.arguments.first.map { " \($0.1.serialized)" } ?? "") from \(stateName) (\(before))"
                let watcher = try d.watch()
                guard watcher.waitFor(timeout: 5, where: { $0.name == "status" }) != nil else {
                    Issue.record("\(what): the watcher got no first status\n\(watcher.transcript)")
                    continue
                }
                let answer = try d.send(Request(command: command.name, arguments: command.arguments))
                let after = TimerShape(try d.status())
                guard answer.isOK else {
                    #expect(after.matches(before), "\(what): refused (\(answer.serialized)) yet the timer changed to \(after)")
                    continue
                }
                if !after.matches(before, slack: 0) { changes += 1 }
                // The watcher sees the new status in an event of its own.
                let seen = watcher.waitFor(after: 1, timeout: 3) { event in
                    event.status.map { TimerShape($0).matches(after) } ?? false
                }
                #expect(seen != nil, "\(what) → \(after): no watcher event carries it\n\(watcher.transcript)")
                // And it survives a crash right after the answer.
                d.kill()
                try d.start()
                let restored = TimerShape(try d.status())
                #expect(restored.matches(after), "\(what) → \(after), but after SIGKILL and a restart: \(restored)\n\(d.diagnostics)")
            }
            #expect(changes > 0, "no command changed the timer from \(stateName)")
        }
    }
}
