import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import DiligenceTime
import Dispatch
import Testing

@testable import DiligenceDaemon
@testable import DiligenceStore

/// `history` with `"stream": true` (issue 28): a line per session as it is read, then one
/// answer; read off the daemon's queue, so a long history to a slow reader holds nothing up.
@Suite struct HistoryStreamTests {
    /// `count` sessions of Work, half an hour apart from 2017-07-14, written in one transaction.
    static func fill(_ d: InProcessDaemon, _ count: Int) throws {
        try d.daemon.queue.sync {
            Result { () throws(DiligenceError) in
                let store = d.daemon.store
                let work = try store.findTask("Work")
                let sessions = (0..<count).map { i in
                    let start = 1_500_000_000 + Double(i) * 1800
                    return WorkSession(
                        taskID: work.id, taskName: work.name, start: start, end: start + 1500,
                        plannedSeconds: 1500, focusedSeconds: 1500, pauses: 0, outcome: .completed)
                }
                _ = try store.admit(sessions, source: .timer, window: 0...2e9, mode: .whatPasses)
            }
        }.get()
    }

    /// The lines of a streamed answer up to and including its last one (the one with `ok`).
    static func streamed(_ connection: ControlConnection) throws -> (sessions: [JSON], end: JSON) {
        var sessions: [JSON] = []
        while true {
            let line = try connection.readJSONLine()
            if line["ok"] != nil { return (sessions, line) }
            sessions.append(line)
        }
    }

    @Test func aStreamedHistoryIsTheOneAnswersSessionsALineEach() throws {
        try withTimeZone("UTC") {
            let d = try InProcessDaemon()
            defer { d.stop() }
            let count = StatsService.exportPage * 2 + 7
            try Self.fill(d, count)
            let whole = try d.call("history")["sessions"]?.arrayValue ?? []
            #expect(whole.count == count)
            let connection = try d.connect()
            // A request pipelined after the stream is answered after its last line.
            try connection.write(
                #"{"command":"history","stream":true,"id":"s"}"# + "\n" + #"{"command":"status","id":2}"# + "\n")
            let (lines, end) = try Self.streamed(connection)
            #expect(lines.map { $0["session"]?.serialized ?? "?" } == whole.map(\.serialized), "every session once, in order")
            #expect(lines.allSatisfy { $0["id"]?.stringValue == "s" && $0.serialized.hasPrefix(#"{"session":{"#) })
            #expect(end.serialized == #"{"ok":true,"result":{"count":\#(count)},"id":"s"}"#)
            #expect(try connection.readJSONLine()["id"]?.intValue == 2)
            // The filters and the limit are history's own: the newest N, oldest first.
            for (fields, expected) in [
                (#","limit":5"#, Array(whole.suffix(5))), (#","limit":1000000"#, whole), (#","task":"Study""#, []),
                (#","since":"2017-09-01","limit":3"#, Array(whole.filter { ($0["start"]?.stringValue ?? "") >= "2017-09-01" }.suffix(3))),
            ] {
                try connection.write(#"{"command":"history","stream":true\#(fields)}"# + "\n")
                let (some, last) = try Self.streamed(connection)
                #expect(some.map { $0["session"]?.serialized ?? "?" } == expected.map(\.serialized), "\(fields)")
                #expect(last["result"]?["count"]?.intValue == Int64(expected.count), "\(fields): \(last.serialized)")
            }
            // A refusal is the one answer, as without stream.
            try connection.write(#"{"command":"history","stream":true,"task":"Nope"}"# + "\n")
            #expect(try connection.readJSONLine()["error"]?["code"]?.stringValue == "unknown_task")
        }
    }

    /// A client that stops reading a streamed history of 100 000 sessions: meanwhile the
    /// daemon's queue runs (timers, other clients' status and writes), and what it keeps queued
    /// for that client stays bounded; once the client reads on, it gets every session.
    @Test func aSlowReaderOfALongHistoryHoldsNothingUp() throws {
        try withTimeZone("UTC") {
            let d = try InProcessDaemon()
            defer { d.stop() }
            let count = 100_000
            try Self.fill(d, count)
            let slow = try d.connect()
            try slow.write(#"{"command":"history","stream":true}"# + "\n")
            #expect(try slow.readJSONLine()["session"]?["id"] != nil)
            // The queue is free: a timer on it fires, status and a write on another client answer.
            let fired = DispatchSemaphore(value: 0)
            d.daemon.queue.asyncAfter(deadline: .now() + 0.05) { fired.signal() }
            #expect(fired.wait(timeout: .now() + 10) == .success, "a timer on the daemon's queue waited for the stream")
            #expect(try d.call("status")["state"]?.stringValue == "idle")
            try d.addSession("Study", "2025-05-01 09:00", "2025-05-01 09:25")
            let queued = d.daemon.queue.sync { d.daemon.server.connections.values.map(\.pendingOutput).max() ?? 0 }
            #expect(queued <= 4 << 20, "\(queued) bytes queued for a reader that reads nothing")
            let (rest, end) = try Self.streamed(slow)
            #expect(rest.count == count - 1 && end["result"]?["count"]?.intValue == Int64(count), "\(end.serialized)")
        }
    }

    /// The daemon stops while a long history streams to a client that reads it as fast as it
    /// comes: the stream gives up and `stop` returns (the stream's queue once waited for room
    /// that only the stopped daemon's queue could make, and the daemon hung at SIGTERM).
    @Test func theDaemonStopsWhileAHistoryStreams() throws {
        try withTimeZone("UTC") {
            let d = try InProcessDaemon()
            var (stopping, stopped) = (false, false)
            // A stop that hung cannot be stopped again: its files are removed at least.
            defer { if !stopping { d.stop() } else if !stopped { d.directory.remove() } }
            try Self.fill(d, 100_000)
            let reader = try d.connect()
            try reader.write(#"{"command":"history","stream":true}"# + "\n")
            for _ in 0..<5_000 { _ = try reader.readLine() }
            let drained = DispatchSemaphore(value: 0)
            // Reads on, as fast as it comes, until the daemon closes the connection.
            let bound = QueueBound(reader, on: DispatchQueue(label: "reader"))
            bound.queue.async {
                while (try? bound.value.readLine()) != nil {}
                drained.signal()
            }
            let done = DispatchSemaphore(value: 0)
            stopping = true
            let stopper = QueueBound(d, on: DispatchQueue(label: "stopper"))
            stopper.queue.async {
                stopper.value.stop()
                done.signal()
            }
            stopped = done.wait(timeout: .now() + 20) == .success
            #expect(stopped, "stop() waited for the stream")
            #expect(drained.wait(timeout: .now() + 20) == .success)
        }
    }
}
