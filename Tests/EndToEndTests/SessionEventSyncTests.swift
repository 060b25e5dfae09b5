import DiligenceJSON
import DiligenceTestSupport
import Testing

// Another device's sessions merged from the sync folder are session events too (issue 31),
// with `source` `sync`: recorded when its line arrives, removed when its removal does.

extension EndToEnd {
    @Suite("Session events: a sync merge is a door")
    struct SessionEventSync {
        @Test("another device's session, merged and then removed, reaches the watchers as session_recorded and session_removed from sync")
        func mergedSessionsAreEvents() throws {
            let (a, folder, _) = try SyncMerge.device("laptop")
            let watcher = try a.watch()
            let other = "0b7e9a52-4c1d-4f0e-9a3b-5d6c7e8f9012"
            let task = "1b7e9a52-4c1d-4f0e-9a3b-5d6c7e8f9012"
            let session = "2b7e9a52-4c1d-4f0e-9a3b-5d6c7e8f9012"
            let head = #"{"v":1,"device":"\#(other)","hlc":[1764569662123,"#
            let taskObject =
                #"{"id":"\#(task)","name":"Far","description":"","color":"blue","work_seconds":1500,"short_break_seconds":300,"#
                + #""long_break_seconds":900,"long_break_every":4,"breaks":true,"autostart":"none","focus_mode":false,"goal":0,"#
                + #""reminder":null,"sound":null,"archived":false}"#
            var lines = [
                head + #"0],"change":"task_added","task":"# + taskObject + "}",
                head + #"1],"change":"session_recorded","session":{"id":"\#(session)","task":"\#(task)","device":"\#(other)","#
                    + #""start":1764567862.25,"end":1764569662.125,"planned_seconds":1800,"focused_seconds":1800,"pauses":0,"outcome":"completed"}}"#,
            ]
            try SyncMerge.deliver(Array((lines.joined(separator: "\n") + "\n").utf8), to: "\(folder)/\(other).jsonl")
            let recorded = watcher.waitFor(timeout: 5) { $0.name == "session_recorded" }
            #expect(recorded?.event.json["source"]?.stringValue == "sync", "\(watcher.transcript)")
            #expect(recorded?.event.json["session"]?["uuid"]?.stringValue == session)
            #expect(recorded?.event.json["session"]?["task"]?.stringValue == "Far")

            lines.append(head + #"2],"change":"session_removed","id":"\#(session)"}"#)
            try SyncMerge.deliver(Array((lines.joined(separator: "\n") + "\n").utf8), to: "\(folder)/\(other).jsonl")
            let removed = watcher.waitFor(timeout: 5) { $0.name == "session_removed" }
            #expect(removed?.event.json["source"]?.stringValue == "sync", "\(watcher.transcript)")
            #expect(removed?.event.json["session"]?["uuid"]?.stringValue == session)
        }
    }
}
