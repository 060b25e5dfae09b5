import DiligenceCore
import DiligenceJSON
import DiligenceProtocol

#if canImport(Glibc)
    import Glibc
#endif

// Output for status bars: `--waybar`, the offline line, and the `watch` stream (docs/status-bars.md).

// MARK: Formats

/// The `state` a status bar shows while the daemon cannot be reached (not a daemon state).
let offlineState = "offline"

/// A status object standing for "no daemon": every format renders it (`{state}` is `offline`).
let offlineStatus = JSON.object([("state", .string(offlineState))])

/// The waybar `class` (and `alt`): `work`, `short-break`, `long-break`, the same with `-paused`,
/// `pending`, `idle`, `away` (the person left, whatever the timer does), or `offline`. Style
/// them in waybar's CSS as `#custom-diligence.work`.
func waybarClass(_ s: StatusView) -> String {
    let phase = (s.phase ?? "").replacing("_", with: "-")
    if s.offline { return offlineState }
    if s.presence == Presence.away.rawValue { return "away" }
    switch s.state {
    case .running? where !phase.isEmpty: return phase
    case .paused? where !phase.isEmpty: return phase + "-paused"
    case .pending?: return "pending"
    default: return "idle"
    }
}

/// The short text a bar shows: `▶ 24:59`, `⏸ 12:34`, `⏭ short break`, `⏹ 3`, `⊘ offline`.
func barText(_ s: StatusView) -> String {
    if s.offline { return "\(s.icon) offline" }
    switch s.state {
    case .running?, .paused?: return "\(s.icon) \(s.clock)"
    case .pending?: return "\(s.icon) \(s.phaseLabel)"
    default: return s.today > 0 ? "\(s.icon) \(s.today)" : s.icon
    }
}

/// One line of JSON for waybar's custom module (`return-type = json`):
/// `text`, `alt`, `tooltip`, `class` and `percentage` (elapsed share of the phase).
func waybarLine(_ status: JSON) -> String {
    let s = StatusView(status)
    var tooltip =
        s.offline
        ? "diligenced is not running. \(StartHint.current().text)"
        : statusLine(status)
    if !s.offline, s.state != .idle {
        tooltip += "\n\(s.today)\(s.goal > 0 ? " of \(s.goal)" : "") completed today"
    }
    let kind = waybarClass(s)
    let classes = [kind] + (s.countsUp.map { [$0] } ?? []) + (s.doNotDisturb ? ["dnd"] : [])
    return JSON.object([
        ("text", .string(barText(s))),
        ("alt", .string(kind)),
        ("tooltip", .string(tooltip)),
        // `flow` or `overtime` joins it while work counts up, `dnd` while the focus guard is on.
        ("class", classes.count > 1 ? .array(classes.map(JSON.string)) : .string(kind)),
        ("percentage", .int(s.percent)),
    ]).serialized
}

/// The text (without newline) `status` and `watch` print for a status object in the chosen
/// format: `--json`, `--waybar`, `--format TEMPLATE`, else the status line.
func formatStatus(_ status: JSON, for parsed: ParsedCommand) -> String {
    if parsed.has("json") { return status.serialized }
    if parsed.has("waybar") { return waybarLine(status) }
    if let template = parsed.options["format"]?.stringValue {
        // Checked when parsing, so this cannot throw; print the template as is if it somehow does.
        return (try? renderTemplate(template, status: status)) ?? template
    }
    if StatusView(status).offline { return tr("Offline · diligenced is not running") }
    return statusLine(status)
}

/// What `watch` prints for one event line: with `--json` the whole event, otherwise the status
/// in the chosen format.
func formatEvent(_ event: JSON, for parsed: ParsedCommand) -> String {
    if parsed.has("json") { return event.serialized }
    return formatStatus(event["status"] ?? .null, for: parsed)
}

/// The line `watch` prints while it cannot reach the daemon (`--json`: `{"event":"offline",...}`).
func offlineLine(for parsed: ParsedCommand, socket: String) -> String {
    if parsed.has("json") {
        return JSON.object([("event", .string(offlineState)), ("socket", .string(socket)), ("status", offlineStatus)]).serialized
    }
    return formatStatus(offlineStatus, for: parsed)
}

// MARK: Watch on a terminal

/// How `watch` shows the status: lines (pipes, status bars, `--json`/`--waybar`/`--format`), or
/// one line rewritten in place when standard output is a terminal.
enum WatchDisplay: Equatable {
    case lines
    case live(Screen)
}

/// What `watch` prints on a terminal for `status`: one line of at most `screen.columns - 1`
/// columns (the last column would make some terminals wrap), begun with a carriage return and an
/// erase-line so it replaces the one before: `▶ Study ━━━━━━━━━╸──── 12:34`. A phase that runs or
/// is paused has a progress bar of its elapsed share (up to 40 cells, in the task's colour on a
/// colour terminal); otherwise the status line.
func liveLine(_ status: JSON, screen: Screen) -> String {
    let s = StatusView(status)
    let width = max(1, screen.columns - 1)
    let body: String
    if s.state == .running || s.state == .paused {
        let clock = s.clock + (s.state == .paused ? " " + tr("paused") : "")
        var task = s.task ?? "?"
        // Icon, task, bar of at least 5 cells, clock, with a space between each.
        let fixed = s.icon.displayWidth + clock.displayWidth + 3
        task = task.truncated(toWidth: max(1, min(task.displayWidth, width - fixed - 5)))
        let cells = min(40, width - fixed - task.displayWidth)
        if cells >= 5 {
            body =
                "\(s.icon) \(task) \(progressBar(s.elapsed, of: s.duration, width: cells, color: s.color, paint: Paint(screen.colors))) \(clock)"
        } else {
            body = "\(s.icon) \(task) \(clock)".truncated(toWidth: width)
        }
    } else {
        body = (s.offline ? "\(s.icon) " + tr("Offline · diligenced is not running") : "\(s.icon) " + statusLine(status)).truncated(
            toWidth: width)
    }
    return "\r\u{1B}[K" + body
}

/// `━━━━╸────`: `part` of `whole` in `width` cells, to the half cell.
func progressBar(_ part: Int, of whole: Int, width: Int, color: String? = nil, paint: Paint = Paint(.none)) -> String {
    let halves = whole > 0 ? min(width * 2, max(0, part) * width * 2 / whole) : 0
    let done = String(repeating: "━", count: halves / 2) + (halves % 2 == 1 ? "╸" : "")
    let rest = String(repeating: "─", count: width - halves / 2 - halves % 2)
    return paint(done, color) + paint.dim(rest)
}

/// The terminal bell.
let bell = "\u{07}"

// MARK: Watch

/// Reconnection delays of `watch`: 0.1 s, doubling up to 5 s; reset once connected.
struct Backoff: Equatable {
    static let first = 0.1
    static let limit = 5.0
    private(set) var next = Backoff.first

    /// The delay to wait now; the following one doubles.
    mutating func take() -> Double {
        let delay = next
        next = min(Self.limit, next * 2)
        return delay
    }

    mutating func reset() { next = Self.first }
}

/// What became of a line `watch` printed.
enum Delivery: Equatable {
    case delivered
    /// Nobody reads any more (EPIPE): `watch` ends with status 0.
    case readerGone
    /// Any other write error: `watch` ends with status 1 and the reason.
    case failed(String)
}

/// Where `watch` sends its lines and how it waits; tests pass their own.
struct WatchIO {
    /// Prints one line (the newline is added by the caller). Anything but `.delivered` stops
    /// watching.
    var emit: (String) -> Delivery
    /// Sleeps between reconnection attempts. Returns false to stop watching.
    var sleep: (Double) -> Bool
    /// Rings the terminal's bell (`--bell`): on standard output when it is a terminal, else on
    /// standard error when that is one, else nowhere (a pipe never gets a BEL in its data).
    var ring: () -> Delivery = { .delivered }

    static var standard: WatchIO {
        WatchIO(
            emit: { line in
                switch writeAll(line, to: 1) {
                case 0: .delivered
                case EPIPE: .readerGone
                case let code: .failed("cannot write to standard output: \(String(cString: strerror(code)))")
                }
            },
            sleep: { seconds in
                var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
                var remaining = timespec()
                while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
                return true
            },
            ring: {
                if isatty(1) != 0 { return writeAll(bell, to: 1) == 0 ? .delivered : .readerGone }
                if isatty(2) != 0 { writeAll(bell, to: 2) }
                return .delivered
            })
    }
}

/// `diligencectl watch`: prints a line per event in the chosen format, skipping a line equal to
/// the previous one (ticks often change nothing a template shows). When the daemon goes away it
/// prints the offline line once and reconnects with back-off, unless `--no-reconnect`: then it
/// exits 3 (unreachable) or 1 (the stream ended). Runs until `io` says stop.
func watch(_ parsed: ParsedCommand, socket: String, io: WatchIO = .standard, display: WatchDisplay = .lines) -> RunResult {
    let reconnect = !parsed.has("no-reconnect")
    let ringing = parsed.has("bell")
    var backoff = Backoff()
    var last: String?
    /// Prints `text` unless it repeats the last line.
    func emit(_ text: String) -> Delivery {
        guard text != last else { return .delivered }
        last = text
        if case .live = display { return io.emit(text) }
        return io.emit(text + "\n")
    }
    /// The text for one event: a line, or on a terminal the rewritten line.
    func render(_ event: JSON) -> String {
        guard case .live(let screen) = display else { return formatEvent(event, for: parsed) }
        return liveLine(event["status"] ?? .null, screen: screen)
    }
    /// How `watch` ends when a line could not be delivered.
    func ending(_ delivery: Delivery) -> RunResult {
        if case .failed(let reason) = delivery { return RunResult(stderr: "diligencectl: \(reason)\n", code: ExitCode.daemonError) }
        return RunResult()
    }
    while true {
        let ended: ConnectionError
        do throws(ConnectionError) {
            let connection = try ControlConnection(path: socket)
            let ack = try connection.send(parsed.request)
            guard ack["ok"]?.boolValue == true else {
                let message = ack["error"]?["message"]?.stringValue ?? ack.serialized
                return RunResult(stderr: "diligencectl: \(message)\n", code: ExitCode.daemonError)
            }
            backoff.reset()
            while let line = try connection.readLine() {
                guard let event = try? JSON.parse(line) else { continue }
                var delivery = emit(render(event))
                // The terminal's bell (a status bar's pipe gets none): with `--bell` when a phase
                // ran to its end; without, when the daemon says no desktop showed its notification
                // (`[notifications] bell = on`).
                let name = event["event"]?.stringValue
                if delivery == .delivered, ringing ? name == "phase_completed" : name == "bell" { delivery = io.ring() }
                if delivery != .delivered { return ending(delivery) }
            }
            ended = .broken("the daemon closed the watch stream")
        } catch {
            // Never retried: waiting would not make another user's socket ours.
            if case .untrusted(let path, let reason) = error { return .untrusted(path: path, reason: reason) }
            ended = error
        }
        guard reconnect else {
            if case .unreachable(let path, let reason) = ended {
                return RunResult(stderr: unreachableMessage(path: path, reason: reason), code: ExitCode.unreachable)
            }
            if case .broken(let reason) = ended {
                return RunResult(stderr: "diligencectl: \(reason).\n", code: ExitCode.daemonError)
            }
            return RunResult(code: ExitCode.daemonError)
        }
        let offline: String
        if case .live(let screen) = display {
            offline = liveLine(offlineStatus, screen: screen)
        } else {
            offline = offlineLine(for: parsed, socket: socket)
        }
        let delivery = emit(offline)
        if delivery != .delivered { return ending(delivery) }
        if !io.sleep(backoff.take()) { return RunResult() }
    }
}
