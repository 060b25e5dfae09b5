import Dispatch
import Testing

@testable import DiligenceDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// One real `ClientConnection` on a socket pair, its requests answered by a handler of the
/// test's own: "big N" gets an answer line of N bytes, "ping K" gets "pong K". The server's end
/// has a small send buffer, so the output drains in small pieces and passes through every level
/// of the back-pressure rule (issue 26, item 2: lines pipelined after a large answer were never
/// handled when reading came back on between half the backlog and the backlog).
@Suite struct ClientConnectionTests {
    /// What the server end saw, kept on its queue.
    final class Served: @unchecked Sendable {
        var requests: [String] = []
        var closed = DispatchSemaphore(value: 0)
    }

    static let backlog = OutputBuffer.maxBacklog

    /// Writes `requests` in one write, closes the writing half (as `socat` and `printf | nc` do),
    /// and returns every answer line received until the server closed, or nil on a timeout.
    func exchange(_ requests: [String], readPause: useconds_t = 200) throws -> (answers: [String], served: [String])? {
        let queue = DispatchQueue(label: "client-connection-test")
        let loop = try ReadLoop(queue: queue)
        loop.start()
        defer { queue.sync { loop.stop() } }
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
        let (server, client) = (fds[0], fds[1])
        defer { close(client) }
        let connection = ClientConnection(fd: server, id: 1, readBuffer: ReadBuffer())
        defer { queue.sync { connection.close() } }
        // The kernel doubles it: about 16 KiB in flight, far below the backlog.
        var small: Int32 = 8192
        try #require(setsockopt(server, SOL_SOCKET, SO_SNDBUF, &small, socklen_t(MemoryLayout<Int32>.size)) == 0)
        try #require(fcntl(server, F_SETFL, fcntl(server, F_GETFL) | O_NONBLOCK) == 0)

        let served = Served()
        queue.sync {
            connection.start(queue: queue, readLoop: loop, onClose: { _ in served.closed.signal() }) { connection, line in
                let request = String(decoding: line, as: UTF8.self)
                served.requests.append(request)
                let words = request.split(separator: " ")
                if words.first == "big", let size = Int(words.last ?? "") {
                    connection.send(String(repeating: "x", count: size - 1) + "\n")
                } else {
                    connection.send("pong \(words.last ?? "")\n")
                }
            }
        }

        let text = Array(requests.map { $0 + "\n" }.joined().utf8)
        try #require(text.count < 100_000) // one write the socket takes whole
        try #require(write(client, text, text.count) == text.count)
        try #require(shutdown(client, Int32(SHUT_WR)) == 0)

        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let deadline = DispatchTime.now() + 20
        while true {
            guard DispatchTime.now() < deadline else { return nil }
            var poller = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 200) <= 0 { continue }
            let n = read(client, &chunk, chunk.count)
            try #require(n >= 0, "read: \(errno)")
            if n == 0 { break }
            received += chunk[..<n]
            // A slow reader: the server's output drains a piece at a time.
            usleep(readPause)
        }
        #expect(served.closed.wait(timeout: .now() + 5) == .success, "the server end never closed")
        let answers = received.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast().map {
            $0.allSatisfy { $0 == UInt8(ascii: "x") } ? "big \($0.count + 1)" : String(decoding: $0, as: UTF8.self)
        }
        #expect(received.last == 0x0A, "the last answer is whole")
        return (answers, queue.sync { served.requests })
    }

    @Test(arguments: [0.9, 1.0, 1.1, 2.0])
    func requestsPipelinedAfterALargeAnswerAreAnsweredOnceInOrder(_ fraction: Double) throws {
        let size = Int(Double(Self.backlog) * fraction)
        let requests = ["big \(size)", "ping 1", "ping 2", "big \(size)", "ping 3", "big 10", "ping 4"]
        let result = try #require(try exchange(requests), "timed out: requests after a \(size)-byte answer were never answered")
        #expect(result.served == requests)
        #expect(result.answers == requests.map { $0.hasPrefix("big") ? $0 : $0.replacing("ping", with: "pong") })
    }

    @Test func aClientThatClosesItsWritingHalfStillGetsAllOfALargeAnswer() throws {
        // Reading stays on while a large answer drains: the end of input must not cut it short.
        let size = 3 * Self.backlog
        let result = try #require(try exchange(["big \(size)"]))
        #expect(result.answers == ["big \(size)"])
    }
}
