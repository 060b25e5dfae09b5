import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EndToEnd {
    @Suite("Protocol over the raw socket: ordering, concurrency, hostile input")
    struct ProtocolSocket {
        /// Reads `count` response lines from `connection` (5 s at most).
        static func readLines(_ connection: ControlConnection, _ count: Int) throws -> [JSON] {
            let box = UncheckedSendable(connection)
            return try withTimeout(5, "\(count) response lines") {
                try (0..<count).map { _ in try box.value.readJSONLine() }
            }
        }

        @Test("several requests on one connection are answered in order, each with its id echoed")
        func pipelinedInOrder() throws {
            let d = try DaemonUnderTest()
            let c = try d.connect()
            // One write holding five requests and a blank line (ignored, no answer).
            try c.write(
                """
                {"command":"status","id":1}
                {"command":"version","id":"two"}

                {"command":"task_list","id":[3,{"x":null}]}
                {"command":"no_such_command","id":4.5}
                {"command":"status"}

                """)
            let answers = try Self.readLines(c, 5)
            let ids: [JSON?] = [.int(1), .string("two"), .array([.int(3), .object([("x", .null)])]), .double(4.5), nil]
            for (answer, id) in zip(answers, ids) {
                #expect(answer["id"] == id, "expected id \(id?.serialized ?? "absent"), got \(answer.serialized)")
            }
            #expect(answers.map { $0.isOK } == [true, true, true, false, true], "\(answers.map(\.serialized))")
            #expect(answers[1].result?["protocol"]?.intValue == 1, "\(answers[1].serialized)")
            #expect(answers[2].result?["tasks"]?.arrayValue?.count == 7, "a fresh database holds 7 tasks: \(answers[2].serialized)")
            #expect(answers[3].errorCode == "unknown_command", "\(answers[3].serialized)")
            #expect(answers[4].result?["state"]?.stringValue == "idle", "\(answers[4].serialized)")
        }

        @Test("20 clients at once, interleaved and concurrent, are all answered")
        func manyClients() throws {
            let d = try DaemonUnderTest()
            // Interleaved: every client sends before any reads.
            let clients = try (0..<20).map { _ in try d.connect() }
            for round in 0..<3 {
                for (i, c) in clients.enumerated() {
                    try c.write(#"{"command":"status","id":"c\#(i)-r\#(round)"}"# + "\n")
                }
            }
            for (i, c) in clients.enumerated() {
                let answers = try Self.readLines(c, 3)
                #expect(
                    answers.map { $0["id"]?.stringValue } == (0..<3).map { "c\(i)-r\($0)" }, "client \(i): \(answers.map(\.serialized))")
                #expect(answers.allSatisfy { $0.isOK }, "client \(i): \(answers.map(\.serialized))")
            }

            // Concurrent: 20 threads, each with its own connection and 10 round trips.
            let path = d.socketPath
            let failures = UncheckedSendable(NSMutableArray())
            let lock = NSLock()
            try withTimeout(20, "20 concurrent clients") {
                DispatchQueue.concurrentPerform(iterations: 20) { i in
                    do {
                        let c = try ControlConnection(path: path)
                        for n in 0..<10 {
                            let answer = try c.send(Request(command: n % 2 == 0 ? "status" : "task_list", id: .int(i * 100 + n)))
                            if !answer.isOK || answer["id"] != .int(i * 100 + n) {
                                lock.withLock { failures.value.add("client \(i) request \(n): \(answer.serialized)") }
                            }
                        }
                    } catch {
                        lock.withLock { failures.value.add("client \(i): \(error)") }
                    }
                }
            }
            #expect(failures.value.count == 0, "\(failures.value)\n\(d.diagnostics)")
            #expect(try d.status()["state"]?.stringValue == "idle")
        }

        @Test("bad input gets its specific error code, and the connection and the daemon keep working")
        func hostileInput() throws {
            let d = try DaemonUnderTest()
            let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
            let cases: [(line: String, code: String, id: JSON?)] = [
                (#"{"command":"#, "invalid_json", nil),
                ("this is not json", "invalid_json", nil),
                ("[1]", "not_an_object", nil),
                (#""status""#, "not_an_object", nil),
                (#"{"id":7}"#, "missing_command", .int(7)),
                (#"{"command":"frobnicate","id":"f"}"#, "unknown_command", .string("f")),
                (#"{"command":"start","task":5,"id":8}"#, "invalid_argument", .int(8)),
                (#"{"command":"task_show"}"#, "missing_argument", nil),
                (#"{"command":"task_show","task":"No such task"}"#, "unknown_task", nil),
                (#"{"command":"start","task":"No such task"}"#, "unknown_task", nil),
                (#"{"command":"task_add","name":"Bad","work":"5x"}"#, "invalid_duration", nil),
                (#"{"command":"task_add","name":"Bad","work":0}"#, "out_of_range", nil),
                (#"{"command":"week","offset":1099511627776}"#, "out_of_range", nil),
                (#"{"command":"task_add","name":"Bad","wrok":30}"#, "invalid_argument", nil),
                (#"{"command":"task_add","name":""}"#, "invalid_name", nil),
                (#"{"command":"task_add","name":" \u200bPadded"}"#, "invalid_name", nil),
                (#"{"command":"task_add","name":"Tab\there"}"#, "invalid_name", nil),
                (#"{"command":"task_add","name":"Work"}"#, "duplicate_name", nil),
                (#"{"command":"task_add","name":"Bad","color":"pink"}"#, "invalid_value", nil),
                (#"{"command":"task_remove","task":"Work"}"#, "confirmation_required", nil),
                (#"{"command":"pause"}"#, "not_running", nil),
                (#"{"command":"resume"}"#, "not_paused", nil),
                (#"{"command":"status","x":"# + deep + "}", "too_deep", nil),
                (#"{"command":"status","n":1e999}"#, "number_out_of_range", nil),
            ]
            let c = try d.connect()
            for (line, code, id) in cases {
                let answer = try DaemonUnderTest.roundTrip(c, line, diagnostics: { d.diagnostics })
                #expect(
                    answer["ok"]?.boolValue == false && answer.errorCode == code,
                    "\(line.prefix(80)) → expected \(code), got \(answer.serialized)")
                let message = answer["error"]?["message"]?.stringValue ?? ""
                #expect(!message.isEmpty, "an error carries a message: \(answer.serialized)")
                #expect(answer["id"] == id, "\(line.prefix(80)) → id should be \(id?.serialized ?? "absent"): \(answer.serialized)")
                let after = try DaemonUnderTest.roundTrip(c, #"{"command":"status"}"#, diagnostics: { d.diagnostics })
                #expect(after.isOK, "after \(line.prefix(80)) the same connection should still answer status: \(after.serialized)")
            }

            // Nothing bad was created, and a new connection is served.
            let names = try d.call("task_list")["tasks"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
            #expect(names == ["Work", "Study", "Exercise", "Meditate", "Wish", "Daily", "Errands"], "tasks: \(names)")
            let fresh = try d.connect()
            #expect(try DaemonUnderTest.roundTrip(fresh, #"{"command":"status"}"#).isOK)
        }

        @Test("a line over 64 KiB is refused with line_too_long and closes only that connection")
        func lineTooLong() throws {
            let d = try DaemonUnderTest()
            let c = try d.connect()
            let huge = #"{"command":"status","pad":""# + String(repeating: "x", count: 70 * 1024) + #""}"#
            let answer = try DaemonUnderTest.roundTrip(c, huge, diagnostics: { d.diagnostics })
            #expect(answer.errorCode == "line_too_long", "\(answer.serialized)")
            let box = UncheckedSendable(c)
            let next = try withTimeout(5, "the daemon closing the connection") { () -> String in
                do {
                    return try box.value.readLine().map { String(decoding: $0, as: UTF8.self) } ?? "EOF"
                } catch {
                    return "EOF (\(error))"
                }
            }
            #expect(next.hasPrefix("EOF"), "after line_too_long the connection should be closed; read \(next)")
            #expect(try d.status()["state"]?.stringValue == "idle")
        }
    }
}
