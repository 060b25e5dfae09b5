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
/// Every answer is JSON with a code docs/protocol.md lists; a corpus line sent unmutated is never
/// refused as a request (those that ask nothing of the timer's state succeed) and gets its id
/// back. The daemon runs in this process beside other suites, so its memory is measured where it
/// runs alone: the grammar fuzzer's daemon (EndToEndTests/GrammarFuzzTests.swift).
@Suite struct FuzzTests {
    static var count: Int { environment("DILIGENCE_FUZZ_COUNT").flatMap { Int($0) } ?? 5_000 }
    static var seed: UInt64 { environment("DILIGENCE_FUZZ_SEED").flatMap { UInt64($0) } ?? 0x5EED_D111_6E4C_E001 }

    static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    /// Codes that refuse a line as a request (its JSON, its command or its arguments): a valid
    /// corpus line must never get one.
    static let requestRefusals: Set<String> = [
        "invalid_json", "invalid_utf8", "too_deep", "number_out_of_range", "not_an_object", "missing_command", "unknown_command",
        "invalid_argument", "out_of_range", "missing_argument", "line_too_long",
    ]

    @Test func randomAndMutatedRequestsLeaveTheDaemonAnsweringWithDocumentedCodes() throws {
        let documented = try ProtocolDocs.answerCodes()
        let d = try InProcessDaemon()
        defer { d.stop() }
        var generator = RequestGenerator(seed: Self.seed)
        var client = try FuzzClient(path: d.socketPath)
        var sent = 0
        var answered = (ok: 0, error: 0, unmutated: 0)
        while sent < Self.count {
            let batch = (0..<min(20, Self.count - sent)).map { _ in generator.next() }
            for (request, answer) in zip(batch, try client.exchange(batch.map(\.bytes))) {
                let parsed = try #require(
                    try? JSON.parse(answer), "seed \(Self.seed): not JSON: \(String(decoding: answer, as: UTF8.self))")
                let code = parsed["error"]?["code"]?.stringValue
                if parsed["ok"] == .bool(true) {
                    answered.ok += 1
                } else {
                    answered.error += 1
                    #expect(documented.contains(code ?? "(none)"), "seed \(Self.seed): undocumented code: \(parsed.serialized)")
                }
                guard let original = request.unmutated else { continue }
                answered.unmutated += 1
                let line = try #require(try? JSON.parse(Array(original.utf8)))
                #expect(!Self.requestRefusals.contains(code ?? ""), "seed \(Self.seed): \(original) refused: \(parsed.serialized)")
                #expect(parsed["id"] == line["id"], "seed \(Self.seed): \(original) answered with id \(parsed["id"]?.serialized ?? "none")")
                if RequestGenerator.alwaysServed.contains(original) {
                    #expect(parsed["ok"] == .bool(true), "seed \(Self.seed): \(original) → \(parsed.serialized)")
                }
            }
            sent += batch.count
        }
        // The generator reaches both sides: served requests and refusals, unmutated lines among them.
        #expect(answered.ok > Self.count / 20 && answered.error > Self.count / 2 && answered.unmutated > Self.count / 5, "\(answered)")
        // Still serving, on a new connection.
        #expect(try d.request("{\"command\":\"status\"}")["ok"] == .bool(true), "seed \(Self.seed)")
        print(
            "fuzz: seed \(Self.seed), \(Self.count) requests, \(answered.ok) ok, \(answered.error) refused, \(answered.unmutated) unmutated"
        )
    }
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

    /// Corpus lines that ask nothing of the timer's state or the task list: always served.
    static let alwaysServed: Set<String> = [
        #"{"command":"status"}"#, #"{"command":"version","id":7}"#, #"{"command":"task_list"}"#,
        #"{"command":"task_show","task":"Study"}"#, #"{"command":"reload","id":"r"}"#,
    ]

    /// A request line, and the corpus line it is when sent unmutated.
    struct Line {
        var bytes: [UInt8]
        var unmutated: String?
    }

    mutating func next() -> Line {
        var bytes: [UInt8]
        switch int(3) {
        case 0:
            let line = Self.corpus[int(Self.corpus.count)]
            return Line(bytes: Array(line.utf8), unmutated: line)
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
        return Line(bytes: bytes.isEmpty ? Array("x".utf8) : bytes)
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
