import DiligenceCore

/// `diligenced [--socket PATH] [--database PATH] [--config PATH] [--verbose]`.
public struct DaemonOptions: Equatable {
    public var socket: String?
    public var database: String?
    public var config: String?
    public var verbose = false
    public var help = false
    public var version = false

    public static let usage = """
        Usage: diligenced [--socket PATH] [--database PATH] [--config PATH] [--verbose]

        The diligence focus-timer daemon. Runs in the foreground; control it with diligencectl.

          --socket PATH     control socket (default: $DILIGENCE_SOCKET, else
                            $XDG_RUNTIME_DIR/diligence/diligenced.sock)
          --database PATH   SQLite database (default: $XDG_DATA_HOME/diligence/diligence.sqlite3)
          --config PATH     config file (default: $XDG_CONFIG_HOME/diligence/diligenced.conf, optional)
          --verbose         log debug lines too
          -h, --help        show this help
          --version         show the version

        Signals: SIGTERM/SIGINT save the timer and exit; SIGHUP re-reads the config file.
        """

    public static func parse(_ arguments: [String]) throws(DiligenceError) -> DaemonOptions {
        var options = DaemonOptions()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            var name = argument
            var inline: String?
            if argument.hasPrefix("--"), let eq = argument.firstIndex(of: "=") {
                name = String(argument[..<eq])
                inline = String(argument[argument.index(after: eq)...])
            }
            func value() throws(DiligenceError) -> String {
                if let inline { return inline }
                guard let next = rest.popFirst(), !next.isEmpty else {
                    throw DiligenceError(.usage, "\(name) needs a value.")
                }
                return next
            }
            switch name {
            case "--socket": options.socket = try value()
            case "--database": options.database = try value()
            case "--config": options.config = try value()
            case "--verbose", "-v": options.verbose = true
            case "--help", "-h": options.help = true
            case "--version": options.version = true
            default: throw DiligenceError(.usage, "unknown argument \(argument.debugDescription).")
            }
        }
        return options
    }
}
