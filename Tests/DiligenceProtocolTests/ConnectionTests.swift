import DiligenceProtocol
import DiligenceTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct ConnectionTests {
    /// A daemon that refuses a client (another uid, too many connections) answers why and closes
    /// without reading: the client's request then meets a closed socket, and the answer that
    /// waits in the socket is what the person must see, not "broken pipe".
    @Test func aRefusalSentBeforeTheRequestIsStillRead() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path + "/refusing.sock"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0 && listen(listener, 1) == 0)

        let connection = try ControlConnection(path: path)
        // The "daemon": accept, answer with a refusal, hang up, all before the client writes.
        let peer = accept(listener, nil, nil)
        try #require(peer >= 0)
        let refusal = Array(Response.error(.init(.permissionDenied, "uid 65534 may not control it."), id: nil).utf8)
        #expect(refusal.withUnsafeBytes { write(peer, $0.baseAddress, $0.count) } == refusal.count)
        close(peer)

        let answer = try connection.send(Request(command: "status"))
        #expect(answer["error"]?["code"] == .string("permission_denied"))
    }
}
