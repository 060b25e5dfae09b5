import DiligenceJSON

#if canImport(Glibc)
    import Glibc
#endif

/// One daemon per database: a running diligenced holds an advisory lock (flock) on
/// `<database>.lock` for its whole life, and writes its pid and socket path into it, so a
/// second one — and a client that cannot find the socket — can say which daemon runs and where.
public enum DatabaseLock {
    public static func path(forDatabase database: String) -> String { database + ".lock" }

    /// The daemon holding the lock of `database`, nil when none does.
    public static func holder(ofDatabase database: String) -> (pid: Int, socket: String)? {
        let fd = open(path(forDatabase: database), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return nil
        }
        guard errno == EWOULDBLOCK else { return nil }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        let info = n > 0 ? try? JSON.parse(bytes[..<n]) : nil
        return (Int(info?["pid"]?.intValue ?? 0), info?["socket"]?.stringValue ?? "")
    }

    /// What a running daemon writes into its lock file.
    public static func contents(pid: Int32, socket: String) -> String {
        JSON.object([("pid", .int(Int(pid))), ("socket", .string(socket))]).serialized + "\n"
    }
}
