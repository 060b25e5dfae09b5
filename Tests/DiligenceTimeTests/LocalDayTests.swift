import DiligenceTestSupport
import DiligenceTime
import Testing

@Suite struct LocalDayTests {
    @Test func dayFromMidnightToMidnight() {
        withTimeZone("Europe/Berlin") {
            let noon = localTime(2026, 6, 10, 12)
            let day = LocalDay.bounds(containing: noon, dayStartsAt: 0)
            #expect(day.start == localTime(2026, 6, 10))
            #expect(day.end == localTime(2026, 6, 11))
            #expect(day.end - day.start == 86400)
        }
    }

    @Test func dstChangesMakeDaysOf23And25Hours() {
        withTimeZone("Europe/Berlin") {
            let spring = LocalDay.bounds(containing: localTime(2026, 3, 29, 12), dayStartsAt: 0)
            #expect(spring.end - spring.start == 23 * 3600)
            let autumn = LocalDay.bounds(containing: localTime(2026, 10, 25, 12), dayStartsAt: 0)
            #expect(autumn.end - autumn.start == 25 * 3600)
        }
    }

    @Test func dayStartsAtMovesTheBoundary() {
        withTimeZone("America/New_York") {
            // 01:30 belongs to the previous day when days start at 04:00.
            let early = LocalDay.bounds(containing: localTime(2026, 7, 2, 1, 30), dayStartsAt: 4 * 60)
            #expect(early.start == localTime(2026, 7, 1, 4))
            #expect(early.end == localTime(2026, 7, 2, 4))
            let late = LocalDay.bounds(containing: localTime(2026, 7, 2, 4, 0), dayStartsAt: 4 * 60)
            #expect(late.start == localTime(2026, 7, 2, 4))
        }
    }
}

/// Daily reminder times (`LocalDay.nextOccurrence`).
@Suite struct NextOccurrenceTests {
    @Test func todayWhenAheadElseTomorrow() {
        withTimeZone("Europe/Berlin") {
            let morning = localTime(2025, 6, 10, 8, 0)
            #expect(LocalDay.nextOccurrence(minute: 9 * 60, after: morning) == localTime(2025, 6, 10, 9, 0))
            #expect(LocalDay.nextOccurrence(minute: 9 * 60, after: localTime(2025, 6, 10, 9, 0)) == localTime(2025, 6, 11, 9, 0))
            #expect(LocalDay.nextOccurrence(minute: 0, after: localTime(2025, 12, 31, 23, 59)) == localTime(2026, 1, 1, 0, 0))
        }
    }

    @Test func acrossSpringForward() {
        withTimeZone("Europe/Berlin") {
            // 30 March 2025: 02:00 CET jumps to 03:00 CEST; the day has 23 hours.
            let next = LocalDay.nextOccurrence(minute: 9 * 60, after: localTime(2025, 3, 29, 9, 0))
            #expect(next == localTime(2025, 3, 30, 9, 0))
            #expect(next - localTime(2025, 3, 29, 9, 0) == 23 * 3600)
            // 02:30 does not exist that day: the reminder comes at 03:30 CEST, once.
            let skipped = LocalDay.nextOccurrence(minute: 2 * 60 + 30, after: localTime(2025, 3, 30, 0, 0))
            #expect(skipped == localTime(2025, 3, 30, 3, 30))
            #expect(LocalDay.nextOccurrence(minute: 2 * 60 + 30, after: skipped) == localTime(2025, 3, 31, 2, 30))
        }
    }

    @Test func acrossFallBack() {
        withTimeZone("Europe/Berlin") {
            // 26 October 2025: 03:00 CEST falls back to 02:00 CET; the day has 25 hours.
            let next = LocalDay.nextOccurrence(minute: 9 * 60, after: localTime(2025, 10, 25, 9, 0))
            #expect(next - localTime(2025, 10, 25, 9, 0) == 25 * 3600)
            // 02:30 happens twice: after the first one fired, the next is the 27th's, not the repeat.
            let first = LocalDay.nextOccurrence(minute: 2 * 60 + 30, after: localTime(2025, 10, 26, 0, 0))
            let after = LocalDay.nextOccurrence(minute: 2 * 60 + 30, after: first)
            #expect(after == localTime(2025, 10, 27, 2, 30))
            #expect(LocalDay.nextOccurrence(minute: 2 * 60 + 30, after: first + 3600) == localTime(2025, 10, 27, 2, 30))
        }
    }
}
