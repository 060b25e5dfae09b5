import DiligenceCore
import Dispatch

/// Do-not-disturb for the length of a work phase (docs/focus.md): the server's state is read,
/// saved with the timer (`persist`) before it is changed, and put back when the work ends, so
/// that a state the user had (do-not-disturb already on) stays, and a daemon killed mid-work
/// puts it back at its next start.
final class FocusGuard {
    let queue: DispatchQueue
    let persist: (FocusRecord?) -> Void
    private var makeDriver: (FocusSettings.Backend, FocusSettings) -> FocusBackendDriver = { backend, _ in
        CommandFocusBackend(backend, queue: DispatchQueue.main)
    }
    /// The session bus of the bus backends, opened when first needed.
    final class BusHolder { var connection: BusConnection? }
    let bus = BusHolder()
    /// Backends already reported unavailable: each is logged once, not at every work start.
    private var reported: Set<String> = []
    /// What is in force now (saved too), nil when the guard is off.
    var record: FocusRecord?
    private var driver: FocusBackendDriver?
    private var commands: FocusBackendDriver?
    /// Between `leave` and the server put back: nothing enters again meanwhile.
    private var leaving = false
    /// The `done` of leaves asked for while one was under way: run when it ends.
    private var whenLeft: [() -> Void] = []
    /// Between `enter` and its record: a second enter would change the server twice.
    private var entering = false
    /// The pause is lifted for one of diligence's own notifications (`stepAside`).
    private var steppedAside = false

    /// `makeDriver` stands in for the servers in tests; nil: the real ones.
    init(
        queue: DispatchQueue, persist: @escaping (FocusRecord?) -> Void,
        makeDriver: ((FocusSettings.Backend, FocusSettings) -> FocusBackendDriver)? = nil
    ) {
        self.queue = queue
        self.persist = persist
        if let makeDriver {
            self.makeDriver = makeDriver
        } else {
            self.makeDriver = Self.standardDriver(queue: queue, bus: { [unowned self] in self.sessionBus() })
        }
    }

    /// The drivers the daemon uses: the session bus for dunst, swaync and Plasma, programs
    /// for mako, GNOME and the commands.
    static func standardDriver(queue: DispatchQueue, bus: @escaping () -> BusConnection?) -> (
        FocusSettings.Backend, FocusSettings
    ) -> FocusBackendDriver {
        { backend, settings in
            switch backend {
            case .dunst, .swaync, .plasma: BusFocusBackend(backend, bus: bus)
            case .mako, .gnome: CommandFocusBackend(backend, queue: queue)
            case .auto, .commands:
                CommandFocusBackend(.commands, queue: queue, onEnter: settings.onEnter ?? [], onLeave: settings.onLeave ?? [])
            }
        }
    }

    /// For `status`: the backend holding notifications back, nil when none does.
    var activeBackend: String? { record?.backend.rawValue }

    /// Turns do-not-disturb on for a work phase; `backend` is the one chosen (the setting, or
    /// the running server's), nil for none (then only the commands run). `done` runs when it
    /// is in force or has failed (logged).
    func enter(_ backend: FocusSettings.Backend?, settings: FocusSettings, done: @escaping () -> Void) {
        guard record == nil, !entering else { return done() }
        let commandsOwed = settings.onEnter != nil
        guard let backend, backend != .commands, backend != .auto else {
            guard commandsOwed else { return done() }
            return enterCommands(FocusRecord(backend: .commands, previous: "", commandsEntered: true), settings, done)
        }
        let driver = makeDriver(backend, settings)
        entering = true
        driver.read { [self] read in
            entering = false
            switch read {
            case .failure(let failure):
                reportOnce(backend, failure)
                return commandsOwed
                    ? enterCommands(FocusRecord(backend: .commands, previous: "", commandsEntered: true), settings, done) : done()
            case .success(let previous):
                var saved = FocusRecord(backend: backend, previous: previous, commandsEntered: commandsOwed)
                record = saved
                self.driver = driver
                persist(saved)
                // Opens the session bus if no bus backend did, to see the server start again.
                _ = sessionBus()
                driver.enter(previous: previous) { [self] entered in
                    switch entered {
                    case .failure(let failure): reportOnce(backend, failure)
                    case .success(let held):
                        if held != previous, record != nil {
                            saved.previous = held
                            record = saved
                            persist(saved)
                        }
                        Log.info(
                            "Do not disturb on (\(backend.rawValue)).", fields: [("EVENT", "focus_enter"), ("BACKEND", backend.rawValue)])
                    }
                    if commandsOwed { runEnterCommand(settings, done) } else { done() }
                }
            }
        }
    }

    private func enterCommands(_ saved: FocusRecord, _ settings: FocusSettings, _ done: @escaping () -> Void) {
        record = saved
        persist(saved)
        runEnterCommand(settings, done)
    }

    private func runEnterCommand(_ settings: FocusSettings, _ done: @escaping () -> Void) {
        let commands = makeDriver(.commands, settings)
        self.commands = commands
        commands.enter(previous: "") { [self] result in
            if case .failure(let failure) = result {
                Log.warning("[focus] on_enter: \(failure.reason)", fields: [("EVENT", "focus_failed")])
            }
            if record?.backend == .commands {
                Log.info("Do not disturb on (commands).", fields: [("EVENT", "focus_enter"), ("BACKEND", "commands")])
            }
            done()
        }
    }

    /// Puts back what `enter` changed (at every way work ends, and at the daemon's exit);
    /// `done` runs when it is back (or failed, logged), so that diligence's own end-of-work
    /// notification is not held back with the others.
    func leave(settings: FocusSettings, done: @escaping () -> Void) {
        guard let saved = record else { return done() }
        guard !leaving else { return whenLeft.append(done) }
        leaving = true
        steppedAside = false
        // A Plasma cookie of a daemon that died was released by the bus with its connection.
        let owned = saved.backend != .commands && !(saved.backend == .plasma && self.driver == nil)
        let driver = self.driver ?? (owned ? makeDriver(saved.backend, settings) : nil)
        // Held until `finish`: a program-driven driver dropped early loses its child's exit.
        self.driver = driver
        let finish = { [self] in
            leaving = false
            record = nil
            self.driver = nil
            self.commands = nil
            persist(nil)
            Log.info(
                "Do not disturb off (\(saved.backend.rawValue)).", fields: [("EVENT", "focus_leave"), ("BACKEND", saved.backend.rawValue)])
            let waiting = whenLeft
            whenLeft = []
            done()
            waiting.forEach { $0() }
        }
        let leaveServer = { [self] in
            guard let driver else { return finish() }
            driver.leave(previous: saved.previous) { [self] result in
                if case .failure(let failure) = result { reportOnce(saved.backend, failure) }
                finish()
            }
        }
        // The commands entered last, so they leave first.
        guard saved.commandsEntered else { return leaveServer() }
        let commands = self.commands ?? makeDriver(.commands, settings)
        self.commands = commands
        commands.leave(previous: "") { result in
            if case .failure(let failure) = result {
                Log.warning("[focus] on_leave: \(failure.reason)", fields: [("EVENT", "focus_failed")])
            }
            leaveServer()
        }
    }

    /// At start: what a daemon killed mid-work saved. When the work resumes the guard is
    /// taken over as it stands (a server restarted meanwhile is checked by entering again);
    /// otherwise it is put back now.
    func recover(_ saved: FocusRecord, resuming: Bool, settings: FocusSettings, done: @escaping () -> Void) {
        record = saved
        let previous = saved.previous
        guard resuming else { return leave(settings: settings, done: done) }
        guard saved.backend != .commands else { return done() }
        let driver = makeDriver(saved.backend, settings)
        self.driver = driver
        _ = sessionBus()
        driver.enter(previous: previous) { [self] result in
            switch result {
            case .failure(let failure): reportOnce(saved.backend, failure)
            case .success(let held) where held != previous:
                record?.previous = held
                persist(record)
            case .success: break
            }
            done()
        }
    }

    /// The notification server started (again) while the guard holds: do-not-disturb is set
    /// again; what is put back at the end stays the state found before the first change.
    func serverStarted() {
        guard let saved = record, !leaving, !steppedAside, saved.backend != .commands, let driver else { return }
        driver.enter(previous: saved.previous) { [self] result in
            switch result {
            case .failure(let failure): reportOnce(saved.backend, failure)
            case .success(let held):
                // Plasma answers a new cookie; the old one went with the old server.
                if held != saved.previous, record != nil {
                    record?.previous = held
                    persist(record)
                }
                Log.info(
                    "The notification server started again: do not disturb on again (\(saved.backend.rawValue)).",
                    fields: [("EVENT", "focus_enter"), ("BACKEND", saved.backend.rawValue)])
            }
        }
    }

    /// Whether diligence's own notifications are held back with everyone else's now, critical
    /// ones too: dunst (1.9) shows none while paused, and pausing takes a shown one back.
    var holdsOwnNotifications: Bool {
        record?.backend == .dunst && record?.previous != "true" && driver != nil && !leaving
    }

    /// Lifts the pause for one of diligence's own notifications (then `done`); `stepBack` when
    /// it is closed. Others' notifications held back meanwhile are shown with it.
    func stepAside(_ done: @escaping () -> Void) {
        guard !steppedAside else { return done() }
        guard holdsOwnNotifications, let saved = record, let driver else { return done() }
        steppedAside = true
        driver.leave(previous: saved.previous) { [self] result in
            if case .failure(let failure) = result { reportOnce(saved.backend, failure) }
            done()
        }
    }

    /// Pauses again after `stepAside`, when the work is still guarded.
    func stepBack() {
        guard steppedAside else { return }
        steppedAside = false
        guard let saved = record, !leaving, let driver else { return }
        driver.enter(previous: saved.previous) { [self] result in
            if case .failure(let failure) = result { reportOnce(saved.backend, failure) }
        }
    }

    private func reportOnce(_ backend: FocusSettings.Backend, _ failure: FocusFailure) {
        guard reported.insert(backend.rawValue + failure.reason).inserted else { return }
        Log.warning(
            "Do not disturb (\(backend.rawValue)) is not available: \(failure.reason)",
            fields: [("EVENT", "focus_failed"), ("BACKEND", backend.rawValue)])
    }
}
