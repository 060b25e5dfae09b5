import DiligenceCore
import DiligenceTestSupport
import Dispatch
import Testing

@testable import DiligenceDaemon

@Suite struct ReminderFiringTests {
    @Test func firesOncePerDayAndLateOnlyOnTheSameDay() {
        withTimeZone("Europe/Berlin") {
            let queue = DispatchQueue(label: "reminder-test")
            queue.sync {
                var fired: [String] = []
                let reminders = Reminders(queue: queue) { fired.append($0.name) }
                defer { reminders.cancel() }
                let tasks = [
                    TaskConfig(id: 1, name: "Read", reminderMinute: 9 * 60), TaskConfig(id: 2, name: "Walk", reminderMinute: 18 * 60),
                ]
                reminders.update(tasks: tasks, now: localTime(2025, 6, 10, 8, 0))
                #expect(reminders.nextDue == localTime(2025, 6, 10, 9, 0))
                // Resumed from a suspend at 11:00: 09:00 fires late, once.
                reminders.fire(now: localTime(2025, 6, 10, 11, 0))
                reminders.fire(now: localTime(2025, 6, 10, 11, 0, 1))
                #expect(fired == ["Read"])
                #expect(reminders.nextDue == localTime(2025, 6, 10, 18, 0))
                // Asleep from 17:00 to the next day's 08:00: yesterday's 18:00 is not made up.
                reminders.fire(now: localTime(2025, 6, 11, 8, 0))
                #expect(fired == ["Read"])
                reminders.fire(now: localTime(2025, 6, 11, 9, 0))
                #expect(fired == ["Read", "Read"])
                // A task edit (the time moved) re-arms; a removed reminder is forgotten.
                reminders.update(tasks: [TaskConfig(id: 1, name: "Read", reminderMinute: 10 * 60)], now: localTime(2025, 6, 11, 9, 30))
                #expect(reminders.nextDue == localTime(2025, 6, 11, 10, 0))
            }
        }
    }
}
