import DiligenceCore
import DiligenceJSON
import DiligenceTime
import Testing

@testable import DiligenceStore

@Suite struct StatsStoreTests {
    func store() throws -> Store { try Store(location: .memory) }

    @Test func rangeScanIncludesSessionsThatBeganBeforeIt() throws {
        let s = try store()
        let work = try s.findTask("Work")
        _ = try s.record(session(work, start: 10_000 - 600)) // reaches into the range
        _ = try s.record(session(work, start: 12_000))
        _ = try s.record(session(work, start: 5_000)) // ended before the range
        _ = try s.record(session(work, start: 20_000)) // after it
        var seen: [Double] = []
        try s.forEachSession(from: 10_000, to: 20_000) { _, start, _, focused, _, completed in
            seen.append(start)
            #expect(focused == 1500 && completed)
        }
        #expect(seen == [9_400, 12_000])
        var other = 0
        try s.forEachSession(from: 0, to: 30_000, taskID: try s.findTask("Study").id) { _, _, _, _, _, _ in other += 1 }
        #expect(other == 0)
        #expect(try s.firstSessionStart() == 5_000)
        #expect(try s.firstSessionStart(taskID: try s.findTask("Study").id) == nil)
    }

    /// A previous period's totals (summed in SQL) count time two devices' sessions share once,
    /// as reports do (`SharedTime`, docs/statistics.md).
    @Test func totalsCountTimeTwoDevicesShareOnce() throws {
        let s = try store()
        _ = try s.record(session(try s.findTask("Work"), start: 36_000)) // 10:00–10:25 here
        // 10:10–10:40 on another device, merged from its journal.
        var there = session(try s.findTask("Study"), start: 36_600, length: 1800)
        there.device = "0c4a2d5e-3f4b-4c6d-8e9f-0a1b2c3d4e5f"
        let admitted = try s.admit([there], source: .sync, window: 0...4e9, mode: .whatPasses)
        #expect(admitted.recorded.count == 1)
        #expect(try s.totals(from: 0, to: 86_400) == Tally(completed: 2, focusedSeconds: 2_400))
        // A period that begins inside the shared time: the part of each inside it, counted once.
        #expect(try s.totals(from: 37_200, to: 86_400) == Tally(completed: 2, focusedSeconds: 1_200))
    }

    /// Time away during two devices' overlapping sessions counts as their focus does
    /// (`SharedTime`, docs/statistics.md): a later session keeps its time away in proportion to
    /// its time past the earlier one's end.
    @Test func awayTimeOfTwoDevicesCountsSharedTimeOnce() throws {
        let s = try store()
        var here = session(try s.findTask("Work"), start: 36_000) // 10:00–10:25, 5 minutes away
        here.awaySeconds = 300
        _ = try s.record(here)
        var there = session(try s.findTask("Study"), start: 36_600, length: 1800) // 10:10–10:40 on another device
        there.awaySeconds = 600 // 10 minutes away: half of its time is its own, so 5 count
        there.device = "0c4a2d5e-3f4b-4c6d-8e9f-0a1b2c3d4e5f"
        let admitted = try s.admit([there], source: .sync, window: 0...4e9, mode: .whatPasses)
        #expect(admitted.recorded.count == 1)
        #expect(try s.awaySeconds(from: 0, to: 86_400) == 600)
        // Only the later session began in the period; the earlier one still covers its start.
        #expect(try s.awaySeconds(from: 36_300, to: 86_400) == 300)
        // One device's sessions alone, and one task's, are not compared with the others'.
        #expect(try s.awaySeconds(from: 0, to: 86_400, device: .this) == 300)
        #expect(try s.awaySeconds(from: 0, to: 86_400, taskID: try s.findTask("Study").id) == 600)
    }

    /// Time away is kept between asks (`rangeMemo`): a session recorded, or another device's
    /// merged in, changes the next answer all the same.
    @Test func awayTimeAskedAgainFollowsEveryWrite() throws {
        let s = try store()
        var here = session(try s.findTask("Work"), start: 36_000)
        here.awaySeconds = 300
        _ = try s.record(here)
        #expect(try s.awaySeconds(from: 0, to: 86_400) == 300)
        #expect(try s.awaySeconds(from: 0, to: 86_400) == 300)
        var later = session(try s.findTask("Work"), start: 40_000)
        later.awaySeconds = 120
        _ = try s.record(later)
        #expect(try s.awaySeconds(from: 0, to: 86_400) == 420)
        #expect(try s.totals(from: 0, to: 86_400) == Tally(completed: 2, focusedSeconds: 3_000))
        var there = session(try s.findTask("Study"), start: 36_600, length: 1800)
        there.awaySeconds = 600
        there.device = "0c4a2d5e-3f4b-4c6d-8e9f-0a1b2c3d4e5f"
        #expect(try s.admit([there], source: .sync, window: 0...4e9, mode: .whatPasses).recorded.count == 1)
        #expect(try s.awaySeconds(from: 0, to: 86_400) == 720)
        #expect(try s.totals(from: 0, to: 86_400) == Tally(completed: 3, focusedSeconds: 3_900))
    }

    @Test func correctionsChangeAndRemoveSessions() throws {
        let s = try store()
        let work = try s.findTask("Work")
        let study = try s.findTask("Study")
        let recorded = try s.record(session(work, start: 1_000))
        func moved(_ id: Int64, to taskID: Int64) throws(DiligenceError) -> WorkSession {
            var edited = recorded
            edited.taskID = taskID
            return try s.replaceSession(id: id, with: edited, window: 0...4e9, reserved: nil)
        }
        let changed = try moved(recorded.id, to: study.id)
        #expect(changed.taskName == "Study" && changed.id == recorded.id && changed.uuid == recorded.uuid)
        #expect(error { () throws(DiligenceError) in try moved(999, to: study.id) }?.code.rawValue == "unknown_session")
        #expect(error { () throws(DiligenceError) in try moved(recorded.id, to: 999) }?.code.rawValue == "unknown_task")
        #expect(try s.session(id: recorded.id).taskName == "Study", "a refused edit changes nothing")
        // Onto another recorded session: refused, and the session is still there as it was.
        let other = try s.record(session(work, start: 5_000))
        var overlapping = other
        overlapping.start = 1_100
        #expect(
            error { () throws(DiligenceError) in try s.replaceSession(id: other.id, with: overlapping, window: 0...4e9, reserved: nil) }?
                .code.rawValue == "overlapping_session")
        #expect(try s.session(id: other.id).start == 5_000)
        #expect(try s.removeSession(id: recorded.id).id == recorded.id)
        #expect(error { () throws(DiligenceError) in try s.session(id: recorded.id) }?.code.rawValue == "unknown_session")
    }

    @Test func historyLimitKeepsTheMostRecent() throws {
        let s = try store()
        let work = try s.findTask("Work")
        for i in 0..<5 { _ = try s.record(session(work, start: Double(i) * 10_000)) }
        let recent = try s.history(limit: 2)
        #expect(recent.map(\.start) == [30_000, 40_000])
        #expect(try s.history(from: 10_000, to: 30_000, limit: 10).map(\.start) == [10_000, 20_000])
    }

    /// A window around the fixtures' times (1970 + a few hours); the real one starts in 1990.
    static let window: ClosedRange<Double> = -1e6...1e9

    func staged(_ sessions: [WorkSession], from line: Int = 1) -> [(line: Int, session: WorkSession)] {
        sessions.enumerated().map { (line + $0.offset, $0.element) }
    }

    @Test func importIsStagedAndCommittedAtOnce() throws {
        let s = try store()
        let work = try s.findTask("Work")
        let id = s.beginImport()
        try s.stageImport(id, sessions: staged([session(work, start: 1_000)]), rejected: [], lines: 2)
        #expect(try s.sessions().isEmpty, "nothing visible before the last chunk")
        #expect(try s.importNextLine(id) == 3)
        try s.stageImport(id, sessions: staged([session(work, start: 5_000)], from: 3), rejected: [], lines: 1)
        let result = try s.commitImport(id, window: Self.window, reserved: nil)
        #expect(result.imported == 2 && result.skipped == 0)
        #expect(try s.sessions().count == 2)
        #expect(try s.connection.query("SELECT DISTINCT source FROM sessions").map { $0.string(0) } == ["import"])
        #expect(
            error { () throws(DiligenceError) in try s.importNextLine(id) }?.code.rawValue == "unknown_import",
            "a finished import takes no more chunks")

        // The same sessions again (start within a second): skipped, not errors.
        let again = s.beginImport()
        try s.stageImport(again, sessions: staged([session(work, start: 1_000.4), session(work, start: 9_000)]), rejected: [], lines: 2)
        let second = try s.commitImport(again, window: Self.window, reserved: nil)
        #expect(second.imported == 1 && second.skipped == 1)
    }

    @Test func anImportWithARefusedLineWritesNothingAndNamesEveryLine() throws {
        let s = try store()
        let work = try s.findTask("Work")
        let study = try s.findTask("Study")
        let id = s.beginImport()
        let lines: [WorkSession] = [
            session(work, start: 1_000), // 1: fine
            session(study, start: 1_600), // 2: overlaps line 1
            session(work, start: 10_000, length: 48 * 3600), // 3: 48 hours
            session(work, start: 400_000, focused: 86_400), // 4: focused longer than the session
            session(work, start: 500_000, length: 0), // 5: no length
            session(work, start: 600_000), // 6: fine
        ]
        try s.stageImport(id, sessions: staged(lines), rejected: [(7, "not JSON")], lines: 7)
        let failure = error { () throws(DiligenceError) in try s.commitImport(id, window: Self.window, reserved: nil) }
        #expect(failure?.code.rawValue == "invalid_import")
        let message = failure?.message ?? ""
        #expect(message.hasPrefix("5 lines of the import are refused; nothing was imported."), "\(message)")
        for expected in [
            "line 2: ", "overlaps another of the same batch", "line 3: ", "lasts 48h", "line 4: ", "focused time (24h) is longer",
            "line 5: ", "lasts no time", "line 7: not JSON",
        ] {
            #expect(message.contains(expected), "\(expected) in \(message)")
        }
        #expect(!message.contains("line 1:") && !message.contains("line 6:"))
        #expect(try s.sessions().isEmpty)
    }

    @Test func discardedImportWritesNothing() throws {
        let s = try store()
        let work = try s.findTask("Work")
        let id = s.beginImport()
        try s.stageImport(id, sessions: staged([session(work, start: 1_000)]), rejected: [], lines: 1)
        _ = s.beginImport() // a new import replaces the unfinished one
        #expect(
            error { () throws(DiligenceError) in try s.stageImport(id, sessions: [], rejected: [], lines: 1) }?.code.rawValue
                == "unknown_import")
        s.discardImport()
        #expect(try s.sessions().isEmpty)
    }

    // MARK: The one door

    @Test func theDoorWritesWhatPassesAndSaysWhyTheRestDoesNot() throws {
        let s = try store()
        let work = try s.findTask("Work")
        let study = try s.findTask("Study")
        let recorded = try s.record(session(work, start: 1_000))
        let batch = [
            session(work, start: 1_000.5), // 0: the recorded one again
            session(study, start: 2_000), // 1: overlaps it
            session(work, start: 5_000), // 2: fine
            session(work, start: 5_000), // 3: the same as 2
            session(study, start: 5_100), // 4: overlaps 2
            session(work, start: 2e9), // 5: past the window
            WorkSession(
                taskID: 999, taskName: "Gone", start: 9_000, end: 9_100, plannedSeconds: 100, focusedSeconds: 100, pauses: 0,
                outcome: .completed),
        ]
        let admission = try s.admit(batch, source: .timer, window: Self.window, mode: .whatPasses)
        #expect(admission.alreadyRecorded[0] == recorded.id)
        #expect(admission.recorded.keys.sorted() == [2])
        #expect(admission.alreadyRecorded[3] == admission.recorded[2])
        #expect(admission.refused.map(\.index) == [1, 4, 5, 6])
        #expect(
            admission.refused.map(\.error.code.rawValue) == [
                "overlapping_session", "overlapping_session", "invalid_session", "unknown_task",
            ])
        #expect(admission.refused[0].error.message.contains("session \(recorded.id) (Work"), "\(admission.refused[0].error.message)")
        #expect(try s.sessions().count == 2)
    }

    @Test func allOrNothingWritesNothingWhenOneIsRefused() throws {
        let s = try store()
        let work = try s.findTask("Work")
        let admission = try s.admit(
            [session(work, start: 1_000), session(work, start: 1_100)], source: .manual, window: Self.window, mode: .allOrNothing)
        #expect(admission.refused.map(\.index) == [1])
        #expect(admission.recorded.isEmpty)
        #expect(try s.sessions().isEmpty)
    }

    @Test func theRunningPhaseIsReserved() throws {
        let s = try store()
        let work = try s.findTask("Work")
        let admission = try s.admit(
            [session(work, start: 1_000)], source: .manual, window: Self.window,
            reserved: (start: 2_000, end: 2_100, task: "Study"), mode: .allOrNothing)
        #expect(admission.refused.first?.error.message.contains("running work phase of Study") == true)
    }

    @Test func recordedSessionsThatOverlapEachOtherAreStillFound() throws {
        // An older version let these in: a long one, then a short one inside it.
        let s = try store()
        let work = try s.findTask("Work")
        let long = try s.record(session(work, start: 1_000, length: 20_000))
        _ = try s.record(session(work, start: 2_000, length: 100))
        let admission = try s.admit([session(work, start: 10_000)], source: .manual, window: Self.window, mode: .allOrNothing)
        #expect(admission.refused.first?.error.message.contains("session \(long.id)") == true)
    }

    @Test func plansAndTaskRemoval() throws {
        let s = try store()
        let extra = try s.addTask(TaskConfig(name: "Extra"))
        let day = CalendarDay("2026-06-10")!
        try s.setPlan(day: day, taskID: extra.id)
        try s.setPlan(day: day.adding(days: 1), taskID: extra.id)
        try s.setPlan(day: day.adding(days: 1), taskID: try s.findTask("Work").id) // replaces
        _ = try s.record(session(extra, start: 1_000))
        #expect(try s.plans(from: day, through: day.adding(days: 6)).count == 2)
        #expect(try s.clearPlan(day: day.adding(days: 1)))
        #expect(try s.clearPlan(day: day.adding(days: 1)) == false)
        #expect(try s.removeTask(id: extra.id) == 1)
        #expect(try s.plans(from: day, through: day).isEmpty, "the plan went with the task")
        var left = 0
        try s.forEachSession(from: 0, to: 100_000) { _, _, _, _, _, _ in left += 1 }
        #expect(left == 0, "and its sessions")
    }
}
