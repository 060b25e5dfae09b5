#if canImport(Glibc)
    import Glibc
#endif

/// What a name that is not a regular file turned out to be.
public enum FileKind: String, Sendable, Equatable {
    case fifo = "a FIFO"
    case symlink = "a symbolic link"
    case characterDevice = "a character device"
    case blockDevice = "a block device"
    case directory = "a directory"
    case socket = "a socket"
    case other = "not a regular file"

    init(mode: mode_t) {
        switch mode & S_IFMT {
        case S_IFIFO: self = .fifo
        case S_IFLNK: self = .symlink
        case S_IFCHR: self = .characterDevice
        case S_IFBLK: self = .blockDevice
        case S_IFDIR: self = .directory
        case S_IFSOCK: self = .socket
        default: self = .other
        }
    }
}

/// Why a file was not opened or read.
public struct FileError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Problem: Equatable, Sendable {
        /// The call failed with this errno (ENOENT: nothing there).
        case system(Int32)
        /// Something is there, but not a regular file: it is skipped, never waited on.
        case notRegular(FileKind)
        /// Larger than the reader's limit (bytes).
        case tooLarge(Int)
    }

    public var path: String
    public var problem: Problem

    public init(path: String, problem: Problem) {
        self.path = path
        self.problem = problem
    }

    public var isMissing: Bool { problem == .system(ENOENT) }

    /// What is wrong, in the words a user reads.
    public var reason: String {
        switch problem {
        case .system(let code): String(cString: strerror(code))
        case .notRegular(let kind): kind == .other ? "not a regular file" : "it is \(kind.rawValue), not a regular file"
        case .tooLarge(let limit): "larger than \(limit >> 20) MiB"
        }
    }

    public var description: String { "\(path): \(reason)" }
}

/// Files another hand can put in place — a sync tool's delivery, a user's `mkfifo`, a link to
/// `~/.bashrc` — are opened only through here (docs/reliability.md, "Files that are not files"):
/// `O_NONBLOCK` (a FIFO never holds the open), `O_NOFOLLOW` (a link is not written or read
/// through), `O_NOCTTY`, `O_CLOEXEC`, and checked by `fstat` to be a regular file before a byte
/// is read or written.
public enum RegularFile {
    /// Opens `path` with `flags` (`mode` when it creates it). `followingLinks`: a symbolic link
    /// at `path` is followed (the config file, which dotfile managers link), its target must still
    /// be a regular file. Returns the descriptor (the caller closes it).
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600, followingLinks: Bool = false) throws(FileError) -> Int32 {
        let guarded = flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (followingLinks ? 0 : O_NOFOLLOW)
        var fd: Int32
        repeat { fd = Glibc.open(path, guarded, mode) } while fd < 0 && errno == EINTR
        guard fd >= 0 else {
            let code = errno
            // ELOOP: a link under O_NOFOLLOW; ENXIO: a FIFO without a reader opened for writing;
            // EISDIR: a directory opened for writing. Say what is there, not the errno.
            var st = stat()
            if code == ELOOP || code == ENXIO || code == EISDIR || code == EWOULDBLOCK,
                (followingLinks ? stat(path, &st) : lstat(path, &st)) == 0, st.st_mode & S_IFMT != S_IFREG
            {
                throw FileError(path: path, problem: .notRegular(FileKind(mode: st.st_mode)))
            }
            throw FileError(path: path, problem: .system(code))
        }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let code = errno
            close(fd)
            throw FileError(path: path, problem: .system(code))
        }
        guard st.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw FileError(path: path, problem: .notRegular(FileKind(mode: st.st_mode)))
        }
        return fd
    }

    /// The whole regular file at `path`, at most `limit` bytes; nil when nothing is there.
    public static func read(_ path: String, limit: Int = 1 << 20, followingLinks: Bool = false) throws(FileError) -> [UInt8]? {
        let fd: Int32
        do { fd = try open(path, O_RDONLY, followingLinks: followingLinks) } catch  where error.isMissing { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw FileError(path: path, problem: .system(errno))
            }
            if n == 0 { return bytes }
            bytes += chunk[..<n]
            if bytes.count > limit { throw FileError(path: path, problem: .tooLarge(limit)) }
        }
    }
}
