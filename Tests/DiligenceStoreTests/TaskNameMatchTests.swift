import DiligenceCore
import Testing

@testable import DiligenceStore

/// Task names as people type them: any case, a unique beginning; a mistyped one gets "did you mean".
@Suite struct TaskNameMatchTests {
    func store() throws -> Store {
        let s = try Store(location: .memory)
        for name in ["Reading", "Research", "Writing"] { _ = try s.addTask(TaskConfig(name: name)) }
        return s
    }

    @Test func caseAndAUniqueBeginning() throws {
        let s = try store()
        #expect(try s.findTask("reading").name == "Reading")
        #expect(try s.findTask("wri").name == "Writing")
        #expect(try s.findTask("READI").name == "Reading")
    }

    @Test func anAmbiguousBeginningListsTheCandidates() throws {
        let s = try store()
        let e = error { () throws(DiligenceError) in try s.findTask("re") }
        #expect(e?.code.rawValue == "ambiguous_task")
        #expect(e?.message.contains("\"Reading\"") == true && e?.message.contains("\"Research\"") == true, "\(e?.message ?? "")")
    }

    @Test func aMistypedNameGetsTheClosest() throws {
        let s = try store()
        let e = error { () throws(DiligenceError) in try s.findTask("Wirting") }
        #expect(e?.code.rawValue == "unknown_task")
        #expect(e?.message.contains("Did you mean \"Writing\"?") == true, "\(e?.message ?? "")")
        #expect(error { () throws(DiligenceError) in try s.findTask("zzzz") }?.message.contains("Did you mean") == false)
    }

    /// Where a wrong match would destroy something (task remove), only the whole name counts.
    @Test func wholeNameOnlyWhenAsked() throws {
        let s = try store()
        let e = error { () throws(DiligenceError) in try s.findTask("wri", wholeName: true) }
        #expect(e?.code.rawValue == "unknown_task" && e?.message.contains("\"Writing\"") == true, "\(e?.message ?? "")")
        #expect(try s.findTask("WRITING", wholeName: true).name == "Writing")
    }
}
