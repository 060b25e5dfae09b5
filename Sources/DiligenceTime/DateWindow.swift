/// The dates diligence records and reports (docs/protocol.md, "Dates"). Every date that enters
/// — a session from the timer, `history add` or an import, a day to plan, a report's period, a
/// history filter — must lie in it, so no arithmetic ever meets a date it cannot handle and no
/// report can grow past a known size (at most one day per day since 1990).
///
/// - Days (reports, plans, filters): from 1990-01-01 to a year after today (`daysAhead`), so
///   next year's plans and `stats year --offset 1` are fine.
/// - Sessions: from the start of 1990-01-01 (local time) to a day after now (`sessionLead`: a
///   session exported from a machine whose clock runs ahead still imports).
public enum DateWindow {
    public static let firstDay = CalendarDay(year: 1990, month: 1, day: 1) ?? .earliest
    /// How far past today a day may be named.
    public static let daysAhead = 366
    /// How far past now a session may end, in seconds.
    public static let sessionLead = 86400.0

    /// The last day that may be named when it is `today`.
    public static func lastDay(today: CalendarDay) -> CalendarDay { today.adding(days: daysAhead) }

    public static func contains(_ day: CalendarDay, today: CalendarDay) -> Bool {
        firstDay <= day && day <= lastDay(today: today)
    }

    /// `1990-01-01 to 2027-06-11`: the window as messages name it.
    public static func description(today: CalendarDay) -> String { "\(firstDay) to \(lastDay(today: today))" }

    /// Wall-clock seconds a session's start and end must lie between, at `now`.
    public static func sessions(now: Double) -> ClosedRange<Double> {
        let first = LocalDay.start(of: firstDay, dayStartsAt: 0)
        let last = now.isFinite ? max(now + sessionLead, first) : first
        return first...last
    }

    /// The first and last day of the period `offset` periods from the one holding `anchor`
    /// (`today` when not given; a week runs Monday to Sunday); nil when the period does not
    /// begin inside the window. Any `offset` is safe: the arithmetic is checked, never trapping.
    public static func period(
        _ kind: ReportPeriod, offset: Int, anchor: CalendarDay? = nil,
        today: CalendarDay
    ) -> (first: CalendarDay, last: CalendarDay)? {
        let from = anchor ?? today
        let first: CalendarDay
        let last: CalendarDay
        switch kind {
        case .day:
            guard let number = checkedDay(from.daysSince1970, plus: offset, times: 1, today: today) else { return nil }
            first = CalendarDay(daysSince1970: number)
            last = first
        case .week:
            guard let number = checkedDay(from.monday.daysSince1970, plus: offset, times: 7, today: today) else { return nil }
            first = CalendarDay(daysSince1970: number)
            last = first.adding(days: 6)
        case .month:
            let (index, overflow) = (from.year * 12 + from.month - 1).addingReportingOverflow(offset)
            guard !overflow, let start = CalendarDay(year: index / 12, month: index % 12 + 1, day: 1), contains(start, today: today) else {
                return nil
            }
            first = start
            last = start.firstOfMonth(adding: 1).adding(days: -1)
        case .year:
            let (year, overflow) = from.year.addingReportingOverflow(offset)
            guard !overflow, let start = CalendarDay(year: year, month: 1, day: 1), contains(start, today: today) else { return nil }
            first = start
            last = CalendarDay(year: year, month: 12, day: 31) ?? start
        }
        return (first, last)
    }

    /// `base + offset × times` as a day number inside the window, or nil (also on overflow).
    private static func checkedDay(_ base: Int, plus offset: Int, times: Int, today: CalendarDay) -> Int? {
        let (scaled, overflowed) = offset.multipliedReportingOverflow(by: times)
        let (number, overflow) = base.addingReportingOverflow(scaled)
        guard !overflowed, !overflow,
            number >= firstDay.daysSince1970, number <= lastDay(today: today).daysSince1970
        else { return nil }
        return number
    }
}

/// The kinds of period a report covers (`stats` today/week/month/year, `week`).
public enum ReportPeriod: String, CaseIterable, Sendable {
    case day, week, month, year
}
