import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceSync
import DiligenceTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The grammar-based fuzzer (docs/reliability.md): requests generated from the protocol's own
/// command schema, every field at the values where code breaks — 0, ±1, ±2^31, ±2^53, ±2^63,
/// 1e308, -0, the ends of its range and one past them, huge and hidden strings, dates at and
/// past the date window, wrong types, missing and extra members — sent to the real
/// `diligenced`. Every answer must be `ok` or an error code docs/protocol.md lists, the daemon
/// must never die, and its memory must stay bounded.
///
/// `DILIGENCE_GRAMMAR_FUZZ_COUNT` (default 100 000) and `DILIGENCE_FUZZ_SEED` change the run;
/// a failure names the seed and the request.
extension EndToEnd {
    @Suite("Grammar fuzzing: requests generated from the command schema")
    struct GrammarFuzz {
        static var count: Int { ProcessInfo.processInfo.environment["DILIGENCE_GRAMMAR_FUZZ_COUNT"].flatMap { Int($0) } ?? 100_000 }
        static var seed: UInt64 {
            ProcessInfo.processInfo.environment["DILIGENCE_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x5EED_D111_6E4C_E001
        }
        /// Growth of the daemon's resident memory the whole run may cause, after a warm-up.
        static let memoryGrowthBound = 32 * 1024 * 1024
        /// Requests per write: pipelined, answered in order.
        static let batch = 50
        static let okPrefix = Array(#"{"ok":true,"result":"#.utf8)

        /// Sync folders that are not what they seem (issue 26), for `sync_enable`: a FIFO, a link
        /// to it, a device, and a folder whose journal names hold a FIFO, a link to a journal
        /// outside, a directory. No request may hang on one (the next batch would time out).
        static let outsideLine = SyncFuzz.line(1_764_569_662_123, .taskAdded(SyncFuzz.task(7, "Outside")))

        static func specialFiles(in root: String) throws -> [String] {
            let fifo = root + "/fifo"
            let folder = root + "/special-sync"
            let outside = root + "/outside.jsonl"
            try outsideLine.write(toFile: outside, atomically: false, encoding: .utf8)
            let made = [
                mkfifo(fifo, 0o600), symlink(fifo, root + "/fifo-link"), mkdir(folder, 0o700),
                mkfifo(folder + "/5eed0000-0000-4000-8000-00000000f0f1.jsonl", 0o600),
                symlink(outside, folder + "/5eed0000-0000-4000-8000-00000000f0f2.jsonl"),
                mkdir(folder + "/5eed0000-0000-4000-8000-00000000f0f3.jsonl", 0o700),
            ]
            try #require(made.allSatisfy { $0 == 0 }, "\(made)")
            return [fifo, root + "/fifo-link", "/dev/zero", folder]
        }

        @Test("100 000 seeded requests from the schema: each answered ok or with a documented code; the daemon lives and stays small")
        func generatedRequests() throws {
            // tmpfs: every write is fsynced, and 100 000 requests write thousands of times.
            let onTmpfs = access("/dev/shm", W_OK) == 0
            let d = try onTmpfs ? DaemonUnderTest(base: "/dev/shm", prefix: "diligence-test-\(TestRun.id)") : DaemonUnderTest()
            let documented = try ProtocolDocs.answerCodes()
            var generator = SchemaRequestGenerator(seed: Self.seed, backupDirectory: d.root)
            generator.specialPaths = try Self.specialFiles(in: d.root)
            let connection = try PipelinedConnection(path: d.socketPath)
            let warmUp = min(2_000, Self.count / 5)
            var rssAfterWarmUp = 0
            var sent = 0
            var ok = 0
            var codes: [String: Int] = [:]
            var undocumented = 0
            // Requests the generator made invalid on purpose, and answers that broke the oracle.
            var refusedByConstruction = 0
            var mismatched = 0
            while sent < Self.count {
                if sent >= warmUp && rssAfterWarmUp == 0 { rssAfterWarmUp = residentBytes(of: d.process?.pid) }
                let requests = (0..<min(Self.batch, Self.count - sent)).map { _ in generator.next() }
                let lines = requests.map(\.line)
                let answers: [[UInt8]]
                do {
                    answers = try connection.exchange(lines)
                } catch {
                    let status = d.process?.poll().map { "\($0)" } ?? "still running"
                    Issue.record(
                        "seed \(Self.seed): a batch after request \(sent) was not answered (daemon \(status)): \(error)\nbatch: \(lines.map { $0.prefix(200) })\n\(d.diagnostics)"
                    )
                    return
                }
                for (request, bytes) in zip(requests, answers) {
                    let line = request.line
                    // An answer is the daemon's own serialization: `{"ok":true,"result":...`
                    // needs no parsing to count (a large report parsed in a debug build costs
                    // more than the daemon took to write it); every 64th is parsed in full.
                    // A request the schema must refuse, or one with an id, is always checked.
                    if bytes.starts(with: Self.okPrefix) && (sent + ok) % 64 != 0 && request.expectedCode == nil && request.id == nil {
                        ok += 1
                        continue
                    }
                    guard let answer = try? JSON.parse(bytes) else {
                        Issue.record(
                            "seed \(Self.seed): not JSON in answer to \(line.prefix(300)): \(String(decoding: bytes.prefix(300), as: UTF8.self))"
                        )
                        return
                    }
                    if let id = request.id, let sentID = try? JSON.parse(Array(id.utf8)), sentID != .null {
                        if answer["id"] != sentID {
                            mismatched += 1
                            if mismatched <= 20 {
                                Issue.record(
                                    "seed \(Self.seed): id \(id) not echoed for \(line.prefix(300)): \(answer.serialized.prefix(300))")
                            }
                        }
                    }
                    if let expected = request.expectedCode {
                        refusedByConstruction += 1
                        if answer.errorCode != expected {
                            mismatched += 1
                            if mismatched <= 20 {
                                Issue.record(
                                    "seed \(Self.seed): \(line.prefix(300)) must be refused with \(expected): \(answer.serialized.prefix(300))"
                                )
                            }
                        }
                    }
                    if answer.isOK {
                        ok += 1
                    } else {
                        let code = answer.errorCode ?? "(none)"
                        codes[code, default: 0] += 1
                        if !documented.contains(code) {
                            undocumented += 1
                            if undocumented > 20 { return }
                            Issue.record(
                                "seed \(Self.seed): undocumented error code \(code) for \(line.prefix(300)): \(answer.serialized.prefix(300))"
                            )
                        }
                    }
                }
                sent += lines.count
                if let status = d.process?.poll() {
                    Issue.record("seed \(Self.seed): the daemon died (\(status)) after request \(sent)\n\(d.diagnostics)")
                    return
                }
            }
            #expect(d.process?.isRunning == true)
            #expect(try d.status()["state"] != nil)
            // The special folder was enabled (its FIFO, link and directory skipped, said in the
            // log), and nothing was read or written through the link in it.
            #expect(d.stderr.contains("event=sync_file_skipped"), "seed \(Self.seed): the special sync folder was never merged")
            #expect(!(try SyncMerge.taskNames(d)).contains("Outside"))
            #expect(readTextFile(d.root + "/outside.jsonl") == Self.outsideLine, "the link's target unchanged")
            let growth = residentBytes(of: d.process?.pid) - rssAfterWarmUp
            #expect(
                growth < Self.memoryGrowthBound,
                "seed \(Self.seed): the daemon's memory grew \(growth / 1024) KiB over \(Self.count) requests")
            // The generator reaches the handlers, not only the schema's refusals.
            #expect(ok > Self.count / 20, "only \(ok) of \(Self.count) requests were served")
            #expect(refusedByConstruction > Self.count / 20, "only \(refusedByConstruction) requests invalid by construction")
            #expect(mismatched == 0, "\(mismatched) answers broke the oracle (the first 20 are recorded above)")
            let summary = codes.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            print(
                "grammar fuzz: seed \(Self.seed), \(Self.count) requests, \(ok) ok, \(refusedByConstruction) invalid by construction; refused: \(summary); RSS growth \(growth / 1024) KiB"
            )
        }

        /// The daemon's output backlog (docs/reliability.md): past it a client is read no more.
        static let outputBacklog = 256 * 1024

        /// The socket itself takes a good part of an answer at once (its buffer), so the answers
        /// go well past the backlog too: only there does back-pressure start and end.
        @Test("Generated requests pipelined after answers of 0.9 to 3 times the output backlog: each answered once, in order")
        func generatedRequestsAfterLargeAnswers() throws {
            let d = try DaemonUnderTest()
            let sessions = 3_000
            let utc = ISO8601DateFormatter()
            let lines = (0..<sessions).map { i in
                let start = Date(timeIntervalSince1970: 1_700_000_000 + Double(i) * 3_600)
                return
                    #"{"task":"Work","start":"\#(utc.string(from: start))","end":"\#(utc.string(from: start + 1_500))","planned_seconds":1500,"focused_seconds":1500,"pauses":0,"outcome":"completed"}"#
            }
            for chunk in stride(from: 0, to: sessions, by: 200) {
                try d.call("import", [("content", .string(lines[chunk..<min(chunk + 200, sessions)].joined(separator: "\n")))])
            }
            // Sessions per answer of the backlog's size: one history line is about the same for each.
            let whole = try d.call("history").serialized.utf8.count
            let perSession = Double(whole) / Double(sessions)
            var generator = SchemaRequestGenerator(seed: Self.seed ^ 0x26, backupDirectory: d.root)
            let connection = try PipelinedConnection(path: d.socketPath)
            let documented = try ProtocolDocs.answerCodes()
            let fractions = [0.9, 1.0, 1.1, 1.5, 2.0, 3.0]
            for round in 0..<(3 * fractions.count) {
                let fraction = fractions[round % fractions.count]
                let limit = Int(Double(Self.outputBacklog) * fraction / perSession)
                // Without the removals: the large answers need the sessions (a new command in the
                // schema shifts the seeded sequence onto a `task_remove` of Work).
                var batch = (0..<20).map { _ in generator.next().line }.filter {
                    !$0.contains(#""command":"task_remove""#) && !$0.contains(#""command":"history_remove""#)
                }
                let large = #"{"command":"history","limit":\#(limit),"id":"large \#(round)"}"#
                batch.insert(large, at: generator.int(4))
                batch.append(#"{"command":"status","id":"last \#(round)"}"#)
                let answers = try connection.exchange(batch, timeout: 30)
                for (line, bytes) in zip(batch, answers) {
                    let answer = try JSON.parse(bytes)
                    if line == large {
                        #expect(answer["id"] == .string("large \(round)"), "seed \(Self.seed): \(answer.serialized.prefix(200))")
                        #expect(
                            (answer["result"]?["sessions"]?.arrayValue?.count ?? 0) > limit / 2,
                            "seed \(Self.seed): \(answer.serialized.prefix(300))")
                    } else if !answer.isOK {
                        let code = answer.errorCode ?? "(none)"
                        #expect(documented.contains(code), "seed \(Self.seed): undocumented \(code) for \(line.prefix(300))")
                    }
                }
                // The last line's answer is the last answer: nothing was answered twice or skipped.
                #expect(try JSON.parse(#require(answers.last))["id"] == .string("last \(round)"))
            }
        }
    }
}

/// VmRSS of process `pid`, in bytes (0 when it cannot be read).
func residentBytes(of pid: pid_t?) -> Int {
    guard let pid else { return 0 }
    for line in readTextFile("/proc/\(pid)/status").split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }
    return 0
}

/// One connection that writes a batch of request lines and reads their answers at the same time
/// (a large answer must not wait for the rest of the batch to be written), with a timeout, so a
/// daemon that hangs fails the test instead of hanging it.
final class PipelinedConnection {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw HarnessError("cannot connect to \(path): \(reason)")
        }
    }

    deinit { close(fd) }

    static let sessionLine = Array(#"{"session":"#.utf8)

    /// Sends `lines` (a newline after each) and returns one answer line per line, in order.
    func exchange(_ lines: [String], timeout: Double = 60) throws -> [[UInt8]] {
        var out = Array(lines.map { $0 + "\n" }.joined().utf8)[...]
        var answers: [[UInt8]] = []
        let deadline = monotonicNow() + timeout
        var chunk = [UInt8](repeating: 0, count: 65536)
        while answers.count < lines.count {
            while let newline = buffer.firstIndex(of: 0x0A), answers.count < lines.count {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                // A streamed history's session lines come before its one answer (`"stream": true`).
                if !line.starts(with: Self.sessionLine) { answers.append(line) }
            }
            if answers.count == lines.count { break }
            let left = deadline - monotonicNow()
            guard left > 0 else { throw HarnessError("timed out after \(answers.count) of \(lines.count) answers") }
            var poller = pollfd(fd: fd, events: Int16(POLLIN) | (out.isEmpty ? 0 : Int16(POLLOUT)), revents: 0)
            guard poll(&poller, 1, Int32(min(left, 1) * 1000)) >= 0 || errno == EINTR else {
                throw HarnessError("poll: \(String(cString: strerror(errno)))")
            }
            if poller.revents & Int16(POLLOUT) != 0, !out.isEmpty {
                let n = out.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n > 0 {
                    out = out.dropFirst(n)
                } else if errno != EAGAIN && errno != EINTR {
                    throw HarnessError("send: \(String(cString: strerror(errno)))")
                }
            }
            if poller.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n == 0 { throw HarnessError("the daemon closed the connection after \(answers.count) of \(lines.count) answers") }
                if n > 0 {
                    buffer += chunk[..<n]
                } else if errno != EAGAIN && errno != EINTR {
                    throw HarnessError("read: \(String(cString: strerror(errno)))")
                }
            }
        }
        return answers
    }
}

/// Request lines built from `CommandSpec.all`: a command, then each of its fields absent, at a
/// value of its own type (mostly at a boundary), of another type, or null; now and then a
/// required member dropped, an unknown member added, or an `id`.
struct SchemaRequestGenerator {
    var random: SeededRandom
    /// `watch` turns the connection into an event stream; every other command is generated.
    let commands = CommandSpec.all.filter { $0.name != "watch" }
    /// Paths that are not regular files or folders (a FIFO, a link, a device), given as a
    /// `directory` now and then.
    var specialPaths: [String] = []

    /// Where `backup` may write: a few names there are backed up to once, then exist.
    let backupDirectory: String

    init(seed: UInt64, backupDirectory: String) {
        random = SeededRandom(seed: seed)
        self.backupDirectory = backupDirectory
    }

    /// A `backup` path: new, existing, relative, a directory, in a missing or unwritable one.
    mutating func backupPath() -> String {
        pick([
            backupDirectory + "/fuzz-backup-\(int(3)).sqlite3", backupDirectory, backupDirectory + "/missing/x.sqlite3",
            "/proc/diligence-fuzz.sqlite3", "relative.sqlite3", "", "/dev/null", backupDirectory + "/data/diligence/diligence.sqlite3",
        ])
    }

    mutating func int(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
    mutating func chance(_ percent: Int) -> Bool { int(100) < percent }
    mutating func pick<T>(_ items: [T]) -> T { items[int(items.count)] }

    /// Numbers where conversions trap, written as JSON text.
    static let numbers = BoundaryValues.numbers
    /// Break rules of flow tasks: ratios and tables at their edges, and ones that are none.
    static let breakRules = [
        "1/5", "1/1", "100/100", "0/5", "6/5", "1/101", "1/0", "<25m=5m,<50m=8m,else=15m", "<25m=5m", "else=5m",
        "<50m=5m,<25m=8m,else=9m", "<24h=24h,else=1s", "<25m=0s,else=5m", " 1 / 5 ", "", "1/5/2",
    ]

    /// Strings that break text handling and date arithmetic.
    static let strings: [String] = [
        "", " ", "Work", "work", "Study", "WORK", "Exercise", "Fuzz", "x",
        "Work\\u200b", "\\u202eWork", "Work\\u00a0", "Caf\\u00e9", "Cafe\\u0301", "\\u0000", "a\\u0000b", "\\ud83d\\ude00",
        "\\ue000", "\\n", "\\t", "\\u2028", "0", "-1", "1e308", "null", "true",
        "today", "tomorrow", "yesterday", "monday", "sun", "mo",
        "1990-01-01", "1989-12-31", "0001-01-01", "0000-01-01", "9999-12-31", "2099-01-01", "2026-02-30", "2024-02-29",
        "1970-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "0000-01-01T00:00:00+00:00", "9999-12-31T23:59:59+23:59",
        "2099-06-01T12:00:00Z", "1990-01-01T00:00:00Z", "2026-06-10T09:00:00+02:00", "2026-06-10T09:00:00.5-14:00",
        "00:00", "23:59", "24:00", "09:00", "9:00", "2026-06-10 09:00", "1990-01-01 00:00:00",
        "25m", "0s", "1s", "24h", "24h1s", "999999999h", "1h30m", "-5m", "25",
        "off", "rain", "csv", "jsonl", "ics", "xml", "all", "year", "month", "week", "decade",
    ]

    /// The same, longer than any limit: 1 000, 64 characters and one more, most of a line.
    mutating func hugeString() -> String {
        switch int(4) {
        case 0: return String(repeating: "x", count: 65)
        case 1: return String(repeating: "é", count: 1001)
        case 2: return String(repeating: "\\u200b", count: 300)
        default: return String(repeating: "y", count: 15_000)
        }
    }

    /// A JSON value of the wrong kind for most fields.
    mutating func anyValue() -> String {
        pick([
            "null", "true", "false", "[]", "{}", "[1,2]", "{\"a\":1}", "\"\"", "0", "[[[[[[]]]]]]", pick(Self.numbers),
            quoted(pick(Self.strings)),
        ])
    }

    func quoted(_ escaped: String) -> String { "\"" + escaped + "\"" }

    /// What the schema must answer for one member's value: it passes, it is refused with this
    /// code, or the generator cannot say (a text the handler judges, a number at a boundary).
    enum Verdict: Equatable {
        case valid
        case refused(String)
        case unknown, notGiven
    }

    /// A value for `field`: mostly of its own type at a boundary, sometimes anything.
    mutating func value(for field: FieldSpec) -> (text: String, verdict: Verdict) {
        if chance(15) {
            let value = anyValue()
            return (value, Self.verdict(ofKind: value, for: field))
        }
        switch field.type {
        case .integer(let range):
            switch int(4) {
            case 0: return (String(range.lowerBound), .valid)
            case 1: return (String(range.upperBound), .valid)
            case 2:
                // One past an end, where one exists in 64 bits.
                if chance(50) {
                    return range.lowerBound == .min
                        ? (String(range.lowerBound), .valid) : (String(range.lowerBound - 1), .refused("out_of_range"))
                }
                return range.upperBound == .max
                    ? (String(range.upperBound), .valid) : (String(range.upperBound + 1), .refused("out_of_range"))
            default: return (pick(Self.numbers), .unknown)
            }
        case .duration:
            return (chance(50) ? pick(Self.numbers) : quoted(pick(Self.strings)), .unknown)
        case .boolean:
            let value = pick(["true", "false", "\"true\"", "1"])
            return (value, value == "true" || value == "false" ? .valid : .refused("invalid_argument"))
        case .choice(let words, let code):
            let word = chance(80) ? pick(words) : pick(Self.strings)
            return (quoted(word), words.contains(word) ? .valid : .refused(code.rawValue))
        case .timeOfDay, .nameOrOff:
            return chance(20) ? ("null", .valid) : (quoted(pick(Self.strings)), .unknown)
        case .breakRule:
            let rule = pick(Self.breakRules)
            return (quoted(rule), FlowBreakRule.parse(rule) == nil ? .refused("invalid_value") : .valid)
        case .durationOrOff:
            if chance(20) { return (pick(["null", quoted("off")]), .valid) }
            return (chance(50) ? pick(Self.numbers) : quoted(pick(Self.strings)), .unknown)
        case .text, .taskName, .deviceName, .note:
            if field.name == "content" { return (quoted(importContent()), .unknown) }
            if field.name == "path" && chance(80) { return (quoted(backupPath()), .unknown) }
            if field.name == "directory", !specialPaths.isEmpty, chance(30) { return (quoted(pick(specialPaths)), .unknown) }
            return (chance(5) ? quoted(hugeString()) : quoted(pick(Self.strings)), .unknown)
        }
    }

    /// The verdict on a value of any kind (`anyValue`): refused when its JSON kind is not one
    /// the field takes; null is "not given" but where it means "off".
    static func verdict(ofKind value: String, for field: FieldSpec) -> Verdict {
        let kind: String =
            switch value.first {
            case "n": "null"
            case "t", "f": "boolean"
            case "[": "array"
            case "{": "object"
            case "\"": "string"
            default: "number"
            }
        let takes: Set<String>
        switch field.type {
        case .integer: takes = ["number"]
        case .duration: takes = ["number", "string"]
        case .boolean: takes = ["boolean"]
        case .timeOfDay, .nameOrOff: takes = ["string", "null"]
        case .durationOrOff: takes = ["number", "string", "null"]
        case .text, .taskName, .deviceName, .note, .choice, .breakRule: takes = ["string"]
        }
        if kind == "null" && !takes.contains("null") { return .notGiven }
        if !takes.contains(kind) { return .refused("invalid_argument") }
        return kind == "boolean" || kind == "null" ? .valid : .unknown
    }

    /// A few lines of an import: sessions with fields at their edges, duplicates, garbage.
    mutating func importContent() -> String {
        var lines: [String] = []
        for _ in 0..<(1 + int(4)) {
            if chance(10) {
                lines.append(pick(["", "x", "{}", "[]", "{\\\"task\\\":1}"]))
                continue
            }
            let task = pick(["Work", "Study", "work", "Nope", ""])
            let start = pick([
                "2026-06-01T09:00:00Z", "0001-01-01T00:00:00Z", "2099-01-01T00:00:00Z", "1990-01-01T00:00:00Z", "2026-06-01T09:10:00Z",
                "bad",
            ])
            let end = pick([
                "2026-06-01T09:25:00Z", "2026-06-03T09:25:00Z", "0001-01-01T00:25:00Z", "2099-01-01T00:25:00Z", "2026-06-01T09:00:00Z",
                "1990-01-01T00:25:00Z",
            ])
            let planned = pick(["1500", "0", "-1", "1e308", "9223372036854775807", "86400", "\\\"x\\\""])
            let focused = pick(["1500", "86400", "0", "-1", "1e308", "9223372036854775808", "1500.5"])
            let pauses = pick(["0", "3", "-1", "1e9", "2147483648"])
            let outcome = pick(["completed", "skipped", "abandoned", "won"])
            let line =
                "{\\\"task\\\":\\\"\(task)\\\",\\\"start\\\":\\\"\(start)\\\",\\\"end\\\":\\\"\(end)\\\",\\\"planned_seconds\\\":\(planned),"
                + "\\\"focused_seconds\\\":\(focused),\\\"pauses\\\":\(pauses),\\\"outcome\\\":\\\"\(outcome)\\\"}"
            lines.append(line)
            if chance(20) { lines.append(line) }
        }
        return lines.joined(separator: "\\n") + (chance(50) ? "\\n" : "")
    }

    /// One request line, the code the schema must refuse it with when the generator knows it,
    /// and the `id` it carries (the answer must echo it).
    struct Request {
        var line: String
        var expectedCode: String?
        var id: String?
    }

    /// One request line.
    mutating func next() -> Request {
        let spec = pick(commands)
        var members: [String] = ["\"command\":\"\(spec.name)\""]
        var verdicts: [String: Verdict] = [:]
        for field in spec.fields {
            if field.isRequired && chance(3) { continue }
            if !field.isRequired && chance(40) { continue }
            let (text, verdict) = chance(5) ? ("null", Self.verdict(ofKind: "null", for: field)) : value(for: field)
            members.append("\"\(field.name)\":" + text)
            verdicts[field.name] = verdict
        }
        var known = true
        var unknownMember = false
        if chance(3) {
            let name = pick(["wrok", "offset", "task", "Task", ""])
            members.append("\"\(name)\":\(anyValue())")
            // A field's name a second time: which of the two counts is the parser's business.
            if spec.field(name) == nil { unknownMember = true } else { known = false }
        }
        var id: String?
        if chance(10) && spec.field("id") == nil {
            id = anyValue()
            members.append("\"id\":\(id!)")
        }
        if chance(5) { members.swapAt(0, members.count - 1) }
        let line = "{" + members.joined(separator: ",") + "}"
        // A number no double holds (1e400) anywhere refuses the line as JSON, before any field
        // (and before its id is read).
        let overflows = members.contains { member in
            guard let colon = member.lastIndex(of: ":") else { return false }
            return Double(member[member.index(after: colon)...])?.isInfinite == true
        }
        if overflows { return Request(line: line, expectedCode: "number_out_of_range") }
        guard known else { return Request(line: line, id: id) }
        // As `CommandSpec.validate` checks: an unknown member first, then each field in order.
        if unknownMember { return Request(line: line, expectedCode: "invalid_argument", id: id) }
        for field in spec.fields {
            switch verdicts[field.name] ?? .notGiven {
            case .notGiven: if field.isRequired { return Request(line: line, expectedCode: "missing_argument", id: id) }
            case .valid: continue
            case .refused(let code): return Request(line: line, expectedCode: code, id: id)
            case .unknown: return Request(line: line, id: id)
            }
        }
        return Request(line: line, id: id)
    }
}
