import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceTime
import Dispatch

/// What the daemon does when the person leaves the computer or comes back (docs/presence.md):
/// the `away`/`back` commands and the desktop's signals end here, and the timer machine applies
/// the `[presence]` policy.
/// Why the person counts as away: each source keeps its own reason, and the person is away
/// while any is set.
enum AwayReason: String {
    /// `diligencectl away` (a swayidle or xss-lock line, a script).
    case command
    /// logind: the session is locked (Lock, LockedHint).
    case locked
    /// logind: the session has been idle `idle_after` (IdleHint, IdleSinceHintMonotonic).
    case idle
    /// The screen saver is active (ActiveChanged).
    case screenSaver = "screensaver"
}

extension Daemon {
    /// `away` / `back`: the command says so for every source — `back` clears them all, so a
    /// person who says they are back is back.
    func presenceCommand(away: Bool) -> JSON {
        if away { absence.reasons.insert(.command) } else { absence.reasons = [] }
        applyPresence()
        return statusJSON(at: clocks.now)
    }

    /// A source's news: `reason` holds (`away`) or no longer holds.
    func presenceSignal(_ reason: AwayReason, away: Bool) {
        if away { absence.reasons.insert(reason) } else { absence.reasons.remove(reason) }
        applyPresence()
    }

    /// logind's session: a lock is away at once; idleness after `[presence] idle_after`,
    /// counted from when it began (a one-shot timer, nothing else wakes).
    func logindSignal(_ signal: LogindSession.Signal) {
        switch signal {
        case .locked(let locked):
            presenceSignal(.locked, away: locked)
        case .idle(true, let since):
            guard absence.idleTimer == nil, !absence.reasons.contains(.idle) else { return }
            let start = since ?? clocks.monotonic
            let delay = max(0, start + Double(config.presence.idleAfter) - clocks.monotonic)
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { [unowned self] in
                dispatchPrecondition(condition: .onQueue(queue))
                absence.idleTimer?.cancel()
                absence.idleTimer = nil
                presenceSignal(.idle, away: true)
            }
            timer.schedule(deadline: .now() + delay, leeway: .milliseconds(100))
            timer.activate()
            absence.idleTimer = timer
        case .idle(false, _):
            absence.idleTimer?.cancel()
            absence.idleTimer = nil
            presenceSignal(.idle, away: false)
        }
    }

    /// Brings the machine's presence in line with the reasons: away while any holds, here
    /// otherwise (also from `unknown`, once a source has spoken).
    private func applyPresence() {
        let away = !absence.reasons.isEmpty
        guard away ? machine.presence != .away : machine.presence != .here else { return }
        _ = try? timerCommand { machine, now in
            away ? machine.away(config.presence, at: now) : machine.back(at: now)
        }
    }

    /// The notifications presence causes: time away that work counted (Keep / Discard), and a
    /// strict focus session failed because the person left.
    func notifyPresence(_ event: TimerEvent) {
        switch event {
        case .back(let seconds, true):
            desktop.notifier.show(
                .init(
                    slot: "presence", summary: tr("Time away counted as focus"),
                    body: tr(
                        "You were away {duration} during work; it counted. Keep it or discard it?",
                        ["duration": DurationText.format(seconds)]),
                    actions: [("keep_away", tr("Keep")), ("discard_away", tr("Discard away time"))], settings: config.notifications,
                    category: "x-diligence.presence", stillValid: { [unowned self] in self.machine.awayOffer != nil },
                    onClosed: nil
                ) { [unowned self] key in
                    self.awayAction(key)
                })
        case .sessionEnded(let session) where session.reason == .left:
            // The machine has let go of the task by now: its stored settings say whether it was strict.
            let strict = (try? store.task(id: session.taskID))??.focusMode == true
            desktop.notifier.show(
                .init(
                    slot: "presence", summary: strict ? tr("Focus session failed") : tr("Focus session given up"),
                    body: tr(
                        "{task}: you left during work after {duration} of focus.",
                        ["task": session.taskName, "duration": DurationText.format(session.focusedSeconds)]),
                    actions: [], settings: config.notifications, category: "x-diligence.presence", stillValid: { true },
                    onClosed: nil
                ) { _ in })
        default:
            break
        }
    }

    /// A button of the Keep / Discard notification: Keep changes nothing.
    func awayAction(_ key: String) {
        guard key == "discard_away" else { return }
        do {
            _ = try timerCommand { m, now throws(DiligenceError) in try m.discardAway(at: now) }
        } catch {
            Log.info("Ignored the notification action \(key): \(error.message)")
        }
    }

    /// ` · away since 12:03` for STATUS=, or nothing.
    func awayLine(at now: Now) -> String {
        guard let since = machine.status(at: now).awaySince else { return "" }
        return tr(" · away since {time}", ["time": TimeOfDay.format(LocalDay.minuteOfDay(since))])
    }
}
