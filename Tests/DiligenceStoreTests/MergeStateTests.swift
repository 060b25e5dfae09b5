import DiligenceCore
import DiligenceSync
import DiligenceTestSupport
import Testing

@testable import DiligenceStore

// What the merge of the sync journals reached, kept in the database (docs/sync.md, "Merging").

@Test func mergeStateIsKeptAcrossReopeningForItsFolderOnly() throws {
    let dir = TemporaryDirectory()
    defer { dir.remove() }
    // A checksum with its top bit set: SQLite's INTEGER is signed.
    let cursor = JournalCursor(offset: 8123, line: 42, tail: 0xF000_0000_0000_0001)
    do {
        let store = try Store(location: .path(dir.database))
        try store.transaction { () throws(DiligenceError) in
            try store.saveMergeState(folder: "/sync", cursors: ["dev-b": cursor], registers: ["session x": "line 1", "birth y": "line 2"])
        }
        try store.transaction { () throws(DiligenceError) in
            try store.saveMergeState(folder: "/sync", cursors: [:], registers: ["session x": "line 3"])
        }
    }
    let store = try Store(location: .path(dir.database))
    let kept = try store.mergeState(folder: "/sync")
    #expect(kept.cursors == ["dev-b": cursor])
    #expect(kept.lines.sorted() == ["line 2", "line 3"], "one line per register, the latest saved")
    #expect(try store.mergeState(folder: "/elsewhere").lines.isEmpty, "what was read in another folder is not this folder's")
    // Saving for another folder drops what the first one reached.
    try store.saveMergeState(folder: "/elsewhere", cursors: [:], registers: ["plan 2026-12-01": "line 4"])
    #expect(try store.mergeState(folder: "/sync").lines.isEmpty)
    #expect(try store.mergeState(folder: "/elsewhere").lines == ["line 4"])
    try store.forgetMergeState()
    let forgotten = try store.mergeState(folder: "/elsewhere")
    #expect(forgotten.lines.isEmpty && forgotten.cursors.isEmpty)
}
