import DiligenceProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// How to start the daemon, for the way this client was installed: the units of a package or
/// `make install` beside it, a build in a source tree, or just the program next to it. One hint,
/// so a package user is never told about `make run` and a developer not about units they lack.
enum StartHint: Equatable {
    case units
    case sourceTree(root: String, daemon: String)
    case beside(String)

    init(executable: String, environment: [String: String], exists: (String) -> Bool) {
        let parts = executable.split(separator: "/", omittingEmptySubsequences: false)
        let bin = parts.dropLast().joined(separator: "/")
        let daemon = bin + "/diligenced"
        let root = parts.firstIndex(of: ".build").map { parts[..<$0].joined(separator: "/") }
        if let root, exists(root + "/Package.swift") {
            self = .sourceTree(root: root, daemon: daemon)
        } else if Self.unitDirectories(bin: bin, environment: environment).contains(where: { exists($0 + "/diligenced.socket") }) {
            self = .units
        } else {
            self = .beside(daemon)
        }
    }

    /// Where systemd --user finds the units that `make install` or the package put beside `bin`.
    private static func unitDirectories(bin: String, environment: [String: String]) -> [String] {
        guard bin.hasSuffix("/bin") else { return [] }
        let prefix = String(bin.dropLast("/bin".count))
        var directories = [prefix + "/lib/systemd/user"]
        if let home = environment["HOME"], prefix == home + "/.local" {
            directories.append((environment["XDG_DATA_HOME"] ?? home + "/.local/share") + "/systemd/user")
        }
        return directories
    }

    /// The hint for the running client, found from /proc/self/exe.
    static func current(environment: [String: String] = ProcessEnvironment.current) -> StartHint {
        StartHint(executable: executablePath, environment: environment) { access($0, F_OK) == 0 }
    }

    /// This process's program, links resolved: the installed diligenced.
    static var executablePath: String { ProcessEnvironment.executablePath }

    var text: String {
        switch self {
        case .units: tr("Start it with `systemctl --user enable --now diligenced.socket` (once; it then starts at every login).")
        case .sourceTree(let root, let daemon): tr("Start it with `make run` in {root}, or `{daemon}`.", ["root": root, "daemon": daemon])
        case .beside(let daemon): tr("Start it with `{daemon}` in a terminal.", ["daemon": daemon])
        }
    }
}
