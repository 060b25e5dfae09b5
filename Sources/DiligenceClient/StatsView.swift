import DiligenceJSON
import DiligenceProtocol
import DiligenceTime

// The statistics object (docs/protocol.md, "Statistics") as typed values, read once: the
// terminal pictures and the report page draw from this, never from the JSON directly.

struct StatsView {
    struct Totals {
        /// As the daemon wrote them (`from`, `to`: shown as given, also past the years a
        /// `CalendarDay` holds).
        var from: String
        var to: String
        var completed: Int
        var focused: Int
        var activeDays: Int
    }

    struct TaskFigures {
        var name: String
        var color: String
        var goal: Int
        var completed: Int
        var focused: Int
        var goalDays: Int
        /// The days `goalDays` is out of (nil: an older daemon's, which says nothing of it).
        var goalDaysCounted: Int?
        var archived = false

        /// A task row of the statistics object.
        init(reading t: JSON) {
            (name, color, goal, completed) = (str(t, "task"), str(t, "color"), num(t, "goal"), num(t, "completed"))
            (focused, goalDays, archived) = (num(t, "focused_seconds"), num(t, "goal_days"), t["archived"]?.boolValue ?? false)
            goalDaysCounted = t["goal_days_counted"]?.intValue.map { Int($0) }
        }

        /// Its name, marked when the task is archived.
        var label: String { archived ? name + " (archived)" : name }
    }

    struct DayFigures {
        var date: CalendarDay
        var completed: Int
        var focused: Int
        /// The task planned for the day, and its completed sessions that day.
        var planned: String?
        var plannedCompleted: Int
    }

    struct MonthFigures {
        /// `YYYY-MM`.
        var month: String
        var completed: Int
        var focused: Int
        var activeDays: Int
    }

    struct Best {
        var label: String
        var focused: Int
        var abovePercent: Int

        /// "2h05m, 30% above average": how the report and the page say it.
        var aboveAverage: String { "\(hoursMinutes(focused)), \(abovePercent)% above average" }
    }

    struct Session {
        var task: String
        var start: String
        var end: String
        var focused: Int
        var pauses: Int
        var outcome: String
    }

    struct Goal {
        var task: String
        var color: String
        var goal: Int
        var completed: Int
    }

    var period: String
    var task: String?
    var from: CalendarDay
    var to: CalendarDay
    var today: CalendarDay
    var totals: Totals
    var recorded: Int
    /// Seconds away during the period's work (`away_seconds`).
    var awaySeconds: Int
    /// Seconds worked past the bell by the period's sessions (`overtime_seconds`; 0 from an older daemon).
    var overtimeSeconds: Int
    var averagePerActiveDay: Int
    var focusScore: Int?
    var streak: (current: Int, longest: Int)
    var previous: Totals?
    /// The period before up to the point this one has reached; nil unless this one holds today.
    var previousToDate: Totals?

    /// What the figures are compared with, and its name: the period before up to the same point
    /// while this one is under way (a whole one says −97 % on the 1st of a month), else all of it.
    var comparison: (totals: Totals, name: String)? {
        let noun = isDay ? "day" : period
        if let previousToDate { return (previousToDate, "previous \(noun) to this point") }
        return previous.map { ($0, "previous \(noun)") }
    }
    var tasks: [TaskFigures]
    var days: [DayFigures]
    var months: [MonthFigures]
    /// Monday first: the weekday's name and its figures.
    var weekdays: [(name: String, completed: Int, focused: Int)]
    /// Focused seconds per local hour, 0 to 23.
    var hours: [Int]
    var bestTask: Best?
    var bestWeekday: Best?
    var bestHour: Best?
    /// A day's report only: when the day begins and ends (RFC 3339), its sessions, its goals.
    var dayStart: String?
    var dayEnd: String?
    var sessions: [Session]
    var goals: [Goal]
    /// The period's interruptions (`interruptions`).
    var interruptions: Interruptions

    /// Whether this is one day's report (`today` or `day`).
    var isDay: Bool { period == "today" || period == "day" }
    /// Whether today lies in the period: only then is the current streak (which ends today) its own.
    var holdsToday: Bool { from <= today && today <= to }
    /// `3 days (longest 5)` while the period holds today; for another, only its longest streak.
    var streakText: String {
        holdsToday ? "\(plural(streak.current, "day")) now, longest \(streak.longest)" : "longest \(plural(streak.longest, "day"))"
    }

    /// The colour a picture of this report draws in: the task's for `--task`, else the one of all tasks.
    var color: String? { task.flatMap { name in tasks.first { $0.name == name }?.color } }

    init(_ r: JSON) {
        func list(_ key: String) -> [JSON] { r[key]?.arrayValue ?? [] }
        func readTotals(_ j: JSON?) -> Totals {
            Totals(
                from: str(j, "from"), to: str(j, "to"), completed: num(j, "completed"), focused: num(j, "focused_seconds"),
                activeDays: num(j, "active_days"))
        }
        func best(_ key: String, _ label: (JSON) -> String) -> Best? {
            guard let b = r[key], !b.isNull else { return nil }
            return Best(label: label(b), focused: num(b, "focused_seconds"), abovePercent: num(b, "above_average_percent"))
        }
        let fallback = CalendarDay(daysSince1970: 0)
        period = str(r, "period")
        task = r["task"]?.stringValue
        from = CalendarDay(str(r, "from")) ?? fallback
        to = CalendarDay(str(r, "to")) ?? from
        today = CalendarDay(str(r, "today")) ?? to
        totals = readTotals(r)
        recorded = num(r, "recorded")
        awaySeconds = num(r, "away_seconds")
        overtimeSeconds = num(r, "overtime_seconds")
        averagePerActiveDay = num(r, "average_seconds_per_active_day")
        focusScore = r["focus_score"]?.intValue.flatMap { Int(exactly: $0) }
        streak = (num(r["streak"], "current"), num(r["streak"], "longest"))
        previous = r["previous"].flatMap { $0.isNull ? nil : readTotals($0) }
        previousToDate = r["previous_to_date"].flatMap { $0.isNull ? nil : readTotals($0) }
        // Most focused first; equal ones in the daemon's (creation) order.
        tasks = list("tasks").map(TaskFigures.init(reading:)).enumerated().sorted {
            ($1.element.focused, $0.offset) < ($0.element.focused, $1.offset)
        }.map(\.element)
        days = list("days").compactMap { d in
            CalendarDay(str(d, "date")).map {
                DayFigures(
                    date: $0, completed: num(d, "completed"), focused: num(d, "focused_seconds"),
                    planned: d["planned"]?.stringValue, plannedCompleted: num(d, "planned_completed"))
            }
        }
        months = list("months").map {
            MonthFigures(
                month: str($0, "month"), completed: num($0, "completed"), focused: num($0, "focused_seconds"),
                activeDays: num($0, "active_days"))
        }
        weekdays = list("weekdays").map { (str($0, "weekday"), num($0, "completed"), num($0, "focused_seconds")) }
        var hours = Array(repeating: 0, count: 24)
        for h in list("hours") where (0..<24).contains(num(h, "hour")) { hours[num(h, "hour")] = num(h, "focused_seconds") }
        self.hours = hours
        interruptions = Interruptions(r["interruptions"], days: list("days"))
        // A report of one task has no other to be best among ("Best task X, 0% above average").
        bestTask = task == nil ? best("best_task") { str($0, "task") } : nil
        bestWeekday = best("best_weekday") { capitalized(str($0, "weekday")) }
        bestHour = best("best_hour") { hourRange(num($0, "hour")) }
        dayStart = r["starts_at"]?.stringValue
        dayEnd = r["ends_at"]?.stringValue
        sessions = list("sessions").map {
            Session(
                task: str($0, "task"), start: str($0, "start"), end: str($0, "end"), focused: num($0, "focused_seconds"),
                pauses: num($0, "pauses"), outcome: str($0, "outcome"))
        }
        goals = list("goals").map {
            Goal(task: str($0, "task"), color: str($0, "color"), goal: num($0, "goal"), completed: num($0, "completed"))
        }
    }

    /// The colour of task `name` (nil when the report does not list it).
    func color(of name: String) -> String? { tasks.first { $0.name == name }?.color }
}

/// `Monday` from `monday`.
func capitalized(_ word: String) -> String { word.prefix(1).uppercased() + word.dropFirst() }

/// `09:00–10:00` for hour 9.
func hourRange(_ h: Int) -> String { "\(twoDigits(h)):00–\(twoDigits((h + 1) % 24)):00" }

func twoDigits(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

/// `Jan` … `Dec`.
let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

extension StatsView {
    /// A report's interruptions: by kind, per day (those with any), per task, and the focused
    /// time per interruption.
    struct Interruptions {
        struct Row {
            var label: String
            var `internal`: Int
            var external: Int
        }

        var `internal`: Int
        var external: Int
        var focusedPerInterruption: Int?
        var days: [Row]
        var tasks: [Row]
        /// The hours of the day with any, labelled `09:00–10:00`.
        var hours: [Row]

        var total: Int { `internal` + external }

        init(_ json: JSON?, days: [JSON]) {
            `internal` = num(json, "internal")
            external = num(json, "external")
            focusedPerInterruption = json?["focused_seconds_per_interruption"]?.intValue.flatMap { Int(exactly: $0) }
            self.days = days.map {
                Row(label: str($0, "date"), internal: num($0["interruptions"], "internal"), external: num($0["interruptions"], "external"))
            }
            .filter { $0.internal + $0.external > 0 }
            tasks = (json?["tasks"]?.arrayValue ?? []).map {
                Row(label: str($0, "task"), internal: num($0, "internal"), external: num($0, "external"))
            }
            hours = (json?["hours"]?.arrayValue ?? []).map {
                Row(label: Self.hourLabel(num($0, "hour")), internal: num($0, "internal"), external: num($0, "external"))
            }
            .filter { $0.internal + $0.external > 0 }
        }

        /// `09:00–10:00`: an hour of the day as a span, which no date or task name reads like.
        static func hourLabel(_ hour: Int) -> String {
            func clock(_ h: Int) -> String { (h < 10 ? "0" : "") + "\(h):00" }
            return clock(hour) + "–" + clock(hour + 1)
        }

        /// `3: 2 internal ('), 1 external (-)`.
        static func text(_ i: Int, _ e: Int) -> String { "\(i + e): \(i) internal ('), \(e) external (-)" }

        /// `12m focused per interruption`, "" without interruptions.
        var perInterruptionText: String {
            focusedPerInterruption.map { "\(hoursMinutes($0)) focused per interruption" } ?? ""
        }
    }
}
