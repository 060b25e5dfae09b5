import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Dispatch
import Testing

@testable import DiligenceDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// A daemon running inside the test process on a private directory: fast to start, and its
/// state can be inspected directly. (EndToEndTests run the real binaries.) Connecting, calls,
/// refusals, status and watching come from `ControlledDaemon` (TestSupport), as for those.
final class InProcessDaemon: ControlledDaemon {
    let directory = TemporaryDirectory("diligenced-unit")
    let daemon: Daemon
    var socketPath: String { daemon.paths.socket }

    /// `clocks`: fake readings for suspend and clock-step tests; `prepare` runs on the paths
    /// before the daemon opens them (a corrupt database, a full disk, ...).
    init(config: String? = nil, clocks: Clocks = Clocks(), prepare: (DaemonPaths) throws -> Void = { _ in }) throws {
        // The test process never installs the daemon's signal handlers, but a peer that
        // vanishes mid-answer must not kill it either.
        signal(SIGPIPE, SIG_IGN)
        let paths = DaemonPaths(
            socket: directory.path + "/run/diligenced.sock",
            database: directory.path + "/data/diligence.sqlite3",
            config: directory.path + "/diligenced.conf",
            environment: [:])
        // Always a file of the test's own, so the user's real config never leaks in.
        let fd = open(paths.config, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        _ = (config ?? "").withCString { write(fd, $0, strlen($0)) }
        close(fd)
        mkdir(directory.path + "/data", 0o700)
        do {
            try prepare(paths)
            daemon = try Daemon(paths: paths, clocks: clocks)
            try daemon.queue.sync { Result { () throws(DiligenceError) in try daemon.start() } }.get()
        } catch {
            // A daemon that refused to start leaves nothing behind either.
            directory.remove()
            throw error
        }
    }

    /// Sends one raw line on a new connection and returns the parsed answer.
    func request(_ line: String) throws -> JSON {
        let connection = try connect()
        try connection.write(line + "\n")
        return try connection.readJSONLine()
    }

    func stop() {
        daemon.queue.sync { daemon.stop() }
        directory.remove()
    }
}
