import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EndToEnd {
    @Suite("Hooks: argv without a shell, environment and stdin, time limit, never in the timer's way")
    struct HookRuns {
        @Test("on_work_end gets DILIGENCE_* and the event JSON; a task named `x; rm -rf ~` is only a string")
        func environmentAndStdin() throws {
            let d = try DaemonUnderTest(launch: false)
            let record = d.root + "/hook.out"
            let canary = d.home + "/canary"
            try "still here".write(toFile: canary, atomically: true, encoding: .utf8)
            let script = try d.writeScript(
                "record-hook",
                """
                #!/bin/sh
                {
                  printf 'argv=%s|%s\\n' "$1" "$2"
                  printf 'event=%s\\ntask=%s\\nphase=%s\\nstate=%s\\nremaining=%s\\nround=%s\\n' \\
                    "$DILIGENCE_EVENT" "$DILIGENCE_TASK" "$DILIGENCE_PHASE" "$DILIGENCE_STATE" "$DILIGENCE_REMAINING" "$DILIGENCE_ROUND"
                  printf 'stdin='
                  cat
                } > "\(record).tmp"
                mv "\(record).tmp" "\(record)"
                echo "hook says hello"
                """)
            try d.writeConfig("[hooks]\non_work_end = \"\(script)\" 'two words' ;\n")
            try d.start()
            let name = "x; rm -rf ~"
            try d.addTask(name, [("work", .string("1s"))])
            try d.call("start", [("task", .string(name))])
            let deadline = monotonicNow() + 6
            while access(record, F_OK) != 0 && monotonicNow() < deadline { sleepFor(0.05) }
            let text = readTextFile(record)
            let lines = text.split(separator: "\n").map(String.init)
            #expect(lines.contains("argv=two words|;"), "\(text)\n\(d.diagnostics)")
            #expect(lines.contains("event=work_end"), "\(text)")
            #expect(lines.contains("task=\(name)"), "\(text)")
            #expect(lines.contains("phase=work"), "\(text)")
            #expect(lines.contains("state=pending"), "\(text)")
            #expect(lines.contains("remaining=300"), "\(text)")
            #expect(lines.contains("round=1"), "\(text)")
            let stdin = lines.first { $0.hasPrefix("stdin=") }.map { String($0.dropFirst(6)) } ?? ""
            let json = try JSON.parse(stdin)
            #expect(json["event"]?.stringValue == "phase_completed", "\(stdin)")
            #expect(json["hook"]?.stringValue == "work_end", "\(stdin)")
            #expect(json["status"]?["task"]?.stringValue == name, "\(stdin)")
            #expect(readTextFile(canary) == "still here", "the task name was executed")
            // The hook's output goes to the log.
            let logDeadline = monotonicNow() + 3
            while !d.stderr.contains("hook says hello") && monotonicNow() < logDeadline { sleepFor(0.05) }
            #expect(d.stderr.contains("on_work_end: hook says hello"), "\(d.stderr)")
        }

        @Test("a hook that sleeps for minutes delays no phase and is ended at its time limit")
        func slowHookDelaysNothing() throws {
            let d = try DaemonUnderTest(launch: false)
            try d.writeConfig("[hooks]\non_work_end = sleep 300\non_break_start = sleep 300\ntimeout = 2\n")
            try d.start()
            try d.addTask("Chain", [("work", .string("1s")), ("short_break", .string("1s")), ("autostart", .string("all"))])
            let watcher = try d.watch()
            try d.call("start", [("task", .string("Chain"))])
            let t0 = monotonicNow()
            for (phase, round, at) in [("short_break", Int64(1), 1.0), ("work", Int64(2), 2.0)] {
                guard
                    let (_, event) = watcher.waitFor(
                        timeout: 5,
                        where: {
                            $0.state == "running" && $0.phase == phase && $0.status?["round"]?.intValue == round
                        })
                else {
                    Issue.record("\(phase) round \(round) never started\n\(watcher.transcript)\n\(d.diagnostics)")
                    return
                }
                let late = event.time - (t0 + at)
                #expect(
                    abs(late) <= 0.3, "\(phase) came \(Int(late * 1000)) ms from its deadline with a sleeping hook\n\(watcher.transcript)")
            }
            // Both sleeps get SIGTERM at the 2 s limit.
            let deadline = monotonicNow() + 8
            func ended() -> Int { d.stderr.components(separatedBy: "ended with killed by signal 15").count - 1 }
            while ended() < 2 && monotonicNow() < deadline { sleepFor(0.1) }
            #expect(d.stderr.contains("still ran after its 2 s limit"), "\(d.stderr)")
            #expect(ended() == 2, "\(d.stderr)")
        }

        @Test("hooks run one at a time, in the order of their events: a slow on_away ends before on_back starts")
        func hooksRunInOrder() throws {
            let d = try DaemonUnderTest(launch: false)
            let record = d.root + "/order"
            // A chat-status or time-tracker hook: the slow call of the first event must not land after the second.
            let script = try d.writeScript(
                "ordered",
                """
                #!/bin/sh
                echo "start $DILIGENCE_EVENT" >> "\(record)"
                [ "$DILIGENCE_EVENT" = away ] && sleep 0.6
                echo "end $DILIGENCE_EVENT" >> "\(record)"
                """)
            try d.writeConfig("[hooks]\non_away = \(script)\non_back = \(script)\n")
            try d.start()
            try d.call("away")
            try d.call("back")
            let expected = "start away\nend away\nstart back\nend back\n"
            let deadline = monotonicNow() + 6
            while readTextFile(record).count < expected.count && monotonicNow() < deadline { sleepFor(0.05) }
            #expect(readTextFile(record) == expected, "\(d.diagnostics)")
        }

        @Test("hooks that wait in line are bounded: past 64 the oldest waiting one is dropped, saying so")
        func waitingHooksAreBounded() throws {
            let d = try DaemonUnderTest(launch: false)
            try d.writeConfig("[hooks]\non_away = sleep 300\non_back = sleep 300\ntimeout = 60\n")
            try d.start()
            for _ in 0..<35 {
                try d.call("away")
                try d.call("back")
            }
            // 70 events: one hook runs, 64 wait, the 5 oldest waiting were dropped.
            let deadline = monotonicNow() + 3
            func dropped() -> Int { d.stderr.components(separatedBy: "dropped: 64 hooks wait already").count - 1 }
            while dropped() < 5 && monotonicNow() < deadline { sleepFor(0.05) }
            #expect(dropped() == 5, "\(d.stderr)")
        }

        @Test("sound: the task's ambient file plays during work through the configured player, the end-of-phase sound after it")
        func soundThroughThePlayer() throws {
            let d = try DaemonUnderTest(launch: false)
            let log = d.root + "/player.log"
            let player = try d.writeScript(
                "fake-player",
                """
                #!/bin/sh
                echo "$*" >> "\(log)"
                exec sleep 30
                """)
            let sounds = d.root + "/sounds"
            mkdir(sounds, 0o700)
            try "not really audio".write(toFile: sounds + "/rain.oga", atomically: true, encoding: .utf8)
            try d.writeConfig("[sound]\nplayer = \(player) --volume 0.5\nend_of_phase = \(sounds)/chime.oga\ndirectory = \(sounds)\n")
            try d.start()
            try d.addTask("Rainy", [("work", .string("1s")), ("sound", .string("rain"))])
            try d.call("start", [("task", .string("Rainy"))])
            let deadline = monotonicNow() + 6
            while readTextFile(log).split(separator: "\n").count < 2 && monotonicNow() < deadline { sleepFor(0.05) }
            let lines = readTextFile(log).split(separator: "\n").map(String.init)
            #expect(lines == ["--volume 0.5 \(sounds)/rain.oga", "--volume 0.5 \(sounds)/chime.oga"], "\(lines)\n\(d.diagnostics)")
        }
    }
}
