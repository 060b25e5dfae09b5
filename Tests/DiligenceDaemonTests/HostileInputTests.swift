import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import Testing

@testable import DiligenceDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// Broken and hostile clients (issue item 2): each gets a specific error and costs the daemon nothing.
@Suite struct HostileInputTests {
    /// Raw request bytes and the error code each must get; the connection stays open after each.
    static let cases: [(bytes: [UInt8], code: String)] = [
        (Array("{\"command\":\"status\"".utf8), "invalid_json"),
        (Array("{\"command\":\"st\u{61}tus\",\"id\":1,}".utf8), "invalid_json"),
        ([0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x31, 0x7D], "invalid_utf8"),
        (Array("{\"command\":\"status\",\"x\":\(String(repeating: "[", count: 40))\(String(repeating: "]", count: 40))}".utf8), "too_deep"),
        (Array("{\"command\":\"extend\",\"duration\":1e400}".utf8), "number_out_of_range"),
        (Array("{\"command\":\"extend\",\"duration\":123456789012345678901234567890}".utf8), "out_of_range"),
        (Array("[\"status\"]".utf8), "not_an_object"),
        (Array("{\"command\":42}".utf8), "invalid_argument"),
        (Array("{\"id\":1}".utf8), "missing_command"),
        (Array("{\"command\":\"start\",\"task\":[1,2]}".utf8), "invalid_argument"),
        (Array("{\"command\":\"status\"}".utf8).dropLast() + [0x00, 0x7D], "invalid_json"),
        (Array("{\"command\":\"nonsense\"}".utf8), "unknown_command"),
    ]

    @Test func eachBrokenRequestGetsItsOwnErrorAndTheConnectionGoesOn() throws {
        let d = try InProcessDaemon()
        defer { d.stop() }
        let c = try d.connect()
        for (bytes, code) in Self.cases {
            if bytes.contains(0) || String(validating: bytes, as: UTF8.self) == nil {
                // NUL and invalid UTF-8 travel as raw bytes, on a connection of their own.
                let raw = try ControlConnectionRaw(path: d.socketPath)
                let answer = try raw.roundTrip(bytes + [0x0A])
                #expect(answer["error"]?["code"] == .string(code), "\(bytes)")
                continue
            }
            try c.write(String(decoding: bytes, as: UTF8.self) + "\n")
            let answer = try c.readJSONLine()
            #expect(answer["ok"] == .bool(false))
            #expect(answer["error"]?["code"] == .string(code), "\(String(decoding: bytes, as: UTF8.self).debugDescription)")
            #expect(answer["error"]?["message"]?.stringValue?.isEmpty == false)
        }
        // Still the same connection, still answering.
        try c.write("{\"command\":\"status\"}\n")
        #expect(try c.readJSONLine()["ok"] == .bool(true))
    }

    @Test func aPartialLineTimesOutAndClosesTheConnection() throws {
        let d = try InProcessDaemon()
        defer { d.stop() }
        d.daemon.queue.sync { d.daemon.server.partialLineTimeout = 0.3 }
        let idle = try d.connect()
        let stalled = try d.connect()
        try stalled.write("{\"command\":\"sta")
        let answer = try stalled.readJSONLine()
        #expect(answer["error"]?["code"] == .string("request_timeout"))
        #expect(try stalled.readLine() == nil)
        // A connection without a partial line is not timed out: it may wait as long as it likes.
        try idle.write("{\"command\":\"status\"}\n")
        #expect(try idle.readJSONLine()["ok"] == .bool(true))
    }

    @Test func aLineCompletedInTimeIsAnswered() throws {
        let d = try InProcessDaemon()
        defer { d.stop() }
        d.daemon.queue.sync { d.daemon.server.partialLineTimeout = 0.5 }
        let c = try d.connect()
        try c.write("{\"command\":")
        usleep(100_000)
        try c.write("\"version\"}\n")
        #expect(try c.readJSONLine()["ok"] == .bool(true))
        // The timer was disarmed with the completed line: the connection outlives the timeout.
        usleep(700_000)
        try c.write("{\"command\":\"status\"}\n")
        #expect(try c.readJSONLine()["ok"] == .bool(true))
    }

    @Test func atTheLimitTheConnectionIdleLongestMakesRoom() throws {
        let d = try InProcessDaemon()
        defer { d.stop() }
        d.daemon.queue.sync { d.daemon.server.maxConnections = 8 }
        var open: [ControlConnection] = []
        for _ in 0..<8 {
            let c = try d.connect()
            // One round trip each, in order: the first is idle longest.
            try c.write("{\"command\":\"version\"}\n")
            _ = try c.readJSONLine()
            open.append(c)
            usleep(2_000)
        }
        // A newcomer is admitted and served; the idlest one is told why and closed.
        #expect(try d.request("{\"command\":\"status\"}")["ok"] == .bool(true))
        let notice = try open[0].readJSONLine()
        #expect(notice["error"]?["code"] == .string("too_many_connections"))
        #expect(notice["error"]?["message"]?.stringValue?.contains("idle longest") == true)
        #expect(try open[0].readLine() == nil)
        // The others go on.
        for c in open.dropFirst() {
            try c.write("{\"command\":\"status\"}\n")
            #expect(try c.readJSONLine()["ok"] == .bool(true))
        }
    }

    @Test func watchersAreNeverClosedToMakeRoom() throws {
        let d = try InProcessDaemon()
        defer { d.stop() }
        d.daemon.queue.sync { d.daemon.server.maxConnections = 4 }
        var watchers: [ControlConnection] = []
        for _ in 0..<4 {
            let c = try d.connect()
            try c.write("{\"command\":\"watch\"}\n")
            _ = try c.readJSONLine() // the answer
            _ = try c.readJSONLine() // the first status event
            watchers.append(c)
        }
        let extra = try d.connect()
        let refusal = try extra.readJSONLine()
        #expect(refusal["error"]?["code"] == .string("too_many_connections"))
        #expect(try extra.readLine() == nil)
        // The watchers still get events.
        watchers.removeLast()
        usleep(50_000)
        #expect(try d.request("{\"command\":\"start\",\"task\":\"Work\"}")["ok"] == .bool(true))
        #expect(try watchers[0].readJSONLine()["event"] != nil)
    }

    @Test func aClientThatNeverReadsHoldsBoundedMemoryAndLosesNothing() throws {
        let d = try InProcessDaemon()
        defer { d.stop() }
        let slow = try d.connect()
        // About 2 KiB of answer per request: 4 MiB in all, far past the 256 KiB backlog.
        let count = 2_000
        try slow.write(String(repeating: "{\"command\":\"task_list\"}\n", count: count))
        usleep(300_000)
        // The daemon stopped reading from it: what waits for the client stays bounded ...
        let pending = d.daemon.queue.sync { d.daemon.server.connections.values.map(\.pendingOutput).max() ?? 0 }
        #expect(pending > 0)
        #expect(pending <= ClientConnection.maxBacklog + 4096)
        // ... other clients are served meanwhile ...
        #expect(try d.request("{\"command\":\"status\"}")["ok"] == .bool(true))
        // ... and once the slow client reads, every answer arrives, in order.
        var answered = 0
        while answered < count, let line = try slow.readLine() {
            let answer = try JSON.parse(line)
            guard answer["ok"] == .bool(true) else { break }
            answered += 1
        }
        #expect(answered == count)
    }

    @Test func aClientThatVanishesMidAnswerCostsNothing() throws {
        let d = try InProcessDaemon()
        defer { d.stop() }
        for _ in 0..<20 {
            let c = try d.connect()
            // Many requests, no reading, then gone: the answers hit a closed socket.
            try c.write(String(repeating: "{\"command\":\"task_list\"}\n", count: 200))
        }
        #expect(try d.request("{\"command\":\"status\"}")["ok"] == .bool(true))
        #expect(d.daemon.queue.sync { d.daemon.server.connections.count } <= 1)
    }
}

/// A client socket for bytes that are not UTF-8 (ControlConnection writes Strings).
struct ControlConnectionRaw {
    let fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let address = try #require(Sys.unixAddress(path))
        try #require(Sys.withSockaddr(address) { connect(fd, $0, $1) } == 0)
    }

    /// Writes `bytes`, reads one answer line, closes.
    func roundTrip(_ bytes: [UInt8]) throws -> JSON {
        defer { close(fd) }
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1, byte != 0x0A { line.append(byte) }
        return try JSON.parse(line)
    }
}
