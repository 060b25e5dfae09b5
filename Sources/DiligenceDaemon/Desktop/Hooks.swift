import DiligenceCore
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the `[hooks]` commands (docs/notifications.md). Hooks run one at a time, in the order of
/// their events: a hook that sets a chat status or calls a time tracker for `away` has ended
/// before the one for `back` starts, so the last event's hook has the last word. The timer never
/// waits for them: a hook waits in line, and each is ended at its time limit (SIGTERM, then
/// SIGKILL), so one hook holds the line for at most that long. Its output goes to the log line by
/// line. argv comes from the config file only: event data (a task name such as `x; rm -rf ~`)
/// reaches a hook as environment and stdin, never as code.
final class Hooks {
    /// A hook waiting for the one before it to end.
    private struct Waiting {
        var event: String
        var argv: [String]
        var variables: [(String, String)]
        var payload: String
        var timeoutSeconds: Int
    }

    /// The most hooks that wait in line; past it the oldest waiting one is dropped (logged): hooks
    /// that end at their limit while events keep coming must not grow the daemon without bound.
    static let maxWaiting = 64

    private let queue: DispatchQueue
    /// The hook running, kept alive until it is reaped.
    private var running: Subprocess?
    private var waiting: [Waiting] = []

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Runs the hook for `event` (`work_end`, `reminder`, ...) if one is configured, after the
    /// hooks of earlier events. `variables` go into its environment on top of the daemon's,
    /// `payload` to its stdin (both as they are now, whenever it starts).
    func run(_ event: String, settings: HookSettings, variables: [(String, String)], payload: String) {
        guard let argv = settings.commands[event] else { return }
        if waiting.count >= Self.maxWaiting {
            let dropped = waiting.removeFirst()
            Log.warning("on_\(dropped.event) dropped: \(Self.maxWaiting) hooks wait already.", fields: Self.fields(dropped.event))
        }
        waiting.append(Waiting(event: event, argv: argv, variables: variables, payload: payload, timeoutSeconds: settings.timeoutSeconds))
        startNext()
    }

    private static func fields(_ event: String) -> [(String, String)] { [("EVENT", "hook"), ("HOOK", "on_\(event)")] }

    /// Starts the first waiting hook when none runs.
    private func startNext() {
        while running == nil, !waiting.isEmpty {
            let next = waiting.removeFirst()
            let hook = "on_\(next.event)"
            let fields = Self.fields(next.event)
            do {
                let child = try Subprocess(
                    argv: next.argv, environment: Subprocess.environment(with: next.variables), input: Array(next.payload.utf8),
                    queue: queue,
                    onLine: { line in Log.info("\(hook): \(line)", fields: fields) },
                    onExit: { [weak self] pid, status in
                        if status == 0 {
                            Log.debug("\(hook) (pid \(pid)) finished.", fields: fields)
                        } else {
                            Log.warning("\(hook) (pid \(pid)) ended with \(Subprocess.describe(status)).", fields: fields)
                        }
                        self?.running = nil
                        self?.startNext()
                    })
                running = child
                Log.debug("\(hook) started (pid \(child.pid)).", fields: fields)
                let limit = next.timeoutSeconds
                child.limit(to: Double(limit), queue: queue) { [pid = child.pid] in
                    Log.warning("\(hook) (pid \(pid)) still ran after its \(limit) s limit; terminating it.", fields: fields)
                }
            } catch {
                Log.warning("\(hook): could not start \(next.argv[0]): \(error)", fields: fields)
            }
        }
    }
}
