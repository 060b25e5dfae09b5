import DiligenceTestSupport
import DiligenceTime
import Testing

/// Local times that exist once, never, or twice, and the moments people type.
@Suite struct DateTextTests {
    @Test func berlinsGapAndRepeatedHour() {
        withTimeZone("Europe/Berlin") {
            let spring = CalendarDay("2026-03-29")!
            #expect(LocalDay.meaning(of: spring, hour: 1, minute: 59, second: 59) == .unique(localTime(2026, 3, 29, 1, 59, 59)))
            guard case .skipped(let at, let before, let after) = LocalDay.meaning(of: spring, hour: 2, minute: 30, second: 0) else {
                Issue.record("02:30 on 2026-03-29 exists in Berlin?")
                return
            }
            #expect(at == localTime(2026, 3, 29, 3, 0) && before == 3600 && after == 7200)
            #expect(LocalDay.meaning(of: spring, hour: 3, minute: 0, second: 0) == .unique(at))

            let autumn = CalendarDay("2026-10-25")!
            guard
                case .repeated(let first, let firstOffset, let second, let secondOffset) = LocalDay.meaning(
                    of: autumn, hour: 2, minute: 30, second: 0)
            else {
                Issue.record("02:30 on 2026-10-25 happens once in Berlin?")
                return
            }
            #expect(second - first == 3600 && firstOffset == 7200 && secondOffset == 3600)
            #expect(RFC3339.format(first) == "2026-10-25T02:30:00+02:00" && RFC3339.format(second) == "2026-10-25T02:30:00+01:00")
            #expect(LocalDay.meaning(of: autumn, hour: 3, minute: 0, second: 0) == .unique(localTime(2026, 10, 25, 3, 0)))
        }
    }

    /// Lord Howe shifts by 30 minutes, Chatham sits at +12:45/+13:45: the meaning is exact there too.
    @Test func halfHourShiftsAndOddOffsets() {
        withTimeZone("Australia/Lord_Howe") {
            // 2026-10-04 02:00 (+10:30) becomes 02:30 (+11:00).
            let day = CalendarDay("2026-10-04")!
            guard case .skipped(_, let before, let after) = LocalDay.meaning(of: day, hour: 2, minute: 15, second: 0) else {
                Issue.record("02:15 on 2026-10-04 exists on Lord Howe?")
                return
            }
            #expect(before == 37800 && after == 39600)
            if case .unique = LocalDay.meaning(of: day, hour: 2, minute: 30, second: 0) {} else { Issue.record("02:30 should exist once") }
            // 2026-04-05 02:00 (+11:00) goes back to 01:30 (+10:30): 01:45 happens twice.
            guard
                case .repeated(let first, _, let second, _) = LocalDay.meaning(
                    of: CalendarDay("2026-04-05")!, hour: 1, minute: 45, second: 0)
            else {
                Issue.record("01:45 on 2026-04-05 happens once on Lord Howe?")
                return
            }
            #expect(second - first == 1800)
        }
        withTimeZone("Pacific/Chatham") {
            // 2026-09-27 02:45 (+12:45) becomes 03:45 (+13:45).
            guard case .skipped(_, let before, let after) = LocalDay.meaning(of: CalendarDay("2026-09-27")!, hour: 3, minute: 0, second: 0)
            else {
                Issue.record("03:00 on 2026-09-27 exists on Chatham?")
                return
            }
            #expect(before == 45900 && after == 49500)
        }
    }

    /// What `moment` makes of each form, and what it refuses.
    @Test func moments() throws {
        try withTimeZone("Europe/Berlin") {
            let today = LocalDay.day(containing: localTime(2026, 6, 10, 2), dayStartsAt: 240) // 2026-06-09's day
            #expect(today.date == CalendarDay("2026-06-09"))
            func moment(_ text: String) throws -> Double { try DateText.moment(text, today: today, dayStartsAt: 240) }
            #expect(try moment("23:00") == localTime(2026, 6, 9, 23))
            #expect(try moment("04:00") == localTime(2026, 6, 9, 4))
            #expect(try moment("03:59:30") == localTime(2026, 6, 10, 3, 59, 30))
            #expect(try moment("2026-06-01 12:00") == localTime(2026, 6, 1, 12))
            #expect(try moment("2026-06-01T12:00:05") == localTime(2026, 6, 1, 12, 0, 5))
            #expect(try moment("2026-06-01 12:00Z") == localTime(2026, 6, 1, 14))
            #expect(try moment("2026-06-01 12:00-01:30") == localTime(2026, 6, 1, 15, 30))
            #expect(try moment("2026-06-01T10:00:00Z") == localTime(2026, 6, 1, 12))
            for bad in ["", "12", "24:00", "12:60", "2026-02-30 10:00", "12:00+25:00", "12:00+0100", "2026-06-01 12:00 junk", "yesterday"] {
                #expect(throws: DateTextError.self, "\(bad.debugDescription)") { try moment(bad) }
            }
            do {
                _ = try moment("2026-03-29 02:30")
                Issue.record("a time in the gap was accepted")
            } catch let error as DateTextError {
                #expect(error.code.rawValue == "nonexistent_time")
                #expect(
                    error.message
                        == "2026-03-29 02:30 does not exist here: the clocks jumped from 02:00 straight to 03:00 (CET, UTC+01:00 to CEST, UTC+02:00). Give a time before 02:00 or from 03:00 on."
                )
            }
            do {
                _ = try moment("2026-10-25 02:30")
                Issue.record("a repeated time was accepted")
            } catch let error as DateTextError {
                #expect(error.code.rawValue == "ambiguous_time")
                #expect(
                    error.message
                        == "2026-10-25 02:30 happens twice here (the clocks went back from 03:00 to 02:00): say which with its offset, 2026-10-25 02:30+02:00 (CEST, UTC+02:00, the first) or 2026-10-25 02:30+01:00 (CET, UTC+01:00, the second)."
                )
            }
        }
    }
}

/// The day a session counts on: the one it ends in; an end at a boundary is the earlier day's.
@Suite struct SessionDayTests {
    @Test func endsAtBoundariesBelongToTheEarlierDay() {
        let grid = DayGrid(dates: [CalendarDay("2026-06-08")!, CalendarDay("2026-06-09")!], boundaries: [0, 86400, 172800])
        #expect(grid.index(ofEnd: 0) == nil)
        #expect(grid.index(ofEnd: 0.5) == 0)
        #expect(grid.index(ofEnd: 86400) == 0)
        #expect(grid.index(ofEnd: 86400.5) == 1)
        #expect(grid.index(ofEnd: 172800) == 1)
        #expect(grid.index(ofEnd: 172801) == nil)
        let day = StatisticsDay(date: CalendarDay("2026-06-09")!, start: 86400, end: 172800)
        #expect(!day.holdsSessionEnd(86400) && day.holdsSessionEnd(86401) && day.holdsSessionEnd(172800) && !day.holdsSessionEnd(172801))
        #expect(day.contains(86400) && !day.contains(172800))
    }
}

/// Issue 13: one vocabulary of days and times for every command.
@Suite struct DateVocabularyTests {
    /// 2026-06-10 is a Wednesday.
    let wednesday = CalendarDay("2026-06-10")!

    @Test func days() {
        func day(_ text: String, weekOffset: Int? = nil) -> String? {
            DateText.day(text, today: wednesday, weekOffset: weekOffset)?.description
        }
        #expect(day("today") == "2026-06-10" && day("Yesterday") == "2026-06-09" && day("tomorrow") == "2026-06-11")
        #expect(day("-3d") == "2026-06-07" && day("+2d") == "2026-06-12" && day("-1w") == "2026-06-03" && day("-0d") == "2026-06-10")
        // A weekday in reports and ranges: the latest one up to today.
        #expect(day("wednesday") == "2026-06-10" && day("mon") == "2026-06-08" && day("friday") == "2026-06-05")
        // A weekday of a plan: that day of the week at the offset.
        #expect(day("friday", weekOffset: 0) == "2026-06-12" && day("mon", weekOffset: 1) == "2026-06-15")
        #expect(day("2026-02-28") == "2026-02-28")
        for bad in ["", "-d", "-3", "3d", "--3d", "-3x", "-1234567d", "mo", "2026-02-30", "someday"] {
            #expect(day(bad) == nil, "\(bad.debugDescription)")
        }
    }

    @Test func momentsTakeAnyDay() throws {
        try withTimeZone("Europe/Berlin") { () throws in
            let today = LocalDay.day(containing: localTime(2026, 6, 10, 12), dayStartsAt: 0)
            func moment(_ text: String) throws -> Double { try DateText.moment(text, today: today, dayStartsAt: 0) }
            #expect(try moment("yesterday 14:00") == localTime(2026, 6, 9, 14))
            #expect(try moment("mon 09:30") == localTime(2026, 6, 8, 9, 30))
            #expect(try moment("-2d 23:59") == localTime(2026, 6, 8, 23, 59))
            #expect(try moment("14:00") == localTime(2026, 6, 10, 14))
            for bad in ["yesterday", "yesterday 25:00", "noday 14:00", "yesterday 14:00 extra"] {
                #expect(throws: DateTextError.self, "\(bad.debugDescription)") { try moment(bad) }
            }
        }
    }

    @Test("9:00 is 09:00, now is now; an impossible date says why, a malformed one what to give")
    func timesAsPeopleTypeThem() throws {
        try withTimeZone("Europe/Berlin") { () throws in
            let today = LocalDay.day(containing: localTime(2026, 6, 10, 12), dayStartsAt: 0)
            let now = localTime(2026, 6, 10, 12, 34)
            func moment(_ text: String) throws(DateTextError) -> Double {
                try DateText.moment(text, today: today, dayStartsAt: 0, now: now)
            }
            #expect(try moment("9:00") == localTime(2026, 6, 10, 9))
            #expect(try moment("yesterday 9:05") == localTime(2026, 6, 9, 9, 5))
            #expect(try moment("now") == now && (try moment("NOW")) == now)
            func refusal(_ text: String) -> String {
                do throws(DateTextError) {
                    _ = try moment(text)
                    return "accepted"
                } catch { return error.message }
            }
            #expect(refusal("2026-13-01 09:00").contains("there is no month 13"), "\(refusal("2026-13-01 09:00"))")
            #expect(refusal("2026-11-31 09:00").contains("November has 30 days"), "\(refusal("2026-11-31 09:00"))")
            #expect(refusal("2026-02-29T10:00").contains("February 2026 has 28 days"), "\(refusal("2026-02-29T10:00"))")
            #expect(refusal("2026-00-10 10:00").contains("there is no month 0"))
            #expect(refusal("2026-05-00 10:00").contains("there is no day 0"))
            for bad in ["900", "9:5", "123:00", "9:00:0"] { #expect(refusal(bad).contains("is not a time"), "\(bad)") }
            let bound = { (text: String) -> String in
                do throws(DateTextError) {
                    _ = try DateText.bound(text, endOfDay: false, today: today, dayStartsAt: 0)
                    return "accepted"
                } catch { return error.message }
            }
            #expect(bound("2026-11-31").contains("November has 30 days"), "\(bound("2026-11-31"))")
            #expect(DateText.impossibleDate("2026-13-01") == "there is no month 13")
            #expect(DateText.impossibleDate("2026-11-30") == nil && DateText.impossibleDate("monday") == nil)
        }
    }

    /// `--since`/`--until`: a day is its whole statistics day; a time is that moment; a local
    /// time in a DST gap or repeated hour is refused here too.
    @Test func bounds() throws {
        try withTimeZone("Europe/Berlin") { () throws in
            let today = LocalDay.day(containing: localTime(2026, 10, 28, 12), dayStartsAt: 240)
            func bound(_ text: String, end: Bool = false) throws(DateTextError) -> Double {
                try DateText.bound(text, endOfDay: end, today: today, dayStartsAt: 240)
            }
            #expect(try bound("yesterday") == localTime(2026, 10, 27, 4))
            #expect(try bound("yesterday", end: true) == localTime(2026, 10, 28, 4))
            #expect(try bound("-3d") == localTime(2026, 10, 25, 4))
            #expect(try bound("2026-10-20 09:15") == localTime(2026, 10, 20, 9, 15))
            #expect(try bound("09:15", end: true) == localTime(2026, 10, 28, 9, 15))
            #expect(try bound("2026-10-20T09:15:00Z") == localTime(2026, 10, 20, 11, 15))
            for (text, code) in [
                ("2026-10-25 02:30", "ambiguous_time"), ("2026-03-29 02:30", "nonexistent_time"), ("soon", "invalid_date"),
            ] {
                do {
                    _ = try bound(text)
                    Issue.record("\(text.debugDescription) was taken")
                } catch let error as DateTextError {
                    #expect(error.code.rawValue == code, "\(text): \(error.message)")
                    if code == "invalid_date" {
                        #expect(error.message.contains("-3d") && error.message.contains("HH:MM"), "\(error.message)")
                    }
                }
            }
        }
    }
}
