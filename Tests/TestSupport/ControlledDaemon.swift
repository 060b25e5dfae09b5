import DiligenceJSON
import DiligenceProtocol
import Foundation

/// One API for a daemon a test talks to through its control socket, wherever it runs: inside
/// the test process (`InProcessDaemon`, DiligenceDaemonTests: fast, its state inspectable) or as
/// the real program (`DaemonUnderTest`, EndToEndTests). The two differ in how they start, stop
/// and send a line; connecting, calling, refusals, status and watching are written once, here.
public protocol ControlledDaemon: AnyObject {
    var socketPath: String { get }
    /// Sends one raw line (a newline is added) and returns the answer, parsed.
    func request(_ line: String) throws -> JSON
    /// What a failure message should show besides the answer (the live daemon's stderr and
    /// sd_notify messages); "" when there is nothing more.
    var diagnostics: String { get }
}

extension ControlledDaemon {
    public var diagnostics: String { "" }

    /// A new connection to the control socket.
    public func connect() throws -> ControlConnection {
        do {
            return try ControlConnection(path: socketPath)
        } catch {
            throw TestKitError("cannot connect to \(socketPath): \(error)\n\(diagnostics)")
        }
    }

    public func send(_ request: Request) throws -> JSON { try self.request(request.body.serialized) }

    /// `command` with `arguments`; throws unless the answer is `{"ok":true}`; returns `result`.
    @discardableResult
    public func call(_ command: String, _ arguments: [(String, JSON)] = []) throws -> JSON {
        let answer = try send(Request(command: command, arguments: arguments))
        guard answer["ok"]?.boolValue == true, let result = answer["result"] else {
            throw TestKitError("\(command) failed: \(answer.serialized)\n\(diagnostics)")
        }
        return result
    }

    /// The error of a request that must be refused; throws when it is not.
    public func failure(_ command: String, _ arguments: [(String, JSON)] = []) throws -> (code: String, message: String) {
        let answer = try send(Request(command: command, arguments: arguments))
        guard answer["ok"]?.boolValue == false, let code = answer["error"]?["code"]?.stringValue else {
            throw TestKitError("\(command) should be refused: \(answer.serialized)\n\(diagnostics)")
        }
        return (code, answer["error"]?["message"]?.stringValue ?? "")
    }

    /// The status object.
    public func status() throws -> JSON { try call("status") }

    /// `history_add`: a completed session entered by hand.
    public func addSession(_ task: String, _ start: String, _ end: String, pauses: Int = 0) throws {
        try call("history_add", [("task", .string(task)), ("start", .string(start)), ("end", .string(end)), ("pauses", .int(pauses))])
    }

    /// Starts a watch stream on a new connection.
    public func watch() throws -> EventWatcher {
        do {
            return try EventWatcher(socketPath: socketPath)
        } catch {
            throw TestKitError("watch: \(error)\n\(diagnostics)")
        }
    }
}

/// A `{"command":"watch"}` connection whose events a background thread collects with their
/// CLOCK_MONOTONIC arrival times.
public final class EventWatcher: @unchecked Sendable {
    public struct Event: CustomStringConvertible {
        public var name: String
        public var json: JSON
        public var time: Double
        public var status: JSON? { json["status"] }
        public var state: String? { status?["state"]?.stringValue }
        public var phase: String? { status?["phase"]?.stringValue }
        public var description: String { json.serialized }
    }

    private let log = ArrivalLog<Event>()

    /// Connects, sends `watch`, checks the acknowledgement, then reads events in the background.
    public init(socketPath: String) throws {
        let connection = try ControlConnection(path: socketPath)
        let box = UncheckedSendable(connection)
        let ack = try withTimeout(5, "the answer to {\"command\":\"watch\"}") {
            try box.value.send(Request(command: "watch"))
        }
        guard ack["ok"]?.boolValue == true, ack["result"]?["watching"]?.boolValue == true else {
            throw TestKitError("watch was not acknowledged with {\"ok\":true,\"result\":{\"watching\":true}}: \(ack.serialized)")
        }
        Thread.detachNewThread { [self] in
            do {
                while true {
                    let line = try box.value.readJSONLine()
                    let event = Event(name: line["event"]?.stringValue ?? "?", json: line, time: monotonicNow())
                    log.append { _ in event }
                }
            } catch {
                log.end("\(error)")
            }
        }
    }

    public var events: [Event] { log.items }

    /// The first event at index ≥ `after` that satisfies `matches`; nil after `timeout` seconds
    /// or when the stream ended.
    public func waitFor(after: Int = 0, timeout: Double, where matches: (Event) -> Bool) -> (index: Int, event: Event)? {
        log.first(after: after, timeout: timeout, where: matches).map { ($0.index, $0.item) }
    }

    /// Waits until `count` events named `name` have arrived; false after `timeout` seconds.
    public func waitForCount(of name: String, count: Int, timeout: Double) -> Bool {
        var seen = 0
        return waitFor(timeout: timeout) { event in
            if event.name == name { seen += 1 }
            return seen >= count
        } != nil
    }

    /// A summary of the stream for failure messages.
    public var transcript: String {
        let all = events
        let lines = all.suffix(40).map { String(format: "%.3f ", $0.time) + $0.json.serialized }
        return lines.joined(separator: "\n") + (log.ended.map { "\n(stream ended: \($0))" } ?? "")
    }
}
