import DiligenceCore
import DiligenceSync
import DiligenceTestSupport

/// Ids for tests: a UUID made of `n`, so the order of ids is the order of `n`.
func uuid(_ n: Int, _ kind: Character = "0") -> String {
    let digits = String(n, radix: 16)
    let body = String(repeating: kind, count: 12 - digits.count) + digits
    return "00000000-0000-4000-8000-\(body)"
}

let deviceA = uuid(0xA, "a")
let deviceB = uuid(0xB, "b")
let deviceC = uuid(0xC, "c")

func session(_ id: String, task: String, device: String, start: Double, minutes: Int = 25, outcome: Outcome = .completed) -> SyncedSession {
    SyncedSession(
        id: id, task: task, device: device, start: start, end: start + Double(minutes * 60), plannedSeconds: minutes * 60,
        focusedSeconds: minutes * 60, pauses: 0, outcome: outcome)
}

func task(_ id: String, _ name: String, goal: Int = 0) -> SyncedTask {
    SyncedTask(id: id, config: TaskConfig(name: name, goal: goal))
}

func entry(_ device: String, _ millis: Int64, _ counter: Int64 = 0, _ change: JournalChange) -> JournalEntry {
    JournalEntry(device: device, hlc: HLC(millis: millis, counter: counter), change: change)
}

func history(_ entries: [JournalEntry]) -> History {
    var h = History()
    for e in entries { h.apply(e) }
    return h
}
