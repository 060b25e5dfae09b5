import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import DiligenceTime
import Testing

@testable import DiligenceDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// `status` answers from a kept encoding while nothing it shows changed: after each kind of
/// change (timer, presence, note, task, config, history) the answer is the one built afresh.
@Suite struct StatusAnswerTests {
    @Test func statusIsFreshAfterEveryKindOfChange() throws {
        let clock = FakeClock()
        let d = try InProcessDaemon(clocks: clock.clocks)
        defer { d.stop() }
        func fresh() -> JSON { d.daemon.queue.sync { d.daemon.statusJSON(at: d.daemon.clocks.now) } }
        func check(_ change: String) throws {
            let answered = try d.status()
            #expect(answered == fresh(), "after \(change)")
            #expect(try d.status() == answered, "asked again after \(change)")
        }
        try check("nothing")
        try d.call("start", [("task", .string("Work"))])
        try check("start")
        clock.advance(61)
        try check("a minute passing")
        try d.call("note", [("text", .string("drafting"))])
        try check("note")
        try d.call("away")
        try check("away")
        try d.call("back")
        try check("back")
        try d.call("pause")
        try check("pause")
        try d.call("task_edit", [("task", .string("Work")), ("new_name", .string("Writing"))])
        try check("a rename of the running task")
        try d.call("stop")
        try check("stop")
        let wall = d.daemon.clocks.wall
        try d.addSession("Writing", RFC3339.format(wall - 1800), RFC3339.format(wall - 300))
        try check("a session added today")
        let fd = open(d.daemon.paths.config, O_WRONLY | O_TRUNC)
        _ = "[timer]\nno_such_setting = 1\n".withCString { write(fd, $0, strlen($0)) }
        close(fd)
        _ = try d.request("{\"command\":\"reload\"}")
        try check("a refused config file")
        #expect(try d.status()["config_problems"]?.arrayValue?.isEmpty == false)
    }

    @Test func anEncodedResultMakesTheSameLine() {
        let result = JSON.object([("state", .string("idle")), ("n", .int(3)), ("a", .array([.null, .bool(true)]))])
        for id in [nil, JSON.int(7), .string("x\"y")] {
            #expect(Response.ok(serialized: result.serialized, id: id) == Response.ok(result, id: id))
        }
    }
}
