import DiligenceCore
import DiligenceTestSupport
import Testing

@testable import DiligenceStore

/// Schema 10: a task's own do not disturb (`task edit --dnd`).
@Suite("Store: a task's do not disturb")
struct FocusStoreTests {
    @Test func aTasksDoNotDisturbIsStoredAndCleared() throws {
        let s = try Store(location: .memory)
        var work = try s.findTask("Work")
        #expect(work.doNotDisturb == nil)
        for setting in [true, false, nil] as [Bool?] {
            work.doNotDisturb = setting
            _ = try s.updateTask(work)
            #expect(try s.findTask("Work").doNotDisturb == setting)
        }
        let added = try s.addTask(TaskConfig(name: "Deep", doNotDisturb: true))
        #expect(try s.task(id: added.id)?.doNotDisturb == true)
        #expect(try s.task(id: added.id)?.archived == false)
    }

    @Test func aSchema9DatabaseGainsTheColumn() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let s = try Store(location: .path(dir.database))
            _ = try s.addTask(TaskConfig(name: "Deep", awayPolicy: .continue))
            try s.connection.exec(
                Store.dropSessionNotes
                    + "ALTER TABLE sessions DROP COLUMN segments; " + withoutInterruptions + withoutFlowColumns
                    + " ALTER TABLE tasks DROP COLUMN dnd; PRAGMA user_version = 9;")
        }
        let s = try Store(location: .path(dir.database))
        #expect(try s.connection.query("PRAGMA user_version").first?.int(0) == Store.schemaVersion)
        let deep = try s.findTask("Deep")
        #expect(deep.doNotDisturb == nil && deep.awayPolicy == .continue)
    }
}
