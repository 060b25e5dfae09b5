import DiligenceCore
import DiligenceProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// Where the daemon keeps its files (SPEC.md "Programs and paths").
public struct DaemonPaths: Sendable {
    public var socket: String
    public var database: String
    public var config: String
    /// The config path was given explicitly: then it must exist.
    public var configRequired: Bool

    public init(
        socket: String? = nil, database: String? = nil, config: String? = nil,
        environment: [String: String] = ProcessEnvironment.current
    ) {
        self.socket = socket ?? SocketPath.resolve(environment: environment)
        self.database = database ?? DataPath.database(environment: environment)
        self.config = config ?? DataPath.config(environment: environment)
        self.configRequired = config != nil
    }
}

/// File-system helpers the daemon needs at start-up.
enum Files {
    /// The directory part of `path` ("." when none).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// `mkdir -p` with `mode` for each directory it creates.
    static func makeDirectories(_ path: String, mode: mode_t = 0o700) throws(DiligenceError) {
        if let st = Sys.fileStatus(path) {
            guard Sys.isDirectory(st) else {
                throw DiligenceError("not_a_directory", "\(path) exists and is not a directory.")
            }
            return
        }
        let parent = directory(of: path)
        if parent != path && parent != "." && parent != "/" { try makeDirectories(parent, mode: mode) }
        if mkdir(path, mode) != 0 && errno != EEXIST {
            throw DiligenceError("cannot_create_directory", "Cannot create \(path): \(String(cString: strerror(errno))).")
        }
    }

    /// Appends `text` to `path` (created 0600) and waits until it is on disk.
    static func append(_ text: String, to path: String) throws(Errno) {
        try write(text, to: path, flags: O_APPEND)
    }

    /// Replaces `path` by a file holding `text` (0600, on disk before it takes the name: a
    /// crash leaves the old file or the new one, never half of one).
    static func replace(_ path: String, with text: String) throws(Errno) {
        let temporary = path + ".new"
        try write(text, to: temporary, flags: O_TRUNC)
        try Sys.retrying("rename \(temporary)") { rename(temporary, path) }
    }

    private static func write(_ text: String, to path: String, flags: Int32) throws(Errno) {
        let bytes = Array(text.utf8)
        let fd = try Sys.retrying("open \(path)") { open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0o600) }
        defer { Sys.close(fd) }
        var written = 0
        while written < bytes.count {
            let chunk = bytes[written...]
            written += try Sys.retrying("write \(path)") { chunk.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } }
        }
        try Sys.retrying("fsync \(path)") { fsync(fd) }
    }

    /// The whole file as text, nil when it does not exist.
    static func read(_ path: String) throws(DiligenceError) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw DiligenceError("cannot_read", "Cannot read \(path): \(String(cString: strerror(errno))).")
        }
        defer { Sys.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw DiligenceError("cannot_read", "Cannot read \(path): \(String(cString: strerror(errno))).")
            }
            if n == 0 { break }
            bytes += chunk[..<n]
            if bytes.count > 1 << 20 { throw DiligenceError("cannot_read", "\(path) is larger than 1 MiB; is it the right file?") }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw DiligenceError("invalid_config", "\(path) is not UTF-8 text.")
        }
        return text
    }
}
