import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceTestSupport
import Testing

@testable import DiligenceDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// Random and mutated requests against a running daemon (issue item 2). `make test` runs
/// `DILIGENCE_FUZZ_COUNT` (default 5 000) requests at a fixed seed; `make fuzz` runs 100 000.
/// `DILIGENCE_FUZZ_SEED` picks another seed; a failure message names the seed to replay.
@Suite struct FuzzTests {
    static var count: Int { environment("DILIGENCE_FUZZ_COUNT").flatMap { Int($0) } ?? 5_000 }
    static var seed: UInt64 { environment("DILIGENCE_FUZZ_SEED").flatMap { UInt64($0) } ?? 0x5EED_D111_6E4C_E001 }
    /// Growth of resident memory the whole run may cause, after a warm-up.
    static let memoryGrowthBound = 16 * 1024 * 1024

    static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    @Test func randomAndMutatedRequestsLeaveTheDaemonAnsweringAndSmall() throws {
        let d = try InProcessDaemon()
        defer { d.stop() }
        var generator = RequestGenerator(seed: Self.seed)
        var client = try FuzzClient(path: d.socketPath)
        let warmUp = min(1_000, Self.count / 5)
        var rssAfterWarmUp = 0
        var sent = 0
        var answered = (ok: 0, error: 0)
        while sent < Self.count {
            if sent >= warmUp && rssAfterWarmUp == 0 { rssAfterWarmUp = residentBytes() }
            let batch = (0..<min(20, Self.count - sent)).map { _ in generator.next() }
            for answer in try client.exchange(batch) {
                let parsed = try #require(
                    try? JSON.parse(answer), "seed \(Self.seed): not JSON: \(String(decoding: answer, as: UTF8.self))")
                if parsed["ok"] == .bool(true) {
                    answered.ok += 1
                } else {
                    answered.error += 1
                    let code = parsed["error"]?["code"]?.stringValue ?? ""
                    #expect(
                        !code.isEmpty && code.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "_" },
                        "seed \(Self.seed): \(parsed.serialized)")
                }
            }
            sent += batch.count
        }
        #expect(answered.ok + answered.error == Self.count, "seed \(Self.seed): every request gets exactly one answer")
        // Still serving, on a new connection, and no bigger than it was after the warm-up.
        #expect(try d.request("{\"command\":\"status\"}")["ok"] == .bool(true), "seed \(Self.seed)")
        let growth = residentBytes() - rssAfterWarmUp
        #expect(growth < Self.memoryGrowthBound, "seed \(Self.seed): resident memory grew \(growth / 1024) KiB over \(Self.count) requests")
        print(
            "fuzz: seed \(Self.seed), \(Self.count) requests, \(answered.ok) ok, \(answered.error) refused, RSS growth \(growth / 1024) KiB"
        )
    }
}

/// VmRSS of this process, in bytes.
func residentBytes() -> Int {
    guard let f = fopen("/proc/self/status", "r") else { return 0 }
    defer { fclose(f) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, 256, f) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.hasPrefix("VmRSS:") {
            return (Int(text.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
        }
    }
    return 0
}

/// Request lines: a third valid requests from the corpus, the rest mutations of them or noise.
struct RequestGenerator {
    var random: SeededRandom

    init(seed: UInt64) { random = SeededRandom(seed: seed) }

    static let corpus: [String] = [
        #"{"command":"status"}"#, #"{"command":"version","id":7}"#, #"{"command":"start","task":"Work"}"#,
        #"{"command":"pause"}"#, #"{"command":"resume"}"#, #"{"command":"toggle"}"#, #"{"command":"stop"}"#,
        #"{"command":"skip"}"#, #"{"command":"extend","duration":"5m"}"#, #"{"command":"extend","duration":90}"#,
        #"{"command":"task_list"}"#, #"{"command":"task_show","task":"Study"}"#,
        #"{"command":"task_add","name":"Fuzz","work":"1m","color":"red","goal":3,"autostart":"all"}"#,
        #"{"command":"task_edit","task":"Fuzz","work_seconds":61,"breaks":false,"reminder":"07:30"}"#,
        #"{"command":"task_remove","task":"Fuzz"}"#, #"{"command":"reload","id":"r"}"#,
        #"{"command":"start","task":"Fuzz","id":[1,{"a":null}]}"#,
    ]

    /// Fragments that tend to reach edge cases when spliced in.
    static let fragments: [String] = [
        "1e400", "-0", "18446744073709551616", "\\u0000", "\\ud800", "\"", "{", "[", "]", "}", ",", ":",
        "null", "true", "\u{7F}", "\u{10FFFF}", String(repeating: "[", count: 40), "\"command\"", "\r",
    ]

    private mutating func int(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }

    mutating func next() -> [UInt8] {
        var bytes: [UInt8]
        switch int(3) {
        case 0:
            bytes = Array(Self.corpus[int(Self.corpus.count)].utf8)
        case 1:
            bytes = Array(Self.corpus[int(Self.corpus.count)].utf8)
            for _ in 0...int(4) { mutate(&bytes) }
        default:
            bytes = (0..<int(200)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        }
        // One request per line: no newline inside; never a watch (it would end the exchange);
        // not empty (an empty line gets no answer by design).
        bytes = bytes.map { $0 == 0x0A ? 0x20 : $0 }
        if let w = String(validating: bytes, as: UTF8.self), w.contains("watch") {
            bytes = Array(w.replacingWatch.utf8)
        }
        while bytes.last == 0x0D { bytes.removeLast() }
        return bytes.isEmpty ? Array("x".utf8) : bytes
    }

    private mutating func mutate(_ bytes: inout [UInt8]) {
        let at = bytes.isEmpty ? 0 : int(bytes.count)
        switch int(6) {
        case 0: if !bytes.isEmpty { bytes[at] ^= UInt8(truncatingIfNeeded: 1 << int(8)) }
        case 1: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: at)
        case 2: if !bytes.isEmpty { bytes.removeSubrange(at..<min(bytes.count, at + 1 + int(8))) }
        case 3: bytes.insert(contentsOf: Self.fragments[int(Self.fragments.count)].utf8, at: at)
        case 4: bytes.insert(contentsOf: Self.corpus[int(Self.corpus.count)].utf8.prefix(int(40)), at: at)
        default: bytes = Array(bytes.prefix(at))
        }
    }
}

extension String {
    fileprivate var replacingWatch: String { split(separator: "watch", omittingEmptySubsequences: false).joined(separator: "w4tch") }
}

/// Writes a batch of raw request lines on one connection and reads one answer line per request.
struct FuzzClient {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let address = try #require(Sys.unixAddress(path))
        try #require(Sys.withSockaddr(address) { connect(fd, $0, $1) } == 0)
        // A daemon that stops answering fails the test instead of hanging it.
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    mutating func exchange(_ lines: [[UInt8]]) throws -> [[UInt8]] {
        var out: [UInt8] = []
        for line in lines { out += line + [0x0A] }
        var written = 0
        while written < out.count {
            let n = out[written...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            try #require(n > 0, "write failed: \(String(cString: strerror(errno)))")
            written += n
        }
        var answers: [[UInt8]] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while answers.count < lines.count {
            if let newline = buffer.firstIndex(of: 0x0A) {
                answers.append(Array(buffer[..<newline]))
                buffer.removeSubrange(...newline)
                continue
            }
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            try #require(
                n > 0, "no answer after \(answers.count) of \(lines.count): \(n == 0 ? "closed" : String(cString: strerror(errno)))")
            buffer += chunk[..<n]
        }
        return answers
    }
}
