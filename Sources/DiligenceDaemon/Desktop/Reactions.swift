import DiligenceCore
import DiligenceJSON
import DiligenceProtocol

/// What the daemon does outside itself when the timer changes or a reminder is due: desktop
/// notifications, hooks, sounds (docs/notifications.md, docs/configuration.md). None of it
/// waits: notifications are asynchronous D-Bus calls, hooks and players are child processes
/// watched from the queue.
extension Daemon {
    /// The last step of every timer change, after its events are recorded and published.
    func react(to events: [TimerEvent], at now: Now) {
        desktop.taskwarrior.react(to: events, settings: config.taskwarrior)
        // The note of the work a hook is about: the session that just ended, else the phase's.
        var note = machine.note
        // The end-of-work notification waits until the guard has put the server back.
        var endOfWork: [Phase] = []
        for event in events {
            if case .sessionEnded(let session) = event { note = session.note }
            if case .interrupted(let marked) = event {
                runHook("interrupt", protocolEvent: event.name, phase: .work, note: note, interruption: marked, at: now)
            } else if let hook = Self.hookName(for: event) {
                runHook(hook, protocolEvent: event.name, phase: Self.phase(of: event), note: note, at: now)
            }
            if case .phaseCompleted(let finished) = event {
                endOfWork.append(finished)
                desktop.sound.phaseEnded(config.sound)
            }
            notifyPresence(event)
            notifyCountingUp(event)
        }
        let stillAsNow = timerStillAsNow()
        reconcileFocus { [unowned self] in
            guard stillAsNow() else { return }
            endOfWork.forEach(notifyPhaseEnded)
        }
        desktop.notifier.closeStale()
        updateAmbientSound()
    }

    /// Whether the timer is still in the state it is in now (for a notification shown now):
    /// its state, phase, round and task.
    func timerStillAsNow() -> () -> Bool {
        let now = (machine.state, machine.phase, machine.round, machine.task?.id)
        return { [unowned self] in (machine.state, machine.phase, machine.round, machine.task?.id) == now }
    }

    /// The `[hooks]` event a timer event triggers (`on_<name>`).
    static func hookName(for event: TimerEvent) -> String? {
        switch event {
        case .phaseStarted(let p): p == .work ? "work_start" : "break_start"
        case .phaseCompleted(let p): p == .work ? "work_end" : "break_end"
        case .paused: "pause"
        case .resumed: "resume"
        case .stopped: "stop"
        case .skipped: "skip"
        case .away: "away"
        case .back: "back"
        case .interrupted: "interrupt"
        case .phasePending, .extended, .sessionEnded, .awayDiscarded, .sessionRevised, .overtimeStarted, .flowNudge: nil
        }
    }

    static func phase(of event: TimerEvent) -> Phase? {
        switch event {
        case .phaseStarted(let p), .phasePending(let p), .phaseCompleted(let p), .paused(let p),
            .resumed(let p), .stopped(let p), .skipped(let p), .extended(let p, _):
            p
        case .sessionEnded, .awayDiscarded, .sessionRevised, .interrupted, .overtimeStarted, .flowNudge: .work
        case .away, .back: nil
        }
    }

    // MARK: Hooks

    /// Runs the hook for `hook` with the status in its environment and the event JSON (as a
    /// watcher would get it, plus `"hook"`) on its stdin.
    /// `interruption`: the one an `interrupt` hook is about (`DILIGENCE_INTERRUPTION_KIND`, its
    /// note `DILIGENCE_INTERRUPTION_NOTE`; the stdin JSON's `"interruption"`).
    /// `session`: more variables; `extra`: more members of the JSON (a session event's).
    func runHook(
        _ hook: String, protocolEvent: String, phase: Phase?, task: TaskConfig? = nil, note: String? = nil,
        interruption: Interruption? = nil, at now: Now, session: [(String, String)] = [], extra more: [(String, JSON)] = []
    ) {
        guard config.hooks.commands[hook] != nil else { return }
        let status = machine.status(at: now)
        let taskName = task?.name ?? status.task?.name ?? ""
        let variables: [(String, String)] =
            [
                ("DILIGENCE_EVENT", hook),
                ("DILIGENCE_TASK", taskName),
                ("DILIGENCE_PHASE", phase?.rawValue ?? ""),
                ("DILIGENCE_STATE", status.state.rawValue),
                ("DILIGENCE_NEXT_PHASE", status.phase?.rawValue ?? ""),
                ("DILIGENCE_ROUND", "\(status.round)"),
                ("DILIGENCE_DURATION", "\(status.durationSeconds)"),
                ("DILIGENCE_REMAINING", "\(status.remainingSeconds)"),
                ("DILIGENCE_TODAY_COMPLETED", "\(todayCompleted(at: now))"),
                ("DILIGENCE_SOCKET", paths.socket),
                ("DILIGENCE_NOTE", note ?? ""),
                ("DILIGENCE_INTERRUPTION_KIND", interruption?.kind.rawValue ?? ""),
                ("DILIGENCE_INTERRUPTION_NOTE", interruption?.note ?? ""),
            ] + session
        var extra: [(String, JSON)] = [("hook", .string(hook))]
        if let note { extra.append(("note", .string(note))) }
        if let task { extra.append(("task", .string(task.name))) }
        if let interruption { extra.append(("interruption", interruption.json(wire: true))) }
        extra += more
        let payload = Response.event(protocolEvent, status: statusJSON(at: now), extra: extra)
        desktop.hooks.run(hook, settings: config.hooks, variables: variables, payload: payload)
    }

    // MARK: Notifications

    /// `[notifications] bell = on`: a notification no desktop showed reaches the watchers as a
    /// `bell` event (what it would have said), and `diligencectl watch` rings the terminal's bell.
    func ringBell(for message: Notifier.Message) {
        guard config.notifications.bell else { return }
        broadcast("bell", now: clocks.now, extra: [("summary", .string(message.summary)), ("body", .string(message.body))])
    }

    /// "Focus session complete" / "Break over", with the buttons that fit what comes next.
    func notifyPhaseEnded(_ finished: Phase) {
        let next = machine.phase
        let values = [
            "task": machine.task?.name ?? "", "duration": DurationText.format(Int(machine.duration)), "round": "\(machine.round)",
        ]
        var actions: [(key: String, label: String)] = []
        let body: String
        switch (machine.state, next) {
        case (.pending, let p?) where p.isBreak:
            body =
                p == .longBreak
                ? tr("{task}: time for a {duration} long break.", values) : tr("{task}: time for a {duration} short break.", values)
            actions = [("start_break", tr("Start break")), ("skip_break", tr("Skip break"))]
        case (.running, let p?) where p.isBreak:
            body =
                p == .longBreak
                ? tr("{task}: {duration} long break started.", values) : tr("{task}: {duration} short break started.", values)
            actions = [("skip_break", tr("Skip break"))]
        case (.pending, .work?):
            body = tr("{task}: ready for round {round}.", values)
            actions = [("start_focus", tr("Start focus"))]
        case (.running, .work?):
            body = tr("{task}: round {round} started.", values)
        default:
            body = values["task"] ?? ""
        }
        let summary = finished == .work ? tr("Focus session complete") : tr("Break over")
        desktop.notifier.show(
            .init(
                slot: "phase", summary: summary, body: body, actions: actions, settings: config.notifications,
                category: "x-diligence.phase", stillValid: actions.isEmpty ? { true } : timerStillAsNow(), onClosed: nil
            ) { [unowned self] key in
                self.notificationAction(key)
            })
    }

    /// The one notification of a bell that does not stop the work (overtime), or of a flow
    /// session's nudge; the work goes on counting up either way.
    func notifyCountingUp(_ event: TimerEvent) {
        let task = machine.task?.name ?? ""
        let summary: String
        let body: String
        switch event {
        case .overtimeStarted:
            summary = tr("Overtime")
            body = tr(
                "{task}: {duration} are up; the work goes on. Stop it when you finish.",
                ["task": task, "duration": DurationText.format(Int(machine.duration))])
        case .flowNudge(let seconds):
            summary = tr("Still in flow")
            body = tr(
                "{task}: {duration} of work. Stop when you like; the break is earned.",
                ["task": task, "duration": DurationText.format(seconds)])
        default: return
        }
        desktop.notifier.show(
            .init(
                slot: "phase", summary: summary, body: body, actions: [], settings: config.notifications,
                category: "x-diligence.phase", stillValid: { true }, onClosed: nil
            ) { _ in })
    }

    /// A button of a phase notification: the same paths as `start` and `skip`. A button of an
    /// old notification that no longer fits the timer is ignored, with a log line.
    func notificationAction(_ key: String) {
        let fits: Bool
        switch key {
        case "start_break": fits = machine.state == .pending && machine.phase?.isBreak == true
        case "skip_break": fits = machine.phase?.isBreak == true && machine.state != .idle
        case "start_focus": fits = machine.state == .pending && machine.phase == .work
        default: fits = false
        }
        guard fits else {
            Log.info("Ignored the notification action \(key): the timer has moved on (\(machine.state.rawValue)).")
            return
        }
        do {
            _ = try timerCommand { m, now throws(DiligenceError) in
                key == "skip_break" ? try m.skip(at: now) : try m.start(nil, at: now)
            }
        } catch {
            Log.warning("The notification action \(key) failed: \(error.message)")
        }
    }

    // MARK: Reminders

    /// A task's daily reminder: notification, `reminder` event, `on_reminder` hook.
    func remind(_ task: TaskConfig) {
        let now = driver.observeClocks()
        Log.info("Reminder for \(task.name).", fields: [("EVENT", "reminder"), ("TASK", task.name)])
        broadcast("reminder", now: now, extra: [("task", .string(task.name))])
        runHook("reminder", protocolEvent: "reminder", phase: nil, task: task, at: now)
        let body = task.description.isEmpty ? tr("Time for {task}.", ["task": task.name]) : task.description
        var actions: [(key: String, label: String)] = []
        if machine.state == .idle || machine.state == .pending { actions = [("start_task", tr("Start {task}", ["task": task.name]))] }
        // Under the guard it still reaches the user: as critical, which the servers but dunst
        // show during do-not-disturb; dunst shows nothing while paused, so the pause is lifted
        // until it is closed.
        var settings = config.notifications
        let liftsPause = settings.enabled && desktop.focusGuard.holdsOwnNotifications
        if desktop.focusGuard.record != nil && !liftsPause { settings.urgency = .critical }
        let message = Notifier.Message(
            slot: "reminder", summary: tr("Reminder: {task}", ["task": task.name]), body: body, actions: actions,
            settings: settings, category: "x-diligence.reminder",
            stillValid: actions.isEmpty ? { true } : timerStillAsNow(),
            onClosed: liftsPause ? { [unowned self] in desktop.focusGuard.stepBack() } : nil
        ) { [unowned self] _ in
            guard self.machine.state == .idle || self.machine.state == .pending,
                let current = try? self.store.task(id: task.id)
            else { return }
            do {
                _ = try self.timerCommand { m, now throws(DiligenceError) in try m.start(current, at: now) }
            } catch {
                Log.warning("Could not start \(task.name) from its reminder: \(error)")
            }
        }
        guard liftsPause else { return desktop.notifier.show(message) }
        desktop.focusGuard.stepAside { [unowned self] in desktop.notifier.show(message) }
    }

    // MARK: Sound

    /// The task's ambient sound while its work phase runs, silence otherwise.
    func updateAmbientSound() {
        var file: String?
        if machine.state == .running, machine.phase == .work, let name = machine.task?.sound {
            file = Sound.ambientFile(
                named: name, settings: config.sound,
                defaultDirectory: Files.directory(of: paths.database) + "/sounds")
        }
        desktop.sound.ambient(file, settings: config.sound)
    }
}
