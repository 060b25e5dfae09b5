import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Testing

@testable import DiligenceDaemon

/// `history add` makes one segment; `history edit` of times moves or fits a session's focus
/// segments, which still sum to its focused time (issue 31).
@Suite("Daemon: focus segments of sessions entered and edited by hand")
struct SegmentEditTests {
    func stored(_ d: InProcessDaemon, _ id: Int64) throws -> WorkSession {
        try d.daemon.queue.sync { Result { () throws(DiligenceError) in try d.daemon.store.session(id: id) } }.get()
    }

    func sum(_ s: WorkSession) -> Int { s.segments.reduce(0) { $0 + $1.seconds } }

    @Test func addedSessionsAreOneSegmentAndEditsKeepTheSum() throws {
        try withTimeZone("UTC") {
            let d = try InProcessDaemon()
            defer { d.stop() }
            try d.addSession("Work", "2025-05-01 09:00", "2025-05-01 09:25")
            let added = try #require(try d.call("history")["sessions"]?.arrayValue?.first?["id"]?.intValue)
            let start = localTime(2025, 5, 1, 9, 0)
            #expect(try stored(d, added).segments == [FocusSegment(start: start, seconds: 1500)])

            // A session the timer recorded with a pause: 10 min, 5 min paused, 15 min.
            let paused = localTime(2025, 5, 2, 9, 0)
            let work = try d.daemon.queue.sync { Result { () throws(DiligenceError) in try d.daemon.store.findTask("Work") } }.get()
            let session = WorkSession(
                taskID: work.id, taskName: "Work", start: paused, end: paused + 1800, plannedSeconds: 1500, focusedSeconds: 1500,
                pauses: 1, outcome: .completed,
                segments: [FocusSegment(start: paused, seconds: 600), FocusSegment(start: paused + 900, seconds: 900)])
            let admission = try d.daemon.queue.sync {
                Result { () throws(DiligenceError) in
                    try d.daemon.store.admit([session], source: .timer, window: 0...1e12, mode: .whatPasses)
                }
            }.get()
            let id = try #require(admission.recorded[0])
            func edit(_ changes: [(String, JSON)]) throws -> WorkSession {
                _ = try d.call("history_edit", [("id", .int(id))] + changes)
                let edited = try stored(d, id)
                #expect(sum(edited) == edited.focusedSeconds, "\(edited.segments)")
                return edited
            }
            // Moved as a whole: the segments move with it.
            let moved = try edit([("start", .string("2025-05-02 10:00")), ("end", .string("2025-05-02 10:30"))])
            #expect(moved.segments == [FocusSegment(start: paused + 3600, seconds: 600), FocusSegment(start: paused + 4500, seconds: 900)])
            // The end brought in: the last segment is cut to it, and the focus the session keeps
            // (its length, at most) fills the pause before.
            let cut = try edit([("end", .string("2025-05-02 10:20"))])
            #expect(cut.focusedSeconds == 1200)
            #expect(cut.segments == [FocusSegment(start: paused + 3600, seconds: 900), FocusSegment(start: paused + 4500, seconds: 300)])
            // A later start: the first segment is clipped.
            let later = try edit([("start", .string("2025-05-02 10:05"))])
            #expect(later.focusedSeconds == 900)
            #expect(later.segments == [FocusSegment(start: paused + 3900, seconds: 600), FocusSegment(start: paused + 4500, seconds: 300)])
            // A note changes no segment.
            #expect(try edit([("note", .string("n"))]).segments == later.segments)
        }
    }
}
