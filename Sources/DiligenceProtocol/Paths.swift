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
        return "/tmp/diligence-\(getuid())/diligenced.sock"
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
