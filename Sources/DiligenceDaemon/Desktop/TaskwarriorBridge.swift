import DiligenceCore
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// Runs `task UUID start`, `stop` and `annotate` for work that follows a Taskwarrior task
/// (docs/integrations.md). The calls wait in line, one at a time, off the timer's way, each
/// ended at a time limit; a failure is logged once until a call succeeds again, so a missing
/// `task` costs one warning, not one per phase.
final class TaskwarriorBridge {
    /// Set in `task`'s environment: the contrib on-modify hook leaves the daemon's own calls alone.
    static let marker = ("DILIGENCE_TASKWARRIOR", "daemon")
    static let timeLimit = 30.0
    /// Sessions ended but not yet recorded that remember their Taskwarrior task, at most this many.
    static let maxEnded = 8

    private let queue: DispatchQueue
    /// The Taskwarrior task new work phases follow: from a `start` that names one until a `start`
    /// of other work.
    var following: String?
    /// The task `task start` ran for: the running work phase's.
    private var active: String?
    /// Ended work (start, task id) and its Taskwarrior task, until its session is recorded.
    private var ended: [(start: Double, taskID: Int64, uuid: String)] = []
    private var running: Subprocess?
    private var waiting: [[String]] = []
    private var failing = false

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// `task start` for a work phase that starts, `task stop` when work ends.
    func react(to events: [TimerEvent], settings: TaskwarriorSettings) {
        for event in events {
            switch event {
            case .sessionEnded(let session):
                if let early = annotatedEarly, early.start == session.start, early.taskID == session.taskID {
                    annotatedEarly = nil
                    continue
                }
                guard let uuid = active ?? lastStopped else { continue }
                ended.append((session.start, session.taskID, uuid))
                if ended.count > Self.maxEnded { ended.removeFirst() }
            case .phaseStarted(.work):
                guard settings.enabled, let following, active == nil else { continue }
                active = following
                lastStopped = nil
                call([following, "start"])
            case .phaseCompleted(.work), .stopped(.work), .skipped(.work):
                guard let uuid = active else { continue }
                active = nil
                lastStopped = uuid
                call([uuid, "stop"])
            default:
                continue
            }
        }
    }

    /// The task of the work that just ended, for its `sessionEnded` reported after the stop.
    private var lastStopped: String?
    /// A session annotated from `recorded` before its `sessionEnded` came.
    private var annotatedEarly: (start: Double, taskID: Int64)?

    /// The annotation for a session the timer recorded, when its work followed a Taskwarrior task.
    func recorded(_ session: WorkSession, settings: TaskwarriorSettings) {
        let uuid: String
        if let index = ended.firstIndex(where: { $0.start == session.start && $0.taskID == session.taskID }) {
            uuid = ended.remove(at: index).uuid
        } else if let active {
            // Recorded before its timer events reach `react`: the running work's session.
            uuid = active
            annotatedEarly = (session.start, session.taskID)
        } else {
            return
        }
        guard settings.enabled else { return }
        call([uuid, "annotate", Self.annotation(session)])
    }

    /// `pomodoro 25m completed, 2 interruptions`.
    static func annotation(_ session: WorkSession) -> String {
        let count = session.interruptions.count
        let interruptions = count == 0 ? "" : ", \(count) interruption\(count == 1 ? "" : "s")"
        return "pomodoro \(DurationText.format(session.focusedSeconds)) \(session.outcome.rawValue)\(interruptions)"
    }

    private func call(_ arguments: [String]) {
        waiting.append(["task", "rc.confirmation=off", "rc.bulk=0", "rc.verbose=nothing"] + arguments)
        startNext()
    }

    private func startNext() {
        while running == nil, !waiting.isEmpty {
            let argv = waiting.removeFirst()
            let what = "task " + argv.dropFirst(4).prefix(2).joined(separator: " ")
            var said: [String] = []
            do {
                let child = try Subprocess(
                    argv: argv, environment: Subprocess.environment(with: [Self.marker]), queue: queue,
                    onLine: { line in if said.count < 4 { said.append(line) } },
                    onExit: { [weak self] _, status in
                        self?.finished(what, status: status, said: said)
                        self?.running = nil
                        self?.startNext()
                    })
                running = child
                child.limit(to: Self.timeLimit, queue: queue) {
                    Log.warning("\(what) still ran after \(Int(Self.timeLimit)) s; terminating it.", fields: [("EVENT", "taskwarrior")])
                }
            } catch {
                finished(what, status: nil, said: ["could not start task: \(error)"])
            }
        }
    }

    private func finished(_ what: String, status: Int32?, said: [String]) {
        let fields = [("EVENT", "taskwarrior")]
        // Started or stopped already (the person did it in Taskwarrior, the on-modify hook
        // started this work): the state asked for holds.
        let holds = said.contains { $0.hasSuffix("already started.") || $0.hasSuffix("not started.") }
        guard let status, status == 0 || holds else {
            let why = status.map(Subprocess.describe) ?? "no start"
            let message = "\(what) failed (\(why)): \(said.joined(separator: " / ").prefix(300))"
            if failing { Log.debug(message, fields: fields) } else { Log.warning(message, fields: fields) }
            failing = true
            return
        }
        failing = false
        Log.debug("\(what) done.", fields: fields)
    }
}
