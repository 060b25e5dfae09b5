import DiligenceCore

#if canImport(Glibc)
    import Glibc
#endif

/// Where the control socket lives (docs/protocol.md, "The socket"): `$DILIGENCE_SOCKET`, else
/// `$XDG_RUNTIME_DIR/diligence/diligenced.sock`, else `/tmp/diligence-<uid>/diligenced.sock`.
public enum SocketPath {
    public static func resolve(environment: [String: String] = ProcessEnvironment.current) -> String {
        if let explicit = environment["DILIGENCE_SOCKET"], !explicit.isEmpty { return explicit }
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return runtime + "/diligence/diligenced.sock"
        }
        return fallback
    }

    /// The socket without `XDG_RUNTIME_DIR`, in a directory of a world-writable `/tmp` that
    /// anyone may have made first.
    public static var fallbackDirectory: String { "/tmp/diligence-\(getuid())" }
    public static var fallback: String { fallbackDirectory + "/diligenced.sock" }

    /// Why the fallback directory, when `socket` is in it, is not to be trusted: it must be a
    /// directory (not a link) of this user's, mode 0700, as the daemon makes it. Another user's
    /// could hold a socket of theirs in the daemon's place (issue 26). Nil: fine, or not there.
    public static func fallbackDirectoryProblem(socket: String) -> String? {
        let directory = fallbackDirectory
        guard socket == fallback else { return nil }
        var st = stat()
        guard lstat(directory, &st) == 0 else { return nil }
        let me = getuid()
        if st.st_mode & S_IFMT != S_IFDIR { return "\(directory) is not a directory (a link, or a file)" }
        if st.st_uid != me { return "\(directory) belongs to uid \(st.st_uid), not to you (uid \(me))" }
        let mode = st.st_mode & 0o7777
        if mode != 0o700 { return "\(directory) has mode \(String(mode, radix: 8)), not 700 (others could put a socket of theirs there)" }
        return nil
    }

    /// `sun_path` holds 107 bytes and a NUL.
    public static let maxLength = 107
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
