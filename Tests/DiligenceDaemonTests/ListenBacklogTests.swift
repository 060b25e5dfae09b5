import DiligenceTestSupport
import Testing

@testable import DiligenceDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// A socket the daemon binds itself takes a burst of connects as systemd's socket unit does:
/// asyncio and Node connect non-blocking, and a full backlog fails them with EAGAIN at once.
@Test func aBurstOf600NonBlockingConnectsIsQueuedWhileNothingIsAccepted() throws {
    let directory = TemporaryDirectory()
    defer { directory.remove() }
    let socket = try ListeningSocket.open(path: directory.path + "/control.sock")
    defer { socket.close() }
    let address = try #require(Sys.unixAddress(socket.path))
    var clients: [Int32] = []
    defer { clients.forEach { _ = close($0) } }
    var refused: [String] = []
    for _ in 0..<600 {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        try #require(fd >= 0)
        clients.append(fd)
        if Sys.withSockaddr(address, { connect(fd, $0, $1) }) != 0 { refused.append(String(cString: strerror(errno))) }
    }
    #expect(refused.isEmpty, "\(refused.count) of 600 connects refused, first: \(refused.first ?? "")")
}
