import Testing
@testable import DiligenceDaemon
import DiligenceTestSupport

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
