import DiligenceCore

#if canImport(Glibc)
    import Glibc
#endif

/// Where the control socket lives (SPEC.md): `$DILIGENCE_SOCKET`, else
/// `$XDG_RUNTIME_DIR/diligence/diligenced.sock`, else `/tmp/diligence-<uid>/diligenced.sock`.
public enum SocketPath {
    public static func resolve(environment: [String: String] = ProcessEnvironment.current) -> String {
        if let explicit = environment["DILIGENCE_SOCKET"], !explicit.isEmpty { return explicit }
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return runtime + "/diligence/diligenced.sock"
        }
        return "/tmp/diligence-\(getuid())/diligenced.sock"
    }

    /// `sun_path` holds 107 bytes and a NUL.
    public static let maxLength = 107
}

/// The process environment as a dictionary, read without Foundation.
public enum ProcessEnvironment {
    public static var current: [String: String] {
        var result: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let text = String(cString: entry)
            if let eq = text.firstIndex(of: "=") {
                result[String(text[..<eq])] = String(text[text.index(after: eq)...])
            }
            p += 1
        }
        return result
    }
}

/// Where diligence keeps its data when no `--database` says otherwise:
/// `$XDG_DATA_HOME/diligence/diligence.sqlite3` (`~/.local/share/...`).
public enum DataPath {
    public static func database(environment: [String: String] = ProcessEnvironment.current) -> String {
        xdg("XDG_DATA_HOME", ".local/share", environment) + "/diligence/diligence.sqlite3"
    }

    public static func config(environment: [String: String] = ProcessEnvironment.current) -> String {
        xdg("XDG_CONFIG_HOME", ".config", environment) + "/diligence/diligenced.conf"
    }

    /// `$variable` when it is an absolute path, else `$HOME/fallback`.
    static func xdg(_ variable: String, _ fallback: String, _ environment: [String: String]) -> String {
        if let v = environment[variable], v.hasPrefix("/") { return v }
        return home(environment) + "/" + fallback
    }

    static func home(_ environment: [String: String]) -> String {
        if let home = environment["HOME"], !home.isEmpty { return home }
        guard let entry = getpwuid(getuid()), let dir = entry.pointee.pw_dir else { return "/" }
        return String(cString: dir)
    }
}

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
