import DiligenceCore
import DiligenceProtocol
import DiligenceTestSupport
import Dispatch
import Synchronization
import Testing

@testable import DiligenceDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The control socket and its framing, against a daemon running in this process.
@Suite struct ControlSocketTests {
    @Test func pipelinedRequestsAreAnsweredInOrderWithTheirIds() throws {
        let d = try InProcessDaemon()
        defer { d.stop() }
        let c = try d.connect()
        try c.write("{\"command\":\"version\",\"id\":1}\r\n\n{\"command\":\"status\",\"id\":\"two\"}\n{\"command\":\"nope\",\"id\":[3]}\n")
        let first = try c.readJSONLine()
        #expect(first["id"] == .int(1))
        #expect(first["result"]?["protocol"] == .int(1))
        let second = try c.readJSONLine()
        #expect(second["id"] == .string("two"))
        #expect(second["result"]?["state"] == .string("idle"))
        let third = try c.readJSONLine()
        #expect(third["id"] == .array([.int(3)]))
        #expect(third["error"]?["code"] == .string("unknown_command"))
    }

    @Test func anOverlongLineIsRefusedAndClosesTheConnection() throws {
        let d = try InProcessDaemon()
        defer { d.stop() }
        let c = try d.connect()
        try c.write("{\"command\":\"status\",\"pad\":\"" + String(repeating: "x", count: ProtocolInfo.maxLineBytes + 10))
        let answer = try c.readJSONLine()
        #expect(answer["error"]?["code"] == .string("line_too_long"))
        #expect(try c.readLine() == nil)
        // The daemon still serves others.
        #expect(try d.request("{\"command\":\"status\"}")["ok"] == .bool(true))
    }

    @Test func unknownArgumentsAreRefusedByName() throws {
        let d = try InProcessDaemon()
        defer { d.stop() }
        let answer = try d.request("{\"command\":\"task_add\",\"name\":\"X\",\"wrok\":30}")
        #expect(answer["error"]?["code"] == .string("invalid_argument"))
        #expect(answer["error"]?["message"]?.stringValue?.contains("wrok") == true)
    }

    @Test func aLiveDaemonIsNotReplacedAndAStaleSocketIs() throws {
        let d = try InProcessDaemon()
        let path = d.socketPath
        #expect(
            throws: DiligenceError(
                .alreadyRunning, "Another diligenced is already running on \(path). Stop it first (diligencectl status shows it).")
        ) {
            _ = try ListeningSocket.open(path: path)
        }
        // Leave a socket file behind that nobody listens on.
        d.daemon.queue.sync { d.daemon.stop() }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let address = try #require(Sys.unixAddress(path))
        #expect(Sys.withSockaddr(address) { bind(fd, $0, $1) } == 0)
        close(fd)
        #expect(Sys.fileStatus(path).map(Sys.isSocket) == true)
        let replaced = try ListeningSocket.open(path: path)
        #expect(
            Sys.withSockaddr(address) { a, l in
                let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
                defer { close(probe) }
                return connect(probe, a, l)
            } == 0)
        replaced.close()
        d.directory.remove()
    }

    @Test func aPlainFileAtTheSocketPathIsNeverRemoved() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path + "/not-a-socket"
        let fd = open(path, O_WRONLY | O_CREAT, 0o600)
        close(fd)
        let error = try #require(throws: DiligenceError.self) { _ = try ListeningSocket.open(path: path) }
        #expect(error.code.rawValue == "not_a_socket", "\(error)")
        #expect(error.message == "\(path) exists and is not a socket; remove it or choose another path with --socket.")
        #expect(Sys.fileStatus(path).map { $0.st_mode & S_IFMT == S_IFREG } == true, "the plain file is still there")
    }

    @Test func socketIs0600InA0700Directory() throws {
        let d = try InProcessDaemon()
        defer { d.stop() }
        let socketStat = try #require(Sys.fileStatus(d.socketPath))
        #expect(socketStat.st_mode & 0o777 == 0o600)
        let dirStat = try #require(Sys.fileStatus(Files.directory(of: d.socketPath)))
        #expect(dirStat.st_mode & 0o777 == 0o700)
    }

    @Test func aGroupWritableSocketDirectoryIsRefused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let run = dir.path + "/run"
        mkdir(run, 0o700)
        chmod(run, 0o770)
        let error = try #require(throws: DiligenceError.self) { _ = try ListeningSocket.open(path: run + "/d.sock") }
        #expect(error.code.rawValue == "unsafe_directory", "\(error)")
        #expect(error.message == "\(run) is writable by other users; run `chmod 700 \(run)` or choose another socket path.")
        #expect(Sys.fileStatus(run + "/d.sock") == nil, "no socket was made there")
    }

}

/// Opening the control socket leaves the process's umask alone: it once set 0177 around
/// `bind`, and a child started by another thread in that moment (the end-to-end tests' daemons)
/// inherited it and made its directories 0600. Sampled from /proc while another thread opens
/// and closes sockets; the sockets are still 0600.
@Test func openingTheSocketNeverChangesTheProcessUmask() throws {
    func umaskNow() -> String {
        let status = (try? Files.read("/proc/self/status")) ?? nil
        return status?.split(separator: "\n").first { $0.hasPrefix("Umask:") }.map(String.init) ?? "?"
    }
    let directory = TemporaryDirectory()
    defer { directory.remove() }
    let before = umaskNow()
    let done = DispatchSemaphore(value: 0)
    let path = directory.path + "/control.sock"
    // Each open must succeed and make a 0600 socket: an open that failed would check nothing.
    let attempts = 300
    let results = Mutex<(opened: Int, problems: [String])>((0, []))
    DispatchQueue.global().async {
        for _ in 0..<attempts {
            do {
                let socket = try ListeningSocket.open(path: path)
                let mode = Sys.fileStatus(path).map { $0.st_mode & 0o777 }
                socket.close()
                results.withLock {
                    $0.opened += 1
                    if mode != 0o600 { $0.problems.append("mode \(mode.map { String($0, radix: 8) } ?? "none")") }
                }
            } catch {
                results.withLock { $0.problems.append("\(error)") }
            }
        }
        done.signal()
    }
    var seen: Set<String> = []
    while done.wait(timeout: .now()) == .timedOut { seen.insert(umaskNow()) }
    #expect(seen.subtracting([before]).isEmpty, "umask seen: \(seen.sorted()), before: \(before)")
    let (opened, problems) = results.withLock { $0 }
    #expect(opened == attempts && problems.isEmpty, "\(opened) of \(attempts) opened; \(problems.prefix(5))")
    let socket = try ListeningSocket.open(path: path)
    defer { socket.close() }
    #expect(Sys.fileStatus(path).map { $0.st_mode & 0o777 } == 0o600)
}
