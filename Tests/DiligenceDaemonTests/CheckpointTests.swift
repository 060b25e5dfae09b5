import DiligenceCore
import DiligenceStore
import Testing

@testable import DiligenceDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's WAL checkpoints run on its queue after the work item whose commits filled the
/// log, not inside a commit (a phase end's commit must not wait for one: docs/reliability.md).
@Test func theDaemonCheckpointsTheLogAfterTheWorkItemThatFilledIt() throws {
    let d = try InProcessDaemon()
    defer { d.stop() }
    let database = d.daemon.paths.database
    func size() -> Int64 { Sys.fileStatus(database).map { Int64($0.st_size) } ?? -1 }
    let before = size()
    let during = try d.daemon.queue.sync {
        Result { () throws(DiligenceError) -> Int64 in
            let store = d.daemon.store
            let work = try store.findTask("Work")
            // One commit each, a handful of WAL pages each: past the 1 000-page threshold.
            for i in 0..<400 {
                let start = 1_700_000_000 + Double(i) * 3600
                let session = WorkSession(
                    taskID: work.id, taskName: work.name, start: start, end: start + 1500,
                    plannedSeconds: 1500, focusedSeconds: 1500, pauses: 0, outcome: .completed)
                _ = try store.admit([session], source: .timer, window: 0...2e9, mode: .whatPasses)
            }
            return size()
        }
    }.get()
    #expect(during == before, "a commit copied the log into the database itself")
    d.daemon.queue.sync {} // the checkpoint the commits scheduled has run
    #expect(size() > before)
}
