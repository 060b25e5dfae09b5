import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Testing

@testable import DiligenceDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// Every change of history is an event (issue 31): `session_recorded`, `session_changed` and
/// `session_removed`, with the session and the door it came through, whatever the door.
@Suite("Daemon: session events, one per change, from every door")
struct SessionEventTests {
    static let names: Set = ["session_recorded", "session_changed", "session_removed"]

    /// The session events the watcher got after `index`, once `count` of them arrived.
    func sessionEvents(_ watcher: EventWatcher, count: Int, after index: Int = 0) -> [EventWatcher.Event] {
        var seen = 0
        _ = watcher.waitFor(after: index, timeout: 5) { event in
            if Self.names.contains(event.name) { seen += 1 }
            return seen >= count
        }
        // What else comes in a moment would be a change reported twice.
        usleep(150_000)
        return watcher.events.dropFirst(index).filter { Self.names.contains($0.name) }
    }

    func text(of path: String) -> String { String(decoding: readFileBytes(path), as: UTF8.self) }

    func summary(_ events: [EventWatcher.Event]) -> [String] {
        events.map { "\($0.name) \($0.json["source"]?.stringValue ?? "?") \($0.json["session"]?["task"]?.stringValue ?? "?")" }
    }

    @Test func theTimerHistoryAndTaskRemovalEachSayWhatTheyChanged() throws {
        try withTimeZone("UTC") {
            let d = try InProcessDaemon(config: "[timer]\nmin_session = 0\n")
            defer { d.stop() }
            let watcher = try d.watch()
            _ = try d.call("start", [("task", .string("Study"))])
            _ = try d.call("pause")
            _ = try d.call("resume")
            _ = try d.call("stop")
            let timer = sessionEvents(watcher, count: 1)
            #expect(summary(timer) == ["session_recorded timer Study"], "\(watcher.transcript)")
            #expect(timer.first?.json["session"]?["segments"]?.arrayValue != nil)
            #expect(timer.first?.json["session"]?["uuid"]?.stringValue?.count == 36)

            var mark = watcher.events.count
            try d.addSession("Work", "2025-05-01 09:00", "2025-05-01 09:25")
            let added = sessionEvents(watcher, count: 1, after: mark)
            #expect(summary(added) == ["session_recorded history Work"], "\(watcher.transcript)")
            let segments = added.first?.json["session"]?["segments"]?.arrayValue ?? []
            #expect(
                segments.map(\.serialized) == [#"{"start":"2025-05-01T09:00:00+00:00","end":"2025-05-01T09:25:00+00:00","seconds":1500}"#])
            let id = try #require(added.first?.json["session"]?["id"]?.intValue)

            mark = watcher.events.count
            _ = try d.call("history_edit", [("id", .int(id)), ("task", .string("Errands")), ("end", .string("2025-05-01 09:20"))])
            let edited = sessionEvents(watcher, count: 1, after: mark)
            #expect(summary(edited) == ["session_changed history Errands"], "an edit is one change: \(watcher.transcript)")
            #expect(edited.first?.json["session"]?["focused_seconds"]?.intValue == 1200)

            mark = watcher.events.count
            _ = try d.call("history_remove", [("id", .int(id))])
            let removed = sessionEvents(watcher, count: 1, after: mark)
            #expect(summary(removed) == ["session_removed history Errands"], "\(watcher.transcript)")
            #expect(removed.first?.json["session"]?["uuid"] == edited.first?.json["session"]?["uuid"])

            try d.addSession("Work", "2025-05-02 09:00", "2025-05-02 09:25")
            try d.addSession("Work", "2025-05-02 10:00", "2025-05-02 10:25")
            _ = sessionEvents(watcher, count: 5)
            mark = watcher.events.count
            _ = try d.call("task_remove", [("task", .string("Work")), ("confirm", .bool(true))])
            let gone = sessionEvents(watcher, count: 2, after: mark)
            #expect(summary(gone) == ["session_removed task Work", "session_removed task Work"], "\(watcher.transcript)")
        }
    }

    @Test func anImportAndDiscardedAwayTimeSayTheirDoors() throws {
        try withTimeZone("UTC") {
            let d = try InProcessDaemon(config: "[presence]\non_away = continue\n")
            defer { d.stop() }
            let watcher = try d.watch()
            let line =
                #"{"task":"Work","start":"2025-05-03T09:00:00+00:00","end":"2025-05-03T09:30:00+00:00","planned_seconds":1500,"focused_seconds":1500,"pauses":1,"outcome":"completed"}"#
            _ = try d.call("import", [("content", .string(line))])
            let imported = sessionEvents(watcher, count: 1)
            #expect(summary(imported) == ["session_recorded import Work"], "\(watcher.transcript)")

            _ = try d.call("task_add", [("name", .string("Quick")), ("work", .string("1s"))])
            var mark = watcher.events.count
            _ = try d.call("start", [("task", .string("Quick"))])
            _ = try d.call("away")
            let ended = sessionEvents(watcher, count: 1, after: mark)
            #expect(summary(ended) == ["session_recorded timer Quick"], "\(watcher.transcript)")
            _ = try d.call("back")
            mark = watcher.events.count
            _ = try d.call("discard_away")
            let trimmed = sessionEvents(watcher, count: 1, after: mark)
            #expect(summary(trimmed) == ["session_changed discard_away Quick"], "\(watcher.transcript)")
            #expect(trimmed.first?.json["session"]?["outcome"]?.stringValue == "abandoned")
        }
    }

    @Test func aHookGetsTheSessionInItsEnvironmentAndOnStdin() throws {
        let dir = TemporaryDirectory("session-hook")
        defer { dir.remove() }
        let record = dir.path + "/record"
        let script = dir.path + "/hook.sh"
        let body =
            "#!/bin/sh\n{ echo \"$DILIGENCE_EVENT $DILIGENCE_SOURCE $DILIGENCE_SESSION_TASK $DILIGENCE_SESSION_SEGMENTS\"; cat; echo; } >> '\(record)'\n"
        writeTextFile(body, to: script)
        chmod(script, 0o755)
        try withTimeZone("UTC") {
            let d = try InProcessDaemon(
                config: "[hooks]\non_session_recorded = \(script)\non_session_changed = \(script)\non_session_removed = \(script)\n")
            defer { d.stop() }
            try d.addSession("Work", "2025-05-01 09:00", "2025-05-01 09:25")
            let deadline = monotonicNow() + 5
            while text(of: record).split(separator: "\n").count < 2 && monotonicNow() < deadline { usleep(20_000) }
            let lines = text(of: record).split(separator: "\n").map(String.init)
            #expect(lines.first == "session_recorded history Work 2025-05-01T09:00:00+00:00/2025-05-01T09:25:00+00:00", "\(lines)")
            let payload = try JSON.parse(lines.count > 1 ? lines[1] : "null")
            #expect(payload["event"]?.stringValue == "session_recorded" && payload["hook"]?.stringValue == "session_recorded")
            #expect(payload["source"]?.stringValue == "history")
            #expect(payload["session"]?["task"]?.stringValue == "Work")
        }
    }
}
