import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceStore
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// `[timewarrior]`: every recorded session's focus segments as Timewarrior intervals, kept
/// exact through the real `timew` (found on the PATH), run as children watched from `queue`, one
/// at a time, so the timer never waits for it. The sessions whose intervals may be out of date
/// wait in an outbox file beside the database until timew took them: a missing or failing timew
/// is tried again later and caught up, also after a restart.
final class TimewarriorMirror {
    /// What one run reconciles: the outbox's sessions, or (`timewarrior_sync`) the whole history.
    private enum Job {
        case outbox
        case whole(dryRun: Bool, reply: (Result<JSON, DiligenceError>) -> Void)

        var dryRun: Bool { if case .whole(true, _) = self { true } else { false } }

        func answer(_ result: Result<JSON, DiligenceError>) { if case .whole(_, let reply) = self { reply(result) } }
    }

    /// Why timew could not do what the mirror asked; each kind is logged once until it works.
    enum Failure: Error {
        case missing(String)
        case failed(String)
        case badExport(String)

        var kind: String {
            switch self {
            case .missing: "missing"
            case .failed: "failed"
            case .badExport: "bad_export"
            }
        }

        var message: String {
            switch self {
            case .missing(let m), .failed(let m), .badExport(let m): m
            }
        }
    }

    /// The first wait before timew is tried again, doubled after each failure up to the last.
    static let retryDelays = (first: 2.0, last: 60.0)

    private let queue: DispatchQueue
    private let store: Store
    let outboxPath: String
    var settings = TimewarriorSettings() {
        didSet { if settings.enabled { startNext() } }
    }
    /// Sessions whose intervals timew may not hold as they are now.
    private(set) var pending: Set<String>
    /// Sessions changed again while a run was under way: they stay in the outbox after it.
    private var changedDuringRun: Set<String> = []
    private var jobs: [Job] = []
    private var running = false
    private var child: Subprocess?
    private var retryDelay = TimewarriorMirror.retryDelays.first
    private var retryToken = 0
    private var retryWaiting = false
    private var logged: Set<String> = []
    /// What went wrong the last time, until a run succeeds (`doctor`).
    private(set) var lastFailure: String?

    init(store: Store, queue: DispatchQueue, outboxPath: String) {
        self.store = store
        self.queue = queue
        self.outboxPath = outboxPath
        // A database in memory (tests) has no outbox file.
        let text: String? = outboxPath.isEmpty ? nil : try? Files.read(outboxPath)
        pending = Set((text ?? "").split(separator: "\n").map(String.init).filter { !$0.isEmpty })
    }

    /// Sessions recorded, changed or removed: into the outbox, then to timew.
    func changed(_ uuids: [String]) {
        guard settings.enabled, !uuids.isEmpty else { return }
        pending.formUnion(uuids)
        if running { changedDuringRun.formUnion(uuids) }
        saveOutbox()
        retryDelay = Self.retryDelays.first
        retryWaiting = false
        startNext()
    }

    /// `timewarrior sync`: the whole history reconciled after what runs now; `reply` gets what
    /// was (or, dry, would be) deleted and tracked.
    func syncWhole(dryRun: Bool, reply: @escaping (Result<JSON, DiligenceError>) -> Void) {
        guard settings.enabled else {
            return reply(
                .failure(DiligenceError(.invalidValue, "The Timewarrior mirror is off: set enabled = yes under [timewarrior] and reload.")))
        }
        jobs.append(.whole(dryRun: dryRun, reply: reply))
        startNext()
    }

    /// Ends a run under way (the daemon stops); the outbox keeps what it did not finish.
    func stop() {
        child?.terminate(queue: queue)
        child = nil
        retryToken += 1
    }

    private func saveOutbox() {
        guard !outboxPath.isEmpty else { return }
        do {
            try Files.replace(outboxPath, with: pending.sorted().map { $0 + "\n" }.joined(), synced: false)
        } catch {
            logOnce("outbox", "Could not write the Timewarrior outbox \(outboxPath): \(error)")
        }
    }

    private func startNext() {
        guard !running, settings.enabled else { return }
        if jobs.isEmpty {
            guard !pending.isEmpty, !retryWaiting else { return }
            jobs.append(.outbox)
        }
        let job = jobs.removeFirst()
        running = true
        changedDuringRun = []
        let scope: Set<String>? = if case .outbox = job { pending } else { nil }
        export { [weak self] result in
            guard let self else { return }
            switch result {
            case .failure(let failure): self.finish(job, scope: scope, .failure(failure))
            case .success(let existing): self.reconcile(job, scope: scope, existing: existing)
            }
        }
    }

    /// Compares timew's intervals with the sessions and applies the difference.
    private func reconcile(_ job: Job, scope: Set<String>?, existing: [TimewarriorInterval]) {
        let wanted: [String: [TimewarriorInterval]]
        do {
            wanted = try wantedIntervals(scope)
        } catch {
            return finish(job, scope: scope, .failure(.failed("Could not read the sessions: \(error.message)")))
        }
        let plan = Timewarrior.plan(wanted: wanted, existing: existing, scope: scope)
        let report = JSON.object([
            ("dry_run", .bool(job.dryRun)), ("deleted", .array(plan.delete.map(\.json))), ("tracked", .array(plan.track.map(\.json))),
            ("unchanged", .int(Int64(wanted.values.reduce(0) { $0 + $1.count } - plan.track.count))),
        ])
        if job.dryRun { return finish(job, scope: nil, .success(report)) }
        let ids = plan.delete.compactMap(\.id).map { "@\($0)" }
        let commands = (ids.isEmpty ? [] : [["delete"] + ids]) + plan.track.map { ["track"] + $0.trackArguments }
        apply(commands[...], failure: nil) { [weak self] failure in
            let result: Result<JSON, Failure> = failure.map { .failure($0) } ?? .success(report)
            self?.finish(job, scope: scope, result)
        }
    }

    /// The intervals of the sessions in `scope` (nil: all) as the store holds them now.
    private func wantedIntervals(_ scope: Set<String>?) throws(DiligenceError) -> [String: [TimewarriorInterval]] {
        var sessions: [WorkSession] = []
        if let scope {
            for uuid in scope.sorted() { if let s = try store.session(uuid: uuid) { sessions.append(s) } }
        } else {
            sessions = try store.sessions()
        }
        var wanted: [String: [TimewarriorInterval]] = [:]
        for s in sessions { wanted[s.uuid] = Timewarrior.intervals(of: s, tags: settings.tags) }
        return wanted
    }

    /// Runs `commands` one after the other; a failed one does not stop the rest (the next
    /// run's export shows what is still missing), the first failure is reported.
    private func apply(_ commands: ArraySlice<[String]>, failure: Failure?, done: @escaping (Failure?) -> Void) {
        guard let first = commands.first else { return done(failure) }
        run(first, output: nil) { [weak self] result in
            var failure = failure
            if case .failure(let f) = result, failure == nil { failure = f }
            // A missing timew fails every command alike.
            if case .missing? = failure { return done(failure) }
            self?.apply(commands.dropFirst(), failure: failure, done: done)
        }
    }

    private func finish(_ job: Job, scope: Set<String>?, _ result: Result<JSON, Failure>) {
        running = false
        child = nil
        switch result {
        case .success(let report):
            if !job.dryRun {
                let done = scope ?? pending
                pending.subtract(done.subtracting(changedDuringRun))
                saveOutbox()
                if !logged.isEmpty { Log.info("timew works again; the Timewarrior mirror caught up.", fields: Self.fields("caught_up")) }
                logged = []
                lastFailure = nil
                retryDelay = Self.retryDelays.first
            }
            job.answer(.success(report))
        case .failure(let failure):
            lastFailure = failure.message
            logOnce(failure.kind, "Timewarrior mirror: \(failure.message) Trying again later.")
            job.answer(.failure(DiligenceError(.invalidValue, "Timewarrior: \(failure.message)")))
            scheduleRetry()
        }
        startNext()
    }

    private func scheduleRetry() {
        guard !pending.isEmpty else { return }
        retryWaiting = true
        retryToken += 1
        let token = retryToken
        let delay = retryDelay
        retryDelay = min(retryDelay * 2, Self.retryDelays.last)
        let mirror = QueueBound(self, on: queue)
        queue.asyncAfter(deadline: .now() + delay) {
            let mirror = mirror.value
            guard mirror.retryToken == token else { return }
            mirror.retryWaiting = false
            mirror.startNext()
        }
    }

    private func logOnce(_ kind: String, _ message: String) {
        guard logged.insert(kind).inserted else { return }
        Log.warning(message, fields: Self.fields("timewarrior_failed") + [("KIND", kind)])
    }

    private static func fields(_ event: String) -> [(String, String)] { [("EVENT", event)] }
}

extension TimewarriorMirror {
    /// `timew export`, its output read from a file and every member checked.
    private func export(_ done: @escaping (Result<[TimewarriorInterval], Failure>) -> Void) {
        let path = outboxPath + ".export"
        let fd: Int32
        do {
            fd = try Sys.open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, mode: 0o600)
        } catch {
            return done(.failure(.failed("Could not make \(path): \(error)")))
        }
        run(["export"], output: fd) { result in
            Sys.close(fd)
            let text: String? = try? Files.read(path)
            _ = Sys.unlink(path)
            switch result {
            case .failure(let failure): done(.failure(failure))
            case .success:
                let intervals: [TimewarriorInterval]
                do throws(DiligenceError) {
                    intervals = try Timewarrior.parseExport(text ?? "")
                } catch {
                    return done(.failure(.badExport(error.message)))
                }
                done(.success(intervals))
            }
        }
    }

    /// Runs `timew ARGS :yes` (no question waits for an answer) with TIMEWARRIORDB from the
    /// settings; its stderr (or all its output) goes to the log on failure.
    private func run(_ arguments: [String], output: Int32?, done: @escaping (Result<Void, Failure>) -> Void) {
        var variables: [(String, String)] = []
        if let data = settings.data {
            let home = getenv("HOME").map { String(cString: $0) } ?? ""
            variables.append(("TIMEWARRIORDB", SyncFolder.expand(data, home: home)))
        }
        var lines: [String] = []
        let argv = ["timew"] + arguments + [":yes"]
        do {
            let process = try Subprocess(
                argv: argv, environment: Subprocess.environment(with: variables), stdout: output, queue: queue,
                onLine: { line in if lines.count < 5 { lines.append(line) } },
                onExit: { [weak self] _, status in
                    self?.child = nil
                    guard status == 0 else {
                        let said = lines.isEmpty ? "" : ": " + lines.joined(separator: " / ")
                        return done(.failure(.failed("timew \(arguments.first ?? "") ended with \(Subprocess.describe(status))\(said).")))
                    }
                    done(.success(()))
                })
            child = process
            process.limit(to: 60, queue: queue) { Log.warning("timew \(arguments.first ?? "") still ran after 60 s; ending it.") }
        } catch  where error.code == ENOENT {
            done(.failure(.missing("timew is not on the PATH (apt-get install timewarrior).")))
        } catch {
            done(.failure(.failed("Could not start timew: \(error).")))
        }
    }
}

extension Daemon {
    /// `timewarrior_sync`: answered when timew has done it; the connection takes no further
    /// request meanwhile, every other client is served.
    func timewarriorSync(dryRun: Bool, _ request: Request, on connection: ClientConnection) {
        connection.hold()
        let waiting = QueueBound(connection, on: queue)
        records.timewarrior.syncWhole(dryRun: dryRun) { result in
            let connection = waiting.value
            switch result {
            case .success(let report):
                Log.info(
                    "Timewarrior sync\(dryRun ? " (dry run)" : ""): \(report["deleted"]?.arrayValue?.count ?? 0) deleted, \(report["tracked"]?.arrayValue?.count ?? 0) tracked.",
                    fields: [("EVENT", "timewarrior_synced")])
                connection.send(Response.ok(report, id: request.id))
            case .failure(let error):
                connection.send(Response.error(error, id: request.id))
            }
            connection.resume()
        }
    }
}
