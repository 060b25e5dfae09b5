import DiligenceCore
import DiligenceJSON
import DiligenceProtocol
import DiligenceStore
import DiligenceTime

/// Statistics and the recorded history (docs/protocol.md, docs/statistics.md): the one "today",
/// today's completed count, reports with their streaks, the week and its plan, history
/// corrections, export and import. Figures come from DiligenceCore's StatsAccumulator over the
/// sessions SQLite selects by time range; days are local days under `day_starts_at`. Sessions
/// entered by hand or imported go through the daemon's one door (`SessionRecorder`). Runs on
/// the daemon's queue.
final class StatsService {
    let store: Store
    let clocks: Clocks
    let recorder: SessionRecorder
    /// The config's `day_starts_at` (minutes after midnight): the daemon sets it on every load.
    var dayStartsAt: Int
    /// What the daemon supplies once the timer and the sync merge exist.
    struct Links {
        /// The span of the work phase that is running or paused: no session entered by hand or
        /// imported may overlap it (the timer records it when it ends).
        var runningWork: (Now) -> (start: Double, end: Double, task: String)?
        /// An import added or replaced tasks: the daemon re-reads the reminders and tells the watchers.
        var tasksImported: () -> Void
        /// The devices known here, given the other devices whose sessions are concerned
        /// (`SyncMerge.knownDevices`).
        var devices: (_ recorded: Set<String>) -> [KnownDevice]
    }
    private var links: Links?
    /// Today's statistics day (`today(at:)`) and the `day_starts_at` it was computed with.
    private var todayKept: (day: StatisticsDay, dayStartsAt: Int)?
    /// The last `today_completed`, with the day and the store's write count it was taken at.
    private var todayCount: (dayStart: Double, writes: Int64, count: Int)?

    init(store: Store, clocks: Clocks, recorder: SessionRecorder, dayStartsAt: Int) {
        self.store = store
        self.clocks = clocks
        self.recorder = recorder
        self.dayStartsAt = dayStartsAt
    }

    /// Wires the daemon's parts in, once, before the first command.
    func connect(_ links: Links) {
        precondition(self.links == nil, "StatsService was connected twice")
        self.links = links
    }

    private var linked: Links {
        guard let links else { preconditionFailure("StatsService was never connected") }
        return links
    }

    func runningWork(_ now: Now) -> (start: Double, end: Double, task: String)? { linked.runningWork(now) }
    func tasksImported() { linked.tasksImported() }
    func devices(_ recorded: Set<String>) -> [KnownDevice] { linked.devices(recorded) }

    /// Serves the statistics, plan, history, export and import commands.
    func perform(_ command: ControlCommand) throws(DiligenceError) -> JSON {
        switch command {
        case .stats(let period, let offset, let task, let date, let device):
            return try statsReport(period: period, offset: offset, task: task, date: date, device: try deviceFilter(device))
        case .week(let offset, let device): return try weekView(offset: offset, device: try deviceFilter(device))
        case .planSet(let dayText, let name, let offset):
            let day = try planDay(dayText, offset: offset)
            let task = try store.findTask(name, scope: .active)
            try store.setPlan(day: day, taskID: task.id)
            return .object([("day", .string(day.description)), ("task", .string(task.name))])
        case .planClear(let dayText, let offset):
            let day = try planDay(dayText, offset: offset)
            let cleared = try store.clearPlan(day: day)
            return .object([("day", .string(day.description)), ("cleared", .bool(cleared))])
        case .history(let task, let since, let until, let limit, let device, _):
            return try history(task: task, since: since, until: until, limit: limit, device: try deviceFilter(device))
        case .historyAdd(let task, let start, let end, let pauses):
            return try addSession(task: task, start: start, end: end, pauses: pauses)
        case .historyRemove(let id):
            let removed = try store.removeSession(id: id)
            Log.info("Removed session \(removed.id) of \(removed.taskName).", fields: [("EVENT", "session_removed")])
            return .object([("removed", removed.json)])
        case .historyEdit(let id, let changes):
            return try editSession(id: id, changes).json
        case .export:
            return try Self.export(try exportPlan(command), from: store)
        case .importChunk(let content, let importID, let more, let replaceTasks):
            return try importChunk(content: content, importID: importID, more: more, replaceTasks: replaceTasks)
        default:
            throw DiligenceError(.unknownCommand, "Not a statistics command: \(command).")
        }
    }

    /// An `export` command's plan (`exportPlan`); `invalid_argument` for another command.
    func exportPlan(_ command: ControlCommand) throws(DiligenceError) -> ExportPlan {
        guard case .export(let format, let task, let since, let until, let withTasks, let device, let segments) = command else {
            throw DiligenceError(.invalidArgument, "Not an export: \(command).")
        }
        var plan = try exportPlan(
            format: format, task: task, since: since, until: until, withTasks: withTasks, device: try deviceFilter(device))
        guard !segments || format == .ics else {
            throw DiligenceError(.invalidArgument, "\"segments\" goes with the ics format only (a calendar's events).")
        }
        plan.segments = segments
        return plan
    }

    /// The task to start from idle when none is named: today's planned one, if any.
    func plannedTaskToday() throws(DiligenceError) -> TaskConfig? {
        let today = todayDate
        guard let id = try store.plans(from: today, through: today)[today] else { return nil }
        return try store.task(id: id)
    }

    // MARK: Days

    /// Today: the statistics day holding `now` under `day_starts_at`, in the current time zone.
    /// The one "today" of `status`, `stats`, `plan`, `history add` and `start` without a task.
    /// Computed once a day, as every status request needs it and localtime_r/mktime cost: a
    /// wall-clock step out of the day, a new day, a reloaded `day_starts_at` or a new time
    /// zone (`zoneChanged`, from `DirectoryWatch.timeZone`) computes it anew. Not a system call more per
    /// status: a read of the inotify descriptor here would cost 2–3 µs on every request.
    func today(at now: Now) -> StatisticsDay {
        if let kept = todayKept, kept.dayStartsAt == dayStartsAt, kept.day.contains(now.wall) { return kept.day }
        let day = LocalDay.day(containing: now.wall, dayStartsAt: dayStartsAt)
        todayKept = (day, dayStartsAt)
        return day
    }

    /// Completed work sessions today. Every status answer and event carries it, so it is kept
    /// until the day or the database changes (any write by this daemon: sessions, corrections,
    /// imports, removed tasks); a failed count is not kept.
    func todayCompleted(at now: Now) -> Int {
        let day = today(at: now)
        let writes = store.writeCount
        if let kept = todayCount, kept.dayStart == day.start, kept.writes == writes { return kept.count }
        guard let count = try? store.completedCount(endingIn: day) else { return 0 }
        todayCount = (day.start, writes, count)
        return count
    }

    /// The time zone changed: today and its count are computed anew.
    func zoneChanged() {
        todayKept = nil
        todayCount = nil
    }

    /// The date of today's statistics day (`today(at:)`, the one "today" of every command).
    var todayDate: CalendarDay { today(at: clocks.now).date }

    /// The day of the first recorded session (of `taskID`), inside the date window: a session
    /// dated before 1990 (written by an older diligence) is not reported, and no report reaches
    /// back to it. Nil when nothing is recorded.
    func firstRecordedDay(taskID: Int64?, device: DeviceFilter? = nil) throws(DiligenceError) -> CalendarDay? {
        guard let start = try store.firstSessionStart(taskID: taskID, device: device) else { return nil }
        return min(max(LocalDay.date(containing: start, dayStartsAt: dayStartsAt), DateWindow.firstDay), todayDate)
    }

    /// `out_of_range` for a day outside the date window that `field` led to.
    func outsideWindow(_ field: String, _ what: String) -> DiligenceError {
        DiligenceError(
            .outOfRange,
            "\"\(field)\": \(what) is outside the dates diligence keeps, \(DateWindow.description(today: todayDate)) (from 1990 to a year ahead)."
        )
    }

    func grid(_ first: CalendarDay, _ last: CalendarDay) -> DayGrid {
        LocalDay.grid(from: first, through: last, dayStartsAt: dayStartsAt)
    }

    /// Runs every session of `tasks` touching `grid` through an accumulator.
    func accumulate(
        _ grid: DayGrid, tasks: [TaskConfig], only task: TaskConfig? = nil, device: DeviceFilter? = nil
    ) throws(DiligenceError) -> StatsAccumulator {
        var acc = StatsAccumulator(grid: grid, taskIDs: tasks.map(\.id))
        guard grid.count > 0 else { return acc }
        try store.forEachSession(from: grid.start, to: grid.end, taskID: task?.id, device: device) {
            task, start, end, focused, pauses, completed in
            acc.add(taskID: task, start: start, end: end, focusedSeconds: focused, pauses: pauses, completed: completed)
        }
        return acc
    }

    /// Per day of `acc`, whether it counts towards a streak (Statistics.metGoal).
    func goalDays(_ acc: StatsAccumulator, tasks: [TaskConfig]) -> [Bool] {
        acc.goalDays(goals: tasks.map(\.goal))
    }

    /// Per day of `grid`, whether it counts towards a streak, read from completed sessions
    /// alone (GoalDayCounter): the same days `goalDays(accumulate(grid, ...))` gives, cheaper.
    func goalDays(_ grid: DayGrid, tasks: [TaskConfig], only task: TaskConfig?, device: DeviceFilter? = nil) throws(DiligenceError)
        -> [Bool]
    {
        var counter = GoalDayCounter(grid: grid, taskIDs: tasks.map(\.id), goals: tasks.map(\.goal))
        guard grid.count > 0 else { return [] }
        try store.forEachCompletedSession(from: grid.start, to: grid.end, taskID: task?.id, device: device) { task, end in
            counter.addCompleted(taskID: task, end: end)
        }
        return counter.goalDays
    }

    /// The current streak (`Statistics.currentStreak`) of `tasks` (or `task` alone), read from
    /// completed sessions in growing windows.
    func currentStreak(tasks: [TaskConfig], only task: TaskConfig?, device: DeviceFilter? = nil, known: [Bool] = []) throws(DiligenceError)
        -> Int
    {
        let today = todayDate
        return try Statistics.currentStreak(
            today: today, known: known,
            firstDay: { () throws(DiligenceError) in try firstRecordedDay(taskID: task?.id, device: device) },
            goalDays: { from throws(DiligenceError) in try goalDays(grid(from, today), tasks: tasks, only: task, device: device) })
    }

    // MARK: stats

    private func statsReport(period: StatsPeriod, offset: Int, task: String?, date: String?, device: DeviceFilter?) throws(DiligenceError)
        -> JSON
    {
        let only = try task.map { name throws(DiligenceError) in try store.findTask(name) }
        let tasks = if let only { [only] } else { try store.tasks() }
        let now = todayDate
        let anchor = try anchorDay(date, period: period, today: now)
        let first: CalendarDay
        let last: CalendarDay
        if let kind = period.reportPeriod {
            guard let span = DateWindow.period(kind, offset: offset, anchor: anchor, today: now) else {
                throw outsideWindow("offset", "the \(period.rawValue) \(offset) from \(date == nil ? "this one" : "that of \(anchor)")")
            }
            (first, last) = span
        } else {
            guard offset == 0 else { throw DiligenceError(.invalidArgument, "\"offset\" does not apply to the period \"all\".") }
            first = try firstRecordedDay(taskID: only?.id, device: device) ?? now
            last = now
        }
        let acc = try accumulate(grid(first, last), tasks: tasks, only: only, device: device)
        // Longest streak among the period's days up to today; the current one runs up to today.
        let elapsed = acc.grid.dates.prefix { $0 <= now }.count
        let periodGoalDays = Array(goalDays(acc, tasks: tasks).prefix(elapsed))
        var result = try summary(acc, tasks: tasks, elapsedDays: elapsed, device: device)
        let holdsToday = first <= now && now <= last
        let current = try currentStreak(tasks: tasks, only: only, device: device, known: holdsToday ? periodGoalDays : [])
        // The current streak reaches into a period that holds today (it may have begun before
        // the period): the longest streak touching the period is never shorter than it.
        let withinPeriod = Statistics.streaks(periodGoalDays).longest
        let longest = holdsToday ? max(withinPeriod, current) : withinPeriod
        result =
            [
                ("period", .string(period.rawValue)), ("offset", .int(offset)), ("task", .string(only?.name)),
                ("from", .string(first.description)), ("to", .string(last.description)), ("today", .string(now.description)),
            ] + result + [("streak", .object([("current", .int(current)), ("longest", .int(longest))]))]
        // Time away during the work of the period's sessions (docs/presence.md).
        let away = try store.awaySeconds(from: acc.grid.start, to: acc.grid.end, taskID: only?.id, device: device)
        let compared = try previousTotals(period, offset: offset, anchor: anchor, only: only, device: device)
        let toDate = holdsToday ? try previousTotalsToDate(period, offset, anchor: anchor, first: first, only: only, device: device) : .null
        // Overtime is focus too; it is shown apart (docs/statistics.md).
        let overtime = try store.overtimeSeconds(from: acc.grid.start, to: acc.grid.end, taskID: only?.id, device: device)
        let marked = try interruptions(acc.grid, only: only, device: device)
        result += [
            ("away_seconds", .int(away)), ("overtime_seconds", .int(overtime)),
            ("days", .array(try dayRows(acc, tasks: tasks, marked: marked))), ("previous", compared),
        ]
        result += interruptionFigures(marked, tasks: tasks, focused: acc.total.focusedSeconds)
        result.append(("previous_to_date", toDate))
        if period == .today || period == .day {
            let day = acc.grid
            let sessions = try store.history(taskID: only?.id, device: device, from: day.start - Store.longestSessionSpan, to: day.end)
                .filter { $0.end > day.start } // one ending at the day's start is the day before's
            result.append(("starts_at", .string(RFC3339.format(day.start))))
            result.append(("ends_at", .string(RFC3339.format(day.end))))
            result.append(("sessions", .array(sessions.map(\.json))))
            result.append(
                (
                    "goals",
                    .array(
                        tasks.indices.filter { tasks[$0].goal > 0 && !tasks[$0].archived }.map { i in
                            .object([
                                ("task", .string(tasks[i].name)), ("color", .string(tasks[i].color.rawValue)),
                                ("goal", .int(tasks[i].goal)), ("completed", .int(acc.tasks[i].completed)),
                            ])
                        })
                ))
        }
        return .object(result)
    }

    /// The totals of the period before (for a report's change against it), the whole of it,
    /// summed in SQL: a second pass over a year of sessions would double the report's time.
    /// The totals of the period before; null for the first period of the date window.
    private func previousTotals(
        _ period: StatsPeriod, offset: Int, anchor: CalendarDay, only: TaskConfig?, device: DeviceFilter?
    ) throws(DiligenceError) -> JSON {
        guard let kind = period.reportPeriod,
            let (first, last) = DateWindow.period(kind, offset: offset - 1, anchor: anchor, today: todayDate)
        else { return .null }
        let days = grid(first, last)
        let totals = try store.totals(from: days.start, to: days.end, taskID: only?.id, device: device)
        return .object([
            ("from", .string(first.description)), ("to", .string(last.description)),
            ("completed", .int(totals.completed)), ("focused_seconds", .int(totals.seconds)),
        ])
    }

    /// The words a day may be, for a "did you mean" after a mistyped one.
    static let dayWords = ["today", "yesterday", "tomorrow"] + CalendarDay.weekdayNames

    /// The day whose period a report shows: `date`, checked, or today.
    private func anchorDay(_ date: String?, period: StatsPeriod, today: CalendarDay) throws(DiligenceError) -> CalendarDay {
        guard let date else { return today }
        guard period != .all else { throw DiligenceError(.invalidArgument, "\"date\" does not apply to the period \"all\".") }
        return try day(date, field: "date", today: today)
    }

    /// The day `text` names as `field` (`YYYY-MM-DD`, `today`, `tomorrow`, `yesterday`, a
    /// weekday: of the week `weekOffset` weeks from this one when given), within the date window.
    private func day(_ text: String, field: String, today: CalendarDay, weekOffset: Int? = nil) throws(DiligenceError) -> CalendarDay {
        guard let day = DateText.day(text, today: today, weekOffset: weekOffset) else {
            throw DiligenceError(
                .invalidDate,
                "\"\(field)\": \(text.debugDescription) is not a day: \(DateText.impossibleDate(text) ?? "give " + DateText.dayForms)."
                    + Suggestion.didYouMean(text, Self.dayWords, quote: "\""))
        }
        guard DateWindow.contains(day, today: today) else { throw outsideWindow(field, day.description) }
        return day
    }

    /// The period before up to the point this one has reached: as many days into it as today is
    /// into this one, and as far into that day as now is into today (the whole period when it is
    /// shorter). A period under way compared with a whole one says −97 % on the 1st of a month.
    private func previousTotalsToDate(
        _ period: StatsPeriod, _ offset: Int, anchor: CalendarDay, first: CalendarDay, only: TaskConfig?, device: DeviceFilter?
    ) throws(DiligenceError) -> JSON {
        let now = clocks.now
        let today = today(at: now)
        guard let kind = period.reportPeriod,
            let (previousFirst, previousLast) = DateWindow.period(kind, offset: offset - 1, anchor: anchor, today: today.date)
        else { return .null }
        let sameDay = previousFirst.adding(days: today.date.daysSince1970 - first.daysSince1970)
        let last = min(sameDay, previousLast)
        let days = grid(previousFirst, last)
        let until = sameDay > previousLast ? days.end : min(days.end, grid(sameDay, sameDay).start + (now.wall - today.start))
        let totals = try store.totals(from: days.start, to: until, taskID: only?.id, device: device)
        return .object([
            ("from", .string(previousFirst.description)), ("to", .string(last.description)), ("until", .string(RFC3339.format(until))),
            ("completed", .int(totals.completed)), ("focused_seconds", .int(totals.seconds)),
        ])
    }

    /// One row per day of `acc`: its tally, and its plan with what was done of the planned task
    /// (a plan for a task other than the report's `--task` is left out).
    /// The interruptions marked on the days of `grid`, each on the day and hour of its moment.
    private func interruptions(_ grid: DayGrid, only: TaskConfig?, device: DeviceFilter?) throws(DiligenceError) -> InterruptionTally {
        var tally = InterruptionTally(days: grid.count)
        guard grid.count > 0 else { return tally }
        try store.forEachInterruption(from: grid.start, to: grid.end, taskID: only?.id, device: device) { task, kind, at in
            tally.add(kind, taskID: task, day: grid.index(of: at), hour: LocalDay.minuteOfDay(at) / 60)
        }
        return tally
    }

    /// The report's interruption figures (docs/statistics.md, "Interruptions"): totals by kind,
    /// per task and per hour of the day, and the focused time per interruption.
    private func interruptionFigures(_ marked: InterruptionTally, tasks: [TaskConfig], focused: Double) -> [(String, JSON)] {
        let perTask: [JSON] = tasks.compactMap { task in
            guard let counts = marked.tasks[task.id] else { return nil }
            return .object([("task", .string(task.name))] + Self.counts(counts))
        }
        let hours: [JSON] = (0..<24).map { .object([("hour", .int($0))] + Self.counts(marked.hours[$0])) }
        return [
            (
                "interruptions",
                .object(
                    Self.counts(marked.total) + [
                        ("focused_seconds_per_interruption", marked.focusedSecondsPerInterruption(focused).map { .int($0) } ?? .null),
                        ("tasks", .array(perTask)), ("hours", .array(hours)),
                    ])
            )
        ]
    }

    static func counts(_ c: InterruptionTally.Counts) -> [(String, JSON)] {
        [("internal", .int(c.internal)), ("external", .int(c.external))]
    }

    private func dayRows(_ acc: StatsAccumulator, tasks: [TaskConfig], marked: InterruptionTally) throws(DiligenceError) -> [JSON] {
        let grid = acc.grid
        let plans = grid.count == 0 ? [:] : try store.plans(from: grid.dates[0], through: grid.dates[grid.count - 1])
        let taskIndex = Dictionary(tasks.indices.map { (tasks[$0].id, $0) }, uniquingKeysWith: { a, _ in a })
        return grid.dates.indices.map { i in
            let date = grid.dates[i]
            let planned = plans[date].flatMap { taskIndex[$0] }
            var row: [(String, JSON)] = [
                ("date", .string(date.description)), ("weekday", .string(CalendarDay.weekdayNames[date.weekday - 1])),
                ("completed", .int(acc.days[i].completed)), ("focused_seconds", .int(acc.days[i].seconds)),
                ("interruptions", .object(Self.counts(marked.days[i]))),
            ]
            if let planned {
                row += [("planned", .string(tasks[planned].name)), ("planned_completed", .int(acc.tally(day: i, task: planned).completed))]
            }
            return .object(row)
        }
    }

    /// Per task, the period's days up to today from its first recorded session on: the days its
    /// goal could be reached ("6 of 335" counted days before any history, issue 32). When a goal
    /// was set is not stored; the first session stands for it.
    private func goalDaysCounted(_ acc: StatsAccumulator, tasks: [TaskConfig], elapsed: Int, device: DeviceFilter?)
        throws(DiligenceError) -> [Int]
    {
        let firsts = try store.firstSessionStarts(device: device)
        let dates = acc.grid.dates.prefix(elapsed)
        return tasks.map { task in
            guard let start = firsts[task.id] else { return 0 }
            let first = LocalDay.date(containing: start, dayStartsAt: dayStartsAt)
            return dates.count { $0 >= first }
        }
    }

    /// The figures every report has (docs/statistics.md).
    private func summary(_ acc: StatsAccumulator, tasks: [TaskConfig], elapsedDays: Int, device: DeviceFilter?) throws(DiligenceError)
        -> [(String, JSON)]
    {
        let counted = try goalDaysCounted(acc, tasks: tasks, elapsed: elapsedDays, device: device)
        let total = acc.total
        let active = acc.activeDays
        let goalDays = acc.goalDayCounts(goals: tasks.map(\.goal), days: elapsedDays)
        let taskRows: [JSON] = tasks.indices.map { i in
            .object(
                [("task", .string(tasks[i].name)), ("color", .string(tasks[i].color.rawValue)), ("goal", .int(tasks[i].goal))]
                    + tally(acc.tasks[i])
                    + [("goal_days", .int(goalDays[i])), ("goal_days_counted", .int(counted[i])), ("archived", .bool(tasks[i].archived))])
        }
        let weekdays: [JSON] = (0..<7).map { i in .object([("weekday", .string(CalendarDay.weekdayNames[i]))] + tally(acc.weekdays[i])) }
        let hours: [JSON] = (0..<24).map { h in
            .object([("hour", .int(h)), ("focused_seconds", .int(Int(saturating: acc.hours[h].rounded())))])
        }
        func best(_ values: [Double], _ name: (Int) -> (String, JSON)) -> JSON {
            guard let b = Statistics.best(values) else { return .null }
            return .object([
                name(b.index), ("focused_seconds", .int(Int(saturating: b.value.rounded()))),
                ("above_average_percent", .int(b.aboveAveragePercent)),
            ])
        }
        return tally(total) + [
            ("recorded", .int(acc.recorded)),
            ("active_days", .int(active)),
            ("average_seconds_per_active_day", .int(active == 0 ? 0 : Int(saturating: (total.focusedSeconds / Double(active)).rounded()))),
            ("focus_score", .int(acc.focusScore)),
            ("tasks", .array(taskRows)),
            ("months", .array(monthRows(acc))),
            ("weekdays", .array(weekdays)),
            ("hours", .array(hours)),
            ("best_task", best(acc.tasks.map(\.focusedSeconds)) { ("task", .string(tasks[$0].name)) }),
            ("best_weekday", best(acc.weekdays.map(\.focusedSeconds)) { ("weekday", .string(CalendarDay.weekdayNames[$0])) }),
            ("best_hour", best(acc.hours) { ("hour", .int($0)) }),
        ]
    }

    /// Per calendar month the period touches: its tally and active days.
    private func monthRows(_ acc: StatsAccumulator) -> [JSON] {
        var rows: [JSON] = []
        var i = 0
        while i < acc.grid.count {
            let month = acc.grid.dates[i]
            var total = Tally()
            var active = 0
            while i < acc.grid.count, acc.grid.dates[i].year == month.year, acc.grid.dates[i].month == month.month {
                let day = acc.days[i]
                total.completed += day.completed
                total.focusedSeconds += day.focusedSeconds
                if day.completed > 0 || day.focusedSeconds > 0 { active += 1 }
                i += 1
            }
            rows.append(.object([("month", .string(String(month.description.prefix(7))))] + tally(total) + [("active_days", .int(active))]))
        }
        return rows
    }

    // MARK: week and plan

    private func weekView(offset: Int, device: DeviceFilter?) throws(DiligenceError) -> JSON {
        let today = todayDate
        guard let (monday, sunday) = DateWindow.period(.week, offset: offset, today: today) else {
            throw outsideWindow("offset", "the week \(offset) from this one")
        }
        let tasks = try store.tasks()
        let acc = try accumulate(grid(monday, sunday), tasks: tasks, device: device)
        let plans = try store.plans(from: monday, through: sunday)
        let byID = Dictionary(tasks.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let days: [JSON] = (0..<7).map { d in
            let date = monday.adding(days: d)
            let planned = plans[date].flatMap { byID[$0] }
            let done: [JSON] = tasks.indices.compactMap { t in
                let tally = acc.tally(day: d, task: t)
                guard tally.completed > 0 || tally.focusedSeconds > 0 else { return nil }
                return .object([
                    ("task", .string(tasks[t].name)), ("color", .string(tasks[t].color.rawValue)),
                    ("completed", .int(tally.completed)), ("focused_seconds", .int(tally.seconds)),
                ])
            }
            return .object([
                ("date", .string(date.description)), ("weekday", .string(CalendarDay.weekdayNames[d])),
                ("today", .bool(date == today)),
                ("planned", .string(planned?.name)), ("planned_color", .string(planned?.color.rawValue)),
                ("completed", .int(acc.days[d].completed)), ("focused_seconds", .int(acc.days[d].seconds)),
                ("tasks", .array(done)),
            ])
        }
        return .object([
            ("week", .string(monday.isoWeekName)), ("offset", .int(offset)),
            ("from", .string(monday.description)), ("to", .string(sunday.description)),
            ("completed", .int(acc.total.completed)), ("focused_seconds", .int(acc.total.seconds)),
            ("days", .array(days)),
        ])
    }

    /// `day`: `YYYY-MM-DD`, `today`, `tomorrow`, `yesterday`, or a weekday (`monday`, `mon`) of
    /// the week `offset` weeks from this one.
    private func planDay(_ text: String, offset: Int) throws(DiligenceError) -> CalendarDay {
        try day(text, field: "day", today: todayDate, weekOffset: offset)
    }
}

/// A tally's members in a report: `completed` and `focused_seconds`.
private func tally(_ t: Tally) -> [(String, JSON)] { [("completed", .int(t.completed)), ("focused_seconds", .int(t.seconds))] }
