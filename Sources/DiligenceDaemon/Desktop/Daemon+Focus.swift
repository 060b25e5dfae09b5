import DiligenceCore
import DiligenceJSON

/// Do-not-disturb for the work phase (FocusGuard): on while work runs, off however it ends.
extension Daemon {
    /// Whether notifications are to be held back now: a work phase runs whose task is done under
    /// do not disturb (its own `--dnd`, else `do_not_disturb`).
    var focusWanted: Bool {
        machine.state == .running && machine.phase == .work && config.focus.doNotDisturb(for: machine.task)
    }

    /// Brings the guard in line with the timer; `then` runs once the server is back when the
    /// guard leaves (diligence's own end-of-work notification is not held with the others),
    /// at once otherwise.
    func reconcileFocus(then: @escaping () -> Void) {
        let settings = config.focus
        if focusWanted, desktop.focusGuard.record == nil {
            then()
            desktop.focusGuard.chooseBackend(settings) { [unowned self] backend in
                // The work may have ended while the server was asked.
                guard focusWanted, desktop.focusGuard.record == nil else { return }
                // The work may have ended while the guard entered: it leaves again then.
                desktop.focusGuard.enter(backend, settings: settings) { [unowned self] in
                    if !focusWanted { reconcileFocus(then: {}) }
                }
            }
        } else if !focusWanted, desktop.focusGuard.record != nil {
            desktop.focusGuard.leave(settings: settings) { [unowned self] in
                then()
                // Work resumed while the server was put back (away, then back at once) is guarded again.
                if focusWanted { reconcileFocus(then: {}) }
            }
        } else {
            then()
        }
    }

    /// At start, after the timer is restored: a record a killed daemon left is undone, or
    /// taken over when the work runs on.
    func recoverFocus() {
        let text: String?
        do { text = try store.focusRecord() } catch {
            Log.error("Could not read the focus guard's record: \(error.message)")
            return
        }
        guard let text else { return }
        guard let saved = FocusRecord(encoded: text) else {
            Log.warning("The focus guard's record \(text.debugDescription) is not one this version reads; forgetting it.")
            saveFocusRecord(nil)
            return
        }
        Log.info(
            "Found do not disturb (\(saved.backend.rawValue)) left on by a daemon that did not stop; \(focusWanted ? "keeping it" : "putting it back").",
            fields: [("EVENT", "focus_recovered"), ("BACKEND", saved.backend.rawValue)])
        desktop.focusGuard.recover(saved, resuming: focusWanted, settings: config.focus, done: {})
    }

    /// Saved before the server is changed: committed at once, outside any phase-end transaction.
    func saveFocusRecord(_ record: FocusRecord?) {
        do { try store.setFocusRecord(record?.encoded) } catch {
            Log.error("Could not save the focus guard's record: \(error.message)", fields: [("EVENT", "focus_failed")])
        }
    }
}
