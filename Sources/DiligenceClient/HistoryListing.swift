import DiligenceJSON
import DiligenceProtocol
import DiligenceTime

#if canImport(Glibc)
    import Glibc
#endif

// `history`: on a terminal a screenful of the newest sessions by default (issue 32), and every
// session streamed as the daemon reads it otherwise (issue 28; docs/diligencectl.md).

/// How `history` asks the daemon and shows the answer.
enum HistoryListing: Equatable {
    /// `--limit N`: one answer, as always.
    case whole
    /// A terminal and no `--all`, `--limit`, `--since`, `--until` or `--json`: the newest N.
    case screenful(Int)
    /// Everything else: a line per session as it is read, shown as it comes.
    case streamed
}

extension ParsedCommand {
    func historyListing(terminal: Terminal, environment: [String: String]) -> HistoryListing {
        if has("limit") { return .whole }
        if has("all") || has("since") || has("until") || has("json") || !terminal.outputIsTerminal { return .streamed }
        // The terminal's height (LINES first, as a shell exports it) less the header, the line
        // saying how to see more and the prompt's.
        let lines = environment["LINES"].flatMap { Int($0) }.flatMap { (4...100_000).contains($0) ? $0 : nil }
        return .screenful(max(1, (lines ?? terminal.windowRows ?? 24) - 3))
    }
}

let olderSessionsHint = "Older sessions not shown: --all lists every one, or --limit N, --since DATE.\n"

func history(
    _ parsed: ParsedCommand, on connection: ControlConnection, terminal: Terminal, environment: [String: String],
    send: (Request) throws(Failure) -> JSON
) throws(Failure) -> RunResult {
    switch parsed.historyListing(terminal: terminal, environment: environment) {
    case .whole:
        return RunResult(stdout: show(try send(parsed.request), for: parsed))
    case .screenful(let n):
        // One more than fits tells whether older ones exist, without counting them all.
        let sessions = try send(parsed.request(adding: [("limit", .int(n + 1))]))["sessions"]?.arrayValue ?? []
        guard sessions.count > n else { return RunResult(stdout: show(.object([("sessions", .array(sessions))]), for: parsed)) }
        var table = HistoryTable()
        return RunResult(stdout: table.rows(Array(sessions.dropFirst(sessions.count - n))) + olderSessionsHint)
    case .streamed:
        return try streamedHistory(parsed, on: connection, output: terminal.output, send: send)
    }
}

/// Asks for the stream and shows each session as it comes; a daemon from before streaming
/// (it refuses the member) is asked the old way.
private func streamedHistory(
    _ parsed: ParsedCommand, on connection: ControlConnection, output: (@Sendable (String) -> Int32)?,
    send: (Request) throws(Failure) -> JSON
) throws(Failure) -> RunResult {
    var sink = HistorySink(parsed, output: output)
    let line: JSON
    do {
        try connection.write(parsed.request(adding: [("stream", .bool(true))]).line)
        while true {
            let next = try connection.readJSONLine()
            guard let session = next["session"] else {
                line = next
                break
            }
            guard sink.add(session) else { return sink.result }
        }
    } catch {
        throw .connection(error)
    }
    if sink.count == 0, line["error"]?["code"]?.stringValue == "invalid_argument",
        line["error"]?["message"]?.stringValue?.contains("\"stream\"") == true
    {
        return RunResult(stdout: show(try send(parsed.request), for: parsed))
    }
    _ = try result(of: line)
    sink.finish()
    return sink.result
}

/// Where a streamed history goes: its table in blocks, or `--json`'s object (the same bytes
/// as the whole answer's), written out a piece at a time or kept for the result.
private struct HistorySink {
    private let parsed: ParsedCommand
    private let json: Bool
    private let output: (@Sendable (String) -> Int32)?
    private var table = HistoryTable()
    private var block: [JSON] = []
    private var text = ""
    private(set) var count = 0
    private(set) var result = RunResult()
    /// The first block is small so the first lines show at once; later ones align more rows.
    static let firstBlock = 100
    static let block = 1000

    init(_ parsed: ParsedCommand, output: (@Sendable (String) -> Int32)?) {
        self.parsed = parsed
        json = parsed.has("json")
        self.output = output
    }

    /// False once the output cannot be written (a reader that went away ends it quietly).
    mutating func add(_ session: JSON) -> Bool {
        count += 1
        if json {
            text += (count == 1 ? #"{"sessions":["# : ",") + session.serialized
            return text.utf8.count < 1 << 16 || flush()
        }
        block.append(session)
        guard block.count >= (count <= Self.firstBlock ? Self.firstBlock : Self.block) else { return true }
        text += table.rows(block)
        block.removeAll(keepingCapacity: true)
        return flush()
    }

    mutating func finish() {
        if json {
            text += count == 0 ? #"{"sessions":[]}"# + "\n" : "]}\n"
        } else if count == 0 {
            text += show(.object([("sessions", .array([]))]), for: parsed)
        } else if !block.isEmpty {
            text += table.rows(block)
        }
        _ = flush()
    }

    private mutating func flush() -> Bool {
        defer { text = "" }
        guard let output else {
            result.stdout += text
            return true
        }
        switch output(text) {
        case 0: return true
        case EPIPE: return false
        case let code:
            result = RunResult(stderr: "diligencectl: cannot write to standard output: \(String(cString: strerror(code)))\n", code: 1)
            return false
        }
    }
}

/// The history table, a block of rows at a time: a column is as wide as its widest cell so
/// far (a later block may widen it, never narrow it), and the interruptions' and devices'
/// columns appear once a session needs them, under a new header.
struct HistoryTable {
    private var marked = false
    private var devices = false
    private var widths: [Int] = []
    private var headed = false

    mutating func rows(_ sessions: [JSON]) -> String {
        let needsDevices = devices || sessions.contains { $0["device"]?.stringValue != nil }
        let needsMarks = marked || sessions.contains { !($0["interruptions"]?.arrayValue ?? []).isEmpty }
        if needsDevices != devices || needsMarks != marked {
            (devices, marked, headed, widths) = (needsDevices, needsMarks, false, [])
        }
        let header =
            ["ID", "DATE", "TIME", "TASK", "FOCUSED", "PAUSES", "OUTCOME"] + (marked ? ["INTERRUPTED"] : [])
            + (devices ? ["DEVICE"] : []) + ["NOTE"]
        let rows = (headed ? [] : [header]) + sessions.map(cells)
        widths = (0..<header.count).map { c in max(c < widths.count ? widths[c] : 0, rows.map { $0[c].displayWidth }.max() ?? 0) }
        headed = true
        let right: Set<Int> = [0, 4, 5]
        return rows.map { row in
            row.enumerated().map { c, cell in
                right.contains(c)
                    ? cell.padded(toWidth: widths[c], right: true) : c == row.count - 1 ? cell : cell.padded(toWidth: widths[c])
            }.joined(separator: "  ") + "\n"
        }.joined()
    }

    private func cells(_ s: JSON) -> [String] {
        // Another device's session names the device that recorded it: its name, else its id's
        // first digits.
        let id = s["device"]?.stringValue.map { String($0.prefix(8)) }
        let device = devices ? [(s["device_name"]?.stringValue ?? id ?? "this").truncated(toWidth: 20)] : []
        return [
            String(num(s, "id")), RFC3339.dateText(str(s, "start")),
            RFC3339.clockText(str(s, "start")) + "–" + RFC3339.clockText(str(s, "end")), str(s, "task"),
            hoursMinutes(num(s, "focused_seconds")), String(num(s, "pauses")), str(s, "outcome"),
        ] + (marked ? [interruptionMarks(s["interruptions"])] : []) + device + [
            // A long note is cut: --json has it whole.
            (s["note"]?.stringValue ?? "").truncated(toWidth: 40)
        ]
    }
}
