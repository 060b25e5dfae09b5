import Testing
import DiligenceCore
@testable import DiligenceStore
import DiligenceTime

@Suite struct StatsStoreTests {
    func store() throws -> Store { try Store(location: .memory) }

    @Test func rangeScanIncludesSessionsThatBeganBeforeIt() throws {
        let s = try store()
        let work = try s.findTask("Work")
        _ = try s.record(session(work, start: 10_000 - 600))  // reaches into the range
        _ = try s.record(session(work, start: 12_000))
        _ = try s.record(session(work, start: 5_000))  // ended before the range
        _ = try s.record(session(work, start: 20_000))  // after it
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

    @Test func manualSessionsRefuseOverlapNamingTheOtherSession() throws {
        let s = try store()
        let work = try s.findTask("Work")
        let first = try s.record(session(work, start: 1_000))
        let failure = error { () throws(DiligenceError) in try s.addManualSession(session(work, start: 2_000), describe: { "\($0.taskName)" }) }
        #expect(failure?.code == "overlapping_session")
        #expect(failure?.message.contains("session \(first.id) (Work)") == true)
        let added = try s.addManualSession(session(work, start: 2_500), describe: { _ in "" })
        #expect(try s.session(id: added.id).start == 2_500)
        #expect(try s.connection.query("SELECT source FROM sessions WHERE id = ?", [.integer(added.id)]).first?.string(0) == "manual")
    }

    @Test func correctionsChangeAndRemoveSessions() throws {
        let s = try store()
        let work = try s.findTask("Work")
        let study = try s.findTask("Study")
        let recorded = try s.record(session(work, start: 1_000))
        #expect(try s.changeSessionTask(id: recorded.id, taskID: study.id).taskName == "Study")
        #expect(error { () throws(DiligenceError) in try s.changeSessionTask(id: 999, taskID: study.id) }?.code == "unknown_session")
        #expect(error { () throws(DiligenceError) in try s.changeSessionTask(id: recorded.id, taskID: 999) }?.code == "unknown_task")
        #expect(try s.removeSession(id: recorded.id).id == recorded.id)
        #expect(error { () throws(DiligenceError) in try s.session(id: recorded.id) }?.code == "unknown_session")
    }

    @Test func historyLimitKeepsTheMostRecent() throws {
        let s = try store()
        let work = try s.findTask("Work")
        for i in 0..<5 { _ = try s.record(session(work, start: Double(i) * 10_000)) }
        let recent = try s.history(limit: 2)
        #expect(recent.map(\.start) == [30_000, 40_000])
        #expect(try s.history(from: 10_000, to: 30_000, limit: 10).map(\.start) == [10_000, 20_000])
    }

    @Test func importIsStagedAndCommittedAtOnce() throws {
        let s = try store()
        let work = try s.findTask("Work")
        let id = try s.beginImport()
        try s.stageImport(id, sessions: [session(work, start: 1_000)], lines: 2)
        #expect(try s.sessions().isEmpty, "nothing visible before the last chunk")
        #expect(try s.importNextLine(id) == 3)
        try s.stageImport(id, sessions: [session(work, start: 5_000)], lines: 1)
        let result = try s.commitImport(id)
        #expect(result.imported == 2 && result.skipped == 0)
        #expect(try s.sessions().count == 2)
        #expect(error { () throws(DiligenceError) in try s.importNextLine(id) }?.code == "unknown_import", "a finished import takes no more chunks")

        // The same sessions again (start within a second): skipped.
        let again = try s.beginImport()
        try s.stageImport(again, sessions: [session(work, start: 1_000.4), session(work, start: 9_000)], lines: 2)
        let second = try s.commitImport(again)
        #expect(second.imported == 1 && second.skipped == 1)
    }

    @Test func discardedImportWritesNothing() throws {
        let s = try store()
        let work = try s.findTask("Work")
        let id = try s.beginImport()
        try s.stageImport(id, sessions: [session(work, start: 1_000)], lines: 1)
        _ = try s.beginImport()  // a new import replaces the unfinished one
        #expect(error { () throws(DiligenceError) in try s.stageImport(id, sessions: [], lines: 1) }?.code == "unknown_import")
        try s.discardImport()
        #expect(try s.sessions().isEmpty)
    }

    @Test func plansAndTaskRemoval() throws {
        let s = try store()
        let extra = try s.addTask(TaskConfig(name: "Extra"))
        let day = CalendarDay("2026-06-10")!
        try s.setPlan(day: day, taskID: extra.id)
        try s.setPlan(day: day.adding(days: 1), taskID: extra.id)
        try s.setPlan(day: day.adding(days: 1), taskID: try s.findTask("Work").id)  // replaces
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
