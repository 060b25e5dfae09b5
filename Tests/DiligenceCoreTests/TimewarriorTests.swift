import DiligenceTestSupport
import Testing

@testable import DiligenceCore

/// The Timewarrior mirror's rules (issue 31): a session is its segments as intervals tagged
/// with its task and `diligence:<uuid>`; a plan touches only the intervals of the sessions it
/// reconciles, and never one without a `diligence:` tag.
@Suite("Timewarrior mirror rules")
struct TimewarriorTests {
    static let uuid = "5b1e0c8e-2d3f-4a6b-9c7d-0e1f2a3b4c5d"

    static func session(_ segments: [FocusSegment], task: String = "Study", uuid: String = uuid) -> WorkSession {
        WorkSession(
            taskID: 1, taskName: task, start: segments.first?.start ?? 0, end: segments.last?.end ?? 0, plannedSeconds: 1500,
            focusedSeconds: segments.reduce(0) { $0 + $1.seconds }, pauses: max(0, segments.count - 1), outcome: .completed,
            uuid: uuid, segments: segments)
    }

    @Test("each segment is one interval: start rounded, its whole seconds kept, tagged task, diligence:<uuid>, extras")
    func intervalsOfASession() {
        // 2026-12-01T09:00:00.4Z for 600 s, then 09:15:00.6Z for 900 s.
        let s = Self.session([FocusSegment(start: 1_796_115_600.4, seconds: 600), FocusSegment(start: 1_796_116_500.6, seconds: 900)])
        let intervals = Timewarrior.intervals(of: s, tags: ["pomodoro", "Study"])
        #expect(intervals.map(\.start) == [1_796_115_600, 1_796_116_501])
        #expect(intervals.map { ($0.end ?? 0) - $0.start } == [600, 900])
        #expect(intervals.allSatisfy { $0.tags == ["Study", "diligence:\(Self.uuid)", "pomodoro"] })
        #expect(intervals[0].trackArguments.prefix(3) == ["20261201T090000Z", "-", "20261201T091000Z"])
        #expect(intervals[0].sessionUUID == Self.uuid)
    }

    @Test("timew export's JSON is read with every member checked; anything else is an error that names it")
    func exportIsChecked() throws {
        let text = """
            [
            {"id":2,"start":"20261201T090000Z","end":"20261201T092500Z","tags":["Study","diligence:x"]},
            {"id":1,"start":"20261201T093000Z"}
            ]
            """
        let intervals = try Timewarrior.parseExport(text)
        #expect(intervals.count == 2)
        #expect(intervals[0] == TimewarriorInterval(id: 2, start: 1_796_115_600, end: 1_796_117_100, tags: ["Study", "diligence:x"]))
        #expect(intervals[1].end == nil && intervals[1].tags.isEmpty && intervals[1].sessionUUID == nil)
        for bad in [
            "Create new database in /x? (yes/no)", "{}", #"[{"start":"20261201T090000Z"}]"#, #"[{"id":1,"start":"2026-12-01"}]"#,
            #"[{"id":1,"start":"20261301T090000Z"}]"#, #"[{"id":1,"start":"20261201T090000Z","tags":"a"}]"#,
            #"[{"id":1,"start":"20261201T090000Z","end":5}]"#,
        ] {
            #expect(throws: DiligenceError.self, "\(bad)") { try Timewarrior.parseExport(bad) }
        }
    }

    @Test("a plan rewrites exactly a changed session's intervals, leaves equal ones, and never touches the user's own")
    func planTouchesOnlyTheMirrorsIntervals() {
        let tag = "diligence:\(Self.uuid)"
        let mine = TimewarriorInterval(id: 1, start: 100, end: 200, tags: ["mine"])
        let kept = TimewarriorInterval(id: 2, start: 1000, end: 1600, tags: ["Study", tag])
        let stale = TimewarriorInterval(id: 3, start: 2000, end: 2900, tags: [tag, "Study"])
        let other = TimewarriorInterval(id: 4, start: 5000, end: 5100, tags: ["Old", "diligence:gone"])
        let wanted = [
            Self.uuid: [
                TimewarriorInterval(start: 1000, end: 1600, tags: ["Study", tag]),
                TimewarriorInterval(start: 2000, end: 2800, tags: ["Study", tag]),
            ]
        ]
        let existing = [mine, kept, stale, other]
        let one = Timewarrior.plan(wanted: wanted, existing: existing, scope: [Self.uuid])
        #expect(one.delete == [stale])
        #expect(one.track.map(\.start) == [2000] && one.track.first?.end == 2800)
        // The whole history: the interval of a session that is gone goes too; the user's stays.
        let whole = Timewarrior.plan(wanted: wanted, existing: existing, scope: nil)
        #expect(whole.delete == [stale, other])
        #expect(!whole.delete.contains(mine))
        // Once applied, nothing is left to do.
        let after = [mine, kept] + one.track
        let again = Timewarrior.plan(wanted: wanted, existing: after, scope: nil)
        #expect(again.delete.isEmpty && again.track.isEmpty)
        // A removed session: all its intervals go, no other.
        let removed = Timewarrior.plan(wanted: [:], existing: existing, scope: [Self.uuid])
        #expect(removed.delete == [kept, stale] && removed.track.isEmpty)
    }

    @Test("[timewarrior] enabled, data, tags; a mistyped key gets a suggestion")
    func configSection() throws {
        let config = try DaemonConfig.parse("[timewarrior]\nenabled = yes\ndata = ~/tw\ntags = pomodoro \"deep work\"\n")
        #expect(config.timewarrior.enabled && config.timewarrior.data == "~/tw")
        #expect(config.timewarrior.tags == ["pomodoro", "deep work"])
        #expect(DaemonConfig().timewarrior == TimewarriorSettings())
        #expect(throws: DiligenceError.self) { try DaemonConfig.parse("[timewarrior]\ndata = relative\n") }
        #expect(throws: DiligenceError.self) { try DaemonConfig.parse("[timewarrior]\ntags = diligence:x\n") }
        do {
            _ = try DaemonConfig.parse("[timewarrior]\nenable = yes\n")
            Issue.record("a mistyped key was taken")
        } catch {
            #expect(error.message.contains("Did you mean enabled?") || error.message.contains("enabled"), "\(error.message)")
        }
    }
}
