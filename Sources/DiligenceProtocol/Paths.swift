#if canImport(Glibc)
import Glibc
#endif
import DiligenceCore

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
