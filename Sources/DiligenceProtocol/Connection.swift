import DiligenceJSON

#if canImport(Glibc)
    import Glibc
#endif

/// Why talking to the daemon failed.
public enum ConnectionError: Error, Equatable, Sendable {
    /// Nobody listens at the path (no file, or a stale socket): the daemon is not running.
    case unreachable(path: String, reason: String)
    /// The connection broke or the daemon answered something that is not a line of JSON.
    case broken(String)
    /// Not sent: the fallback directory is not this user's own private one, or the process
    /// listening runs as another user (SO_PEERCRED), who would read the request (why).
    case untrusted(path: String, reason: String)
}

/// A blocking client connection to the control socket: one line out, one line back.
/// Kept to plain syscalls so that `diligencectl` starts in a few milliseconds.
public final class ControlConnection {
    public let path: String
    private let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to the socket at `path`, and checks who listens there before anything is sent
    /// (docs/protocol.md, "The socket").
    public init(path: String) throws(ConnectionError) {
        self.path = path
        let bytes = Array(path.utf8)
        guard bytes.count <= SocketPath.maxLength else {
            throw .unreachable(path: path, reason: "the socket path is longer than \(SocketPath.maxLength) bytes")
        }
        if let problem = SocketPath.fallbackDirectoryProblem(socket: path) { throw .untrusted(path: path, reason: problem) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .unreachable(path: path, reason: String(cString: strerror(errno))) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if result != 0 {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw .unreachable(path: path, reason: reason)
        }
        if let problem = Self.peerProblem(fd) {
            close(fd)
            throw .untrusted(path: path, reason: problem)
        }
        self.fd = fd
    }

    /// Why the process at the other end of `fd` is not to be told anything: it runs as another
    /// user than this client (root excepted: it can read everything anyway). A root client
    /// talks to whom it points at (`allow_root`, a user's daemon).
    static func peerProblem(_ fd: Int32) -> String? {
        guard let peer = PeerCredentials.of(fd) else {
            return "the kernel does not say who listens there (SO_PEERCRED: \(String(cString: strerror(errno))))"
        }
        let me = getuid()
        guard me != 0, peer.uid != me, peer.uid != 0 else { return nil }
        return "the process listening there (pid \(peer.pid)) runs as uid \(peer.uid), not as you (uid \(me)): it is not your daemon"
    }

    deinit { close(fd) }

    /// Sends one request and reads its response line.
    public func send(_ request: Request) throws(ConnectionError) -> JSON {
        try send(line: request.line)
    }

    /// Sends one raw request line (newline included) and reads its response line.
    public func send(line: String) throws(ConnectionError) -> JSON {
        do {
            try write(line)
        } catch {
            // A daemon that refuses a connection (another user, too many clients) answers why
            // and closes before reading: that answer is still waiting here, and says more than
            // "broken pipe".
            if let line = try? readLine(), let answer = try? JSON.parse(line) { return answer }
            throw error
        }
        return try readJSONLine()
    }

    /// Writes `text` whole (retrying short writes and EINTR).
    public func write(_ text: String) throws(ConnectionError) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { raw in
                Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw .broken("sending to the daemon failed: \(String(cString: strerror(errno)))")
            }
            offset += n
        }
    }

    /// The next line from the daemon, without its newline; nil at end of stream.
    public func readLine() throws(ConnectionError) -> [UInt8]? {
        // Bytes already searched for a newline: a long answer (an export) is scanned once, not
        // once per read.
        var scanned = 0
        while true {
            if let newline = buffer[scanned...].firstIndex(of: 0x0A) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return line
            }
            scanned = buffer.count
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .broken("reading from the daemon failed: \(String(cString: strerror(errno)))")
            }
            if n == 0 { return nil }
            buffer += chunk[..<n]
        }
    }

    /// The next line parsed as JSON.
    public func readJSONLine() throws(ConnectionError) -> JSON {
        guard let line = try readLine() else { throw .broken("the daemon closed the connection before answering") }
        do {
            return try JSON.parse(line)
        } catch {
            throw .broken("the daemon sent a line that is not JSON: \(error.message)")
        }
    }
}

/// The peer of a Unix socket (SO_PEERCRED), as the kernel saw it at connect; the layout of
/// `struct ucred`, which Glibc's Swift overlay does not export.
public struct PeerCredentials: Sendable {
    public var pid: pid_t = 0
    public var uid: uid_t = 0
    public var gid: gid_t = 0

    public init() {}

    /// Who is at the other end of `fd`; nil when the kernel does not say (errno set).
    public static func of(_ fd: Int32) -> PeerCredentials? {
        var credentials = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 ? credentials : nil
    }
}
