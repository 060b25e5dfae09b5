import DiligenceCore
import DiligenceStore
import DiligenceTime
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// Daily task reminders (a task's `reminder = HH:MM`): at that local time each day, the daemon
/// shows a notification, sends a `reminder` event to watchers and runs the `on_reminder` hook.
///
/// One wall-clock timer is armed at the earliest next reminder: CLOCK_REALTIME runs on during a
/// suspend, so a reminder that fell into a suspend fires right after the resume (on the same
/// day only; a day slept through is not made up). "Once a day" holds by construction: after a
/// reminder fires, its next occurrence is computed strictly after now, so it is tomorrow's; the
/// day it last fired is kept too, so a clock stepped back cannot fire it twice. That memory is
/// in-process only: a restarted daemon arms only occurrences still ahead, so it never repeats
/// one that fired before the restart either.
final class Reminders {
    private let timer: DispatchSourceTimer
    /// Next occurrence (wall seconds) per task id.
    private var due: [Int64: Double] = [:]
    /// Start of the local day each task's reminder last fired.
    private var firedDay: [Int64: Double] = [:]
    private var tasks: [Int64: TaskConfig] = [:]
    /// Called on the queue for each reminder that fires.
    private let onReminder: (TaskConfig) -> Void

    init(queue: DispatchQueue, onReminder: @escaping (TaskConfig) -> Void) {
        self.onReminder = onReminder
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(wallDeadline: .distantFuture)
        timer.setEventHandler { [unowned self] in
            dispatchPrecondition(condition: .onQueue(queue))
            self.fire(now: Clocks().wall)
        }
        timer.activate()
    }

    /// Re-reads the reminders of the stored tasks (start, task add/edit/remove, config reload,
    /// a new time zone) and re-arms; a failed read is logged and the reminders armed are kept.
    func reload(from store: Store, now: Double) {
        do {
            update(tasks: try store.tasks(), now: now)
        } catch {
            Log.error("Could not read the tasks for their reminders: \(error.message)")
        }
    }

    /// Takes the tasks' reminders and re-arms.
    func update(tasks all: [TaskConfig], now: Double) {
        tasks = [:]
        var next: [Int64: Double] = [:]
        for task in all {
            // An archived task reminds nobody.
            guard let minute = task.reminderMinute, !task.archived else { continue }
            tasks[task.id] = task
            // Keep an occurrence already armed (a suspend may be about to fire it late) unless the time changed.
            if let old = due[task.id], old > now - 3600, LocalDay.minuteOfDay(old) == minute {
                next[task.id] = old
            } else {
                next[task.id] = LocalDay.nextOccurrence(minute: minute, after: now)
            }
        }
        due = next
        firedDay = firedDay.filter { tasks[$0.key] != nil }
        arm()
    }

    /// Fires every reminder due by `now` that has not fired today, then re-arms.
    func fire(now: Double) {
        let today = LocalDay.bounds(containing: now, dayStartsAt: 0).start
        for (id, at) in due.sorted(by: { $0.value < $1.value }) where at <= now + 0.5 {
            guard let task = tasks[id], let minute = task.reminderMinute else { continue }
            let sameDay = LocalDay.bounds(containing: at, dayStartsAt: 0).start == today
            if sameDay && firedDay[id] != today {
                firedDay[id] = today
                onReminder(task)
            } else if !sameDay {
                Log.info("Skipped the reminder of \(task.name) for a day the machine was off or asleep.")
            }
            due[id] = LocalDay.nextOccurrence(minute: minute, after: max(now, at))
        }
        arm()
    }

    private func arm() {
        guard let earliest = due.values.min() else {
            timer.schedule(wallDeadline: .distantFuture)
            return
        }
        let delay = max(0, earliest - Clocks().wall)
        timer.schedule(wallDeadline: .now() + delay, leeway: .milliseconds(500))
    }

    /// When the next reminder fires (tests, status).
    var nextDue: Double? { due.values.min() }

    func cancel() { timer.cancel() }
}
