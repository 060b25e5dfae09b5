import DiligenceCore

#if canImport(Glibc)
    import Glibc
#endif

/// An errno value from a failed syscall, with the call's name for messages.
public struct Errno: Error, Equatable, CustomStringConvertible {
    public var code: Int32
    public var call: String

    public var description: String { "\(call): \(String(cString: strerror(code)))" }
}

/// Every syscall the daemon makes goes through here once: EINTR is retried, -1 becomes `Errno`.
enum Sys {
    @discardableResult
    static func retrying<T: BinaryInteger>(_ call: String, _ body: () -> T) throws(Errno) -> T {
        while true {
            let result = body()
            if result >= 0 { return result }
            let e = errno
            if e == EINTR { continue }
            // EBADF and EFAULT mean a bug in this program, not a condition to handle.
            precondition(e != EBADF && e != EFAULT, "\(call): \(String(cString: strerror(e)))")
            throw Errno(code: e, call: call)
        }
    }

    static func close(_ fd: Int32) {
        // close(2) must not be retried on EINTR on Linux: the descriptor is gone either way.
        _ = Glibc.close(fd)
    }

    static func setNonBlocking(_ fd: Int32) throws(Errno) {
        let flags = try retrying("fcntl") { fcntl(fd, F_GETFL) }
        try retrying("fcntl") { fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
    }

    /// Fills a `sockaddr_un` for `path`; nil when the path does not fit `sun_path`.
    static func unixAddress(_ path: String) -> sockaddr_un? {
        let bytes = Array(path.utf8)
        var address = sockaddr_un()
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return address
    }

    static func withSockaddr<R>(_ address: sockaddr_un, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var address = address
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// lstat(2): the file itself, not what a symlink points to; nil when it does not exist.
    static func fileStatus(_ path: String) -> Glibc.stat? {
        var st = Glibc.stat()
        return lstat(path, &st) == 0 ? st : nil
    }

    static func isSocket(_ st: Glibc.stat) -> Bool { st.st_mode & S_IFMT == S_IFSOCK }
    static func isDirectory(_ st: Glibc.stat) -> Bool { st.st_mode & S_IFMT == S_IFDIR }
}

extension Errno {
    /// As a protocol/user error with a code.
    func asError(_ code: String, _ what: String) -> DiligenceError {
        DiligenceError(code, "\(what): \(String(cString: strerror(self.code))).")
    }
}
