import DiligenceCore
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the `[hooks]` commands (docs/configuration.md). A hook is started and forgotten: the
/// timer never waits for it; its output goes to the log line by line; a hook that outlives its
/// time limit gets SIGTERM, then SIGKILL. argv comes from the config file only: event data
/// (a task name such as `x; rm -rf ~`) reaches a hook as environment and stdin, never as code.
final class Hooks {
    private let queue: DispatchQueue
    /// Hooks still running, by pid: kept alive until they are reaped.
    private var running: [pid_t: Subprocess] = [:]

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Starts the hook for `event` (`work_end`, `reminder`, ...) if one is configured.
    /// `variables` go into its environment on top of the daemon's, `payload` to its stdin.
    func run(_ event: String, settings: HookSettings, variables: [(String, String)], payload: String) {
        guard let argv = settings.commands[event] else { return }
        let hook = "on_\(event)"
        let fields = [("EVENT", "hook"), ("HOOK", hook)]
        let child: Subprocess
        do {
            child = try Subprocess(
                argv: argv, environment: Subprocess.environment(with: variables), input: Array(payload.utf8), queue: queue,
                onLine: { line in Log.info("\(hook): \(line)", fields: fields) },
                onExit: { [weak self] pid, status in
                    self?.running[pid] = nil
                    let how = Subprocess.describe(status)
                    if status == 0 {
                        Log.debug("\(hook) (pid \(pid)) finished.", fields: fields)
                    } else {
                        Log.warning("\(hook) (pid \(pid)) ended with \(how).", fields: fields)
                    }
                })
        } catch {
            Log.warning("\(hook): could not start \(argv[0]): \(error)", fields: fields)
            return
        }
        running[child.pid] = child
        Log.debug("\(hook) started (pid \(child.pid)).", fields: fields)
        let limit = settings.timeoutSeconds
        child.limit(to: Double(limit), queue: queue) { [pid = child.pid] in
            Log.warning("\(hook) (pid \(pid)) still ran after its \(limit) s limit; terminating it.", fields: fields)
        }
    }

    /// Hooks that have not ended yet (tests, logs).
    var runningCount: Int { running.count }
}
