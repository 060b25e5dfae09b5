import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Synchronization

@testable import DiligenceClient

#if canImport(Glibc)
    import Glibc
#endif

/// A socket path where nothing listens, so a test that reaches the network by mistake fails fast.
let nowhere = "/nonexistent-diligencectl-test/diligenced.sock"

/// Runs the client with `--socket nowhere` unless the test passes its own.
func run(_ args: [String], terminal: Terminal = .none) -> RunResult {
    runClient(args, environment: ["DILIGENCE_SOCKET": nowhere], terminal: terminal)
}

/// The parsed command for `args`; fails the test when they do not parse to a command.
func parse(_ args: [String]) throws -> ParsedCommand {
    guard case .run(let parsed, _) = try parseArguments(args, defaultSocket: nowhere) else {
        throw UsageError("not a command: \(args)")
    }
    return parsed
}

/// The request line `args` would send, without its newline.
func requestLine(_ args: [String]) throws -> String {
    String(try parse(args).request.line.dropLast())
}

/// The usage error `args` give, or nil when they parse.
func usageError(_ args: [String]) -> UsageError? {
    do {
        _ = try parseArguments(args, defaultSocket: nowhere)
        return nil
    } catch {
        return error
    }
}

/// A status object as the daemon sends it.
func status(
    state: String, phase: String? = nil, task: String? = nil, color: String? = nil, round: Int = 1,
    every: Int = 4, duration: Int = 0, remaining: Int = 0, elapsed: Int = 0, today: Int = 0, goal: Int = 0
) -> JSON {
    .object([
        ("state", .string(state)), ("phase", .string(phase)), ("task", .string(task)), ("color", .string(color)),
        ("round", .int(round)), ("long_break_every", .int(every)), ("duration_seconds", .int(duration)),
        ("remaining_seconds", .int(remaining)), ("elapsed_seconds", .int(elapsed)), ("ends_at", .null),
        ("pauses", .int(0)), ("focus_mode", .bool(false)), ("today_completed", .int(today)), ("goal", .int(goal)),
    ])
}

/// A stand-in for the daemon, for client unit tests only: listens on a temporary Unix socket,
/// answers each request line with the next canned line, and records what it received.
/// (End-to-end tests run the real daemon.)
final class FakeDaemon: @unchecked Sendable {
    let path: String
    private let directory: String
    private let listener: Int32
    private let responses: [String]
    private let received = Mutex<[String]>([])
    private var thread = pthread_t()

    init(responses: [String]) {
        directory = TemporaryDirectory("diligencectl-test").path
        path = directory + "/d.sock"
        self.responses = responses
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        precondition(bound == 0 && listen(listener, 4) == 0, "cannot listen on \(path)")
        let unmanaged = Unmanaged.passRetained(self)
        pthread_create(
            &thread, nil,
            { raw in
                let daemon = Unmanaged<FakeDaemon>.fromOpaque(raw!).takeRetainedValue()
                daemon.serve()
                return nil
            }, unmanaged.toOpaque())
    }

    /// The request lines received so far (waits for the serving thread to finish).
    func requests() -> [String] {
        pthread_join(thread, nil)
        return received.withLock { $0 }
    }

    private func serve() {
        let fd = accept(listener, nil, nil)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var buffer: [UInt8] = []
        var answered = 0
        while true {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return }
            buffer += chunk[..<n]
            while let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                received.withLock { $0.append(line) }
                guard answered < responses.count else { return }
                let reply = Array((responses[answered] + "\n").utf8)
                answered += 1
                _ = reply.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            }
        }
    }

    deinit {
        close(listener)
        unlink(path)
        rmdir(directory)
    }
}
