import Testing
@testable import DiligenceDaemon
import DiligenceTestSupport
import DiligenceCore
import Dispatch

@Suite struct ReminderTests {
    @Test func todayWhenAheadElseTomorrow() {
        withTimeZone("Europe/Berlin") {
            let morning = localTime(2025, 6, 10, 8, 0)
            #expect(Reminders.nextOccurrence(minute: 9 * 60, after: morning) == localTime(2025, 6, 10, 9, 0))
            #expect(Reminders.nextOccurrence(minute: 9 * 60, after: localTime(2025, 6, 10, 9, 0)) == localTime(2025, 6, 11, 9, 0))
            #expect(Reminders.nextOccurrence(minute: 0, after: localTime(2025, 12, 31, 23, 59)) == localTime(2026, 1, 1, 0, 0))
        }
    }

    @Test func acrossSpringForward() {
        withTimeZone("Europe/Berlin") {
            // 30 March 2025: 02:00 CET jumps to 03:00 CEST; the day has 23 hours.
            let next = Reminders.nextOccurrence(minute: 9 * 60, after: localTime(2025, 3, 29, 9, 0))
            #expect(next == localTime(2025, 3, 30, 9, 0))
            #expect(next - localTime(2025, 3, 29, 9, 0) == 23 * 3600)
            // 02:30 does not exist that day: the reminder comes at 03:30 CEST, once.
            let skipped = Reminders.nextOccurrence(minute: 2 * 60 + 30, after: localTime(2025, 3, 30, 0, 0))
            #expect(skipped == localTime(2025, 3, 30, 3, 30))
            #expect(Reminders.nextOccurrence(minute: 2 * 60 + 30, after: skipped) == localTime(2025, 3, 31, 2, 30))
        }
    }

    @Test func acrossFallBack() {
        withTimeZone("Europe/Berlin") {
            // 26 October 2025: 03:00 CEST falls back to 02:00 CET; the day has 25 hours.
            let next = Reminders.nextOccurrence(minute: 9 * 60, after: localTime(2025, 10, 25, 9, 0))
            #expect(next - localTime(2025, 10, 25, 9, 0) == 25 * 3600)
            // 02:30 happens twice: after the first one fired, the next is the 27th's, not the repeat.
            let first = Reminders.nextOccurrence(minute: 2 * 60 + 30, after: localTime(2025, 10, 26, 0, 0))
            let after = Reminders.nextOccurrence(minute: 2 * 60 + 30, after: first)
            #expect(after == localTime(2025, 10, 27, 2, 30))
            #expect(Reminders.nextOccurrence(minute: 2 * 60 + 30, after: first + 3600) == localTime(2025, 10, 27, 2, 30))
        }
    }
}

@Suite struct ReminderFiringTests {
    @Test func firesOncePerDayAndLateOnlyOnTheSameDay() {
        withTimeZone("Europe/Berlin") {
            let queue = DispatchQueue(label: "reminder-test")
            queue.sync {
                let reminders = Reminders(queue: queue)
                defer { reminders.cancel() }
                var fired: [String] = []
                reminders.onReminder = { fired.append($0.name) }
                let tasks = [TaskConfig(id: 1, name: "Read", reminderMinute: 9 * 60), TaskConfig(id: 2, name: "Walk", reminderMinute: 18 * 60)]
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
