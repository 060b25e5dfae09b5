import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import DiligenceTime
import Testing

/// An export's line gives its session's focus segments back to an import.
@Suite("Messages: focus segments")
struct SegmentMessagesTests {
    /// 25 minutes of focus in two stretches around a ten-minute pause, on whole seconds.
    static let paused = WorkSession(
        taskID: 1, taskName: "W", start: 1_795_973_400, end: 1_795_975_500, plannedSeconds: 1500, focusedSeconds: 1500,
        pauses: 1, outcome: .completed,
        segments: [FocusSegment(start: 1_795_973_400, seconds: 600), FocusSegment(start: 1_795_974_600, seconds: 900)])

    @Test func anExportedSessionsSegmentsAreReadBack() throws {
        #expect(try WorkSession.exported(Self.paused.json).get().segments == Self.paused.segments)
    }

    @Test func anExportWithoutThemHasOneFromTheStartAndABadListIsRefused() throws {
        guard case .object(var members) = Self.paused.json else { return }
        members.removeAll { $0.0 == "segments" }
        #expect(try WorkSession.exported(.object(members)).get().segments == [FocusSegment(start: 1_795_973_400, seconds: 1500)])
        for bad: JSON in [.int(7), .array([.object([("start", .string("x")), ("seconds", .int(600))])]), .array([.int(1)])] {
            let json = JSON.object(members + [("segments", bad)])
            #expect(errorCode { try WorkSession.exported(json).get() } == "invalid_import", "\(bad.serialized)")
        }
        // Edited by hand to more than the focus: fitted to the session, never more than its focus.
        let long = JSON.array([.object([("start", .string(RFC3339.format(1_795_973_400))), ("seconds", .int(3000))])])
        let fitted = try WorkSession.exported(.object(members + [("segments", long)])).get().segments
        #expect(fitted.reduce(0) { $0 + $1.seconds } == 1500, "\(fitted)")
    }
}
