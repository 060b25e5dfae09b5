import DiligenceTime
import Testing

/// `HH:MM` times of day (reminders, day_starts_at).
@Suite struct TimeOfDayTests {
    @Test(arguments: [("00:00", 0), ("09:05", 545), ("12:30", 750), ("23:59", 1439)])
    func parseAndFormat(_ text: String, _ minute: Int) {
        #expect(TimeOfDay.parse(text) == minute)
        #expect(TimeOfDay.format(minute) == text)
    }

    @Test(arguments: ["", "9:05", "09:5", "24:00", "12:60", "12-30", "12:30:00", "ab:cd", "+9:05", "-1:30", "09:+5", " 9:05", "12:30 "])
    func rejects(_ text: String) {
        #expect(TimeOfDay.parse(text) == nil)
    }
}
