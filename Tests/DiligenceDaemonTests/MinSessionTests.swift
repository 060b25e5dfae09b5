import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Testing

@testable import DiligenceDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 13, finding 1: `start Study; stop` recorded a 0-second session. Work stopped or skipped
/// after less focus than `[timer] min_session` (default 60 s) is not recorded, and the watchers
/// are told so (`session_not_recorded`, with the reason) instead of `session_recorded`.
@Suite struct DaemonMinSessionTests {
    /// The events a watcher reads until (and with) the one named `last`.
    func events(_ watcher: ControlConnection, until last: String) throws -> [JSON] {
        var seen: [JSON] = []
        while seen.last?["event"]?.stringValue != last && seen.count < 50 { seen.append(try watcher.readJSONLine()) }
        return seen
    }

    @Test func workStoppedOrSkippedAtOnceIsNotRecordedAndTheEventSaysSo() throws {
        let d = try InProcessDaemon()
        defer { d.stop() }
        let watcher = try d.connect()
        try watcher.write(#"{"command":"watch"}"# + "\n")
        _ = try events(watcher, until: "status")
        _ = try d.call("start", [("task", .string("Study"))])
        _ = try d.call("stop")
        let stopped = try events(watcher, until: "stopped")
        let notRecorded = try #require(stopped.first { $0["event"]?.stringValue == "session_not_recorded" }, "\(stopped.map(\.serialized))")
        #expect(notRecorded["reason"]?.stringValue?.contains("min_session (1m)") == true, "\(notRecorded.serialized)")
        #expect(notRecorded["session"]?["task"]?.stringValue == "Study")
        #expect(!stopped.contains { $0["event"]?.stringValue == "session_recorded" })
        _ = try d.call("start", [("task", .string("Study"))])
        _ = try d.call("skip")
        #expect(try events(watcher, until: "skipped").contains { $0["event"]?.stringValue == "session_not_recorded" })
        #expect(try d.call("history")["sessions"]?.arrayValue?.isEmpty == true)
    }

    @Test("the answer of stop or skip says the work it ended is not recorded, and why")
    func theAnswerSaysSo() throws {
        let d = try InProcessDaemon()
        defer { d.stop() }
        _ = try d.call("start", [("task", .string("Study"))])
        let stopped = try d.call("stop")
        let dropped = try #require(stopped["not_recorded"], "\(stopped.serialized)")
        #expect(dropped["min_session"]?.intValue == 60 && dropped["focused_seconds"]?.intValue == 0, "\(dropped.serialized)")
        #expect(dropped["reason"]?.stringValue?.contains("less than min_session (1m)") == true, "\(dropped.serialized)")
        #expect(stopped["state"]?.stringValue == "idle")
        // A break ended, or nothing ended: the answer is the status alone.
        _ = try d.call("start", [("task", .string("Study"))])
        #expect(try d.call("pause")["not_recorded"] == nil)
    }

    @Test("reload says whether it read a file (an explicit --config that is missing is refused instead)")
    func reloadSaysWhetherItReadAFile() throws {
        let d = try InProcessDaemon()
        defer { d.stop() }
        #expect(try d.call("reload")["file"]?.boolValue == true)
    }

    /// Issue 32, item 19: a strict-focus failure in the first minute is recorded, and the
    /// statistics count it as a session recorded, not completed.
    @Test func aStrictFailureInTheFirstMinuteIsRecordedAndCountedAsAFailure() throws {
        let d = try InProcessDaemon(config: "[presence]\nstrict_grace = 0\n")
        defer { d.stop() }
        _ = try d.call("task_add", [("name", .string("Deep")), ("focus_mode", .bool(true))])
        _ = try d.call("start", [("task", .string("Deep"))])
        usleep(20_000)
        _ = try d.call("away")
        let sessions = try d.call("history")["sessions"]?.arrayValue ?? []
        #expect(sessions.map { $0["outcome"]?.stringValue } == ["abandoned"], "\(sessions.map(\.serialized))")
        #expect(sessions.first?["reason"]?.stringValue == "left")
        let today = try d.call("stats", [("period", .string("day"))])
        #expect(today["recorded"]?.intValue == 1 && today["completed"]?.intValue == 0, "\(today.serialized)")
    }

    @Test func minSessionZeroRecordsEverySession() throws {
        let d = try InProcessDaemon(config: "[timer]\nmin_session = 0\n")
        defer { d.stop() }
        _ = try d.call("start", [("task", .string("Study"))])
        usleep(20_000)
        _ = try d.call("stop")
        #expect(try d.call("history")["sessions"]?.arrayValue?.map { $0["outcome"]?.stringValue } == ["abandoned"])
    }
}
