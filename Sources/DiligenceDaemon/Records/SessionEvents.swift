import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceStore
import DiligenceTime

// Every change of a recorded session, whatever door made it, reaches the watchers and the hooks
// as `session_recorded`, `session_changed` or `session_removed` (docs/protocol.md, "Watch"):
// the store notes them in the transaction that makes them, and they are drained here after the
// commit — right away where the timer reports its own, else after the work item that committed.

extension Daemon {
    /// After a commit: one drain on the queue, after the work item that committed.
    func sessionsCommitted() {
        guard !records.recorder.changesScheduled else { return }
        records.recorder.changesScheduled = true
        let daemon = QueueBound(self, on: queue)
        queue.async {
            let daemon = daemon.value
            daemon.records.recorder.changesScheduled = false
            daemon.publishSessionChanges(at: daemon.clocks.now)
        }
    }

    /// Sends the session changes committed since the last drain to the watchers and the hooks.
    func publishSessionChanges(at now: Now) {
        let changes: [SessionChange]
        do {
            changes = try store.takeSessionChanges()
        } catch {
            Log.error("Could not read the session changes to report: \(error.message)", fields: [("EVENT", "session_events_failed")])
            return
        }
        for change in changes {
            broadcast(change.kind.rawValue, now: now, extra: Self.sessionEventMembers(change))
            runSessionHook(change, at: now)
            if change.kind == .recorded, change.door == .timer {
                desktop.taskwarrior.recorded(change.session, settings: config.taskwarrior)
            }
        }
        records.timewarrior.changed(changes.map(\.session.uuid))
    }

    /// What a session event carries besides the status: the session and its source.
    static func sessionEventMembers(_ change: SessionChange) -> [(String, JSON)] {
        [("session", change.session.json), ("source", .string(change.door.rawValue))]
    }

    /// `on_session_recorded`, `on_session_changed`, `on_session_removed`: the session in the
    /// environment and, as the watchers get it, on stdin.
    private func runSessionHook(_ change: SessionChange, at now: Now) {
        let hook = change.kind.rawValue
        guard config.hooks.commands[hook] != nil else { return }
        let s = change.session
        let segments = s.segments.map { "\(RFC3339.format($0.start))/\(RFC3339.format($0.end))" }.joined(separator: " ")
        runHook(
            hook, protocolEvent: hook, phase: nil, note: s.note, at: now,
            session: [
                ("DILIGENCE_SESSION_UUID", s.uuid), ("DILIGENCE_SESSION_TASK", s.taskName),
                ("DILIGENCE_SESSION_START", RFC3339.format(s.start)), ("DILIGENCE_SESSION_END", RFC3339.format(s.end)),
                ("DILIGENCE_SESSION_FOCUSED", "\(s.focusedSeconds)"), ("DILIGENCE_SESSION_OUTCOME", s.outcome.rawValue),
                ("DILIGENCE_SESSION_SEGMENTS", segments), ("DILIGENCE_SESSION_DEVICE", s.device ?? ""),
                ("DILIGENCE_SOURCE", change.door.rawValue),
            ],
            extra: Self.sessionEventMembers(change))
    }
}
