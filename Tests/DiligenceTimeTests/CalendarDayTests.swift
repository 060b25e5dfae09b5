import DiligenceTime
import Testing

@Suite struct CalendarDayTests {
    @Test func calendarDays() {
        let day = CalendarDay(year: 2026, month: 6, day: 10)!
        #expect(day.weekday == 3) // a Wednesday
        #expect(day.monday.description == "2026-06-08")
        #expect(CalendarDay("2026-02-29") == nil)
        #expect(CalendarDay("2024-02-29")?.adding(days: 1).description == "2024-03-01")
        #expect(CalendarDay("2026-1-01") == nil)
        #expect(CalendarDay(daysSince1970: 0).description == "1970-01-01")
        #expect(CalendarDay(year: 2026, month: 1, day: 31)!.firstOfMonth(adding: -1).description == "2025-12-01")
        #expect(CalendarDay(year: 2026, month: 12, day: 5)!.firstOfMonth(adding: 1).description == "2027-01-01")
        #expect(CalendarDay("2026-06-10")!.daysSince1970 == day.daysSince1970)
    }

    @Test(arguments: [
        ("2026-06-10", "2026-W24"), ("2027-01-01", "2026-W53"), ("2026-12-31", "2026-W53"),
        ("2025-12-29", "2026-W01"), ("2021-01-03", "2020-W53"), ("2024-01-01", "2024-W01"),
    ])
    func isoWeeks(_ date: String, _ week: String) {
        #expect(CalendarDay(date)!.isoWeekName == week)
    }
}
