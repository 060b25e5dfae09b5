#if canImport(Glibc)
import Glibc
#endif
import Dispatch
@testable import DiligenceDaemon
import DiligenceProtocol
import DiligenceTestSupport

/// A daemon running inside the test process on a private directory: fast to start, and its
/// state can be inspected directly. (EndToEndTests run the real binaries.)
final class InProcessDaemon {
    let directory = TemporaryDirectory("diligenced-unit")
    let daemon: Daemon
    var socketPath: String { daemon.paths.socket }

    init(config: String? = nil) throws {
        let paths = DaemonPaths(
            socket: directory.path + "/run/diligenced.sock",
            database: directory.path + "/data/diligence.sqlite3",
            config: directory.path + "/diligenced.conf",
            environment: [:])
        if let config {
            let fd = open(paths.config, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            _ = config.withCString { write(fd, $0, strlen($0)) }
            close(fd)
        }
        daemon = try Daemon(paths: paths)
        try daemon.queue.sync { Result { () throws(DiligenceCore.DiligenceError) in try daemon.start() } }.get()
    }

    func connect() throws -> ControlConnection { try ControlConnection(path: socketPath) }

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

import DiligenceCore
