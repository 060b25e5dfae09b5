import CLinux
import DiligenceCore
import DiligenceProtocol
import DiligenceStore
import DiligenceTime

// The statistics commands of the protocol (docs/protocol.md, docs/statistics.md): reports, the
// weekly plan, history corrections, export and import. Figures come from DiligenceCore's
// StatsAccumulator over the sessions SQLite selects by time range; days are local days.

extension Daemon {
    /// Serves the statistics, plan, history, export and import commands.
    func performStats(_ command: ControlCommand) throws(DiligenceError) -> JSON {
        switch command {
        case .stats(let period, let offset, let task, let date):
            return try statsReport(period: period, offset: offset, task: task, date: date)
        case .week(let offset): return try weekView(offset: offset)
        case .planSet(let dayText, let name, let offset):
            let day = try planDay(dayText, offset: offset)
            let task = try store.findTask(name)
            try store.setPlan(day: day, taskID: task.id)
            return .object([("day", .string(day.description)), ("task", .string(task.name))])
        case .planClear(let dayText, let offset):
            let day = try planDay(dayText, offset: offset)
            let cleared = try store.clearPlan(day: day)
            return .object([("day", .string(day.description)), ("cleared", .bool(cleared))])
        case .history(let task, let since, let until, let limit): return try history(task: task, since: since, until: until, limit: limit)
        case .historyAdd(let task, let start, let end, let pauses):
            return try addSession(task: task, start: start, end: end, pauses: pauses)
        case .historyRemove(let id):
            let removed = try store.removeSession(id: id)
            Log.info("Removed session \(removed.id) of \(removed.taskName).", fields: [("EVENT", "session_removed")])
            return .object([("removed", removed.json)])
        case .historyEdit(let id, let name):
            let task = try store.findTask(name)
            let changed = try store.changeSessionTask(id: id, taskID: task.id)
            return changed.json
        case .export(let format, let task, let since, let until): return try export(format: format, task: task, since: since, until: until)
        case .importChunk(let content, let importID, let more): return try importChunk(content: content, importID: importID, more: more)
        default:
            throw DiligenceError("unknown_command", "Not a statistics command: \(command).")
        }
    }

    /// The task to start from idle when none is named: today's planned one, if any.
    func plannedTaskToday() throws(DiligenceError) -> TaskConfig? {
        let today = todayDate
        guard let id = try store.plans(from: today, through: today)[today] else { return nil }
        return try store.task(id: id)
    }

    // MARK: Days

    /// The date of today's statistics day (`today(at:)`, the one "today" of every command).
    var todayDate: CalendarDay { today(at: clocks.now).date }

    /// The day of the first recorded session (of `taskID`), inside the date window: a session
    /// dated before 1990 (written by an older diligence) is not reported, and no report reaches
    /// back to it. Nil when nothing is recorded.
    func firstRecordedDay(taskID: Int64?) throws(DiligenceError) -> CalendarDay? {
        guard let start = try store.firstSessionStart(taskID: taskID) else { return nil }
        return min(max(LocalDay.date(containing: start, dayStartsAt: config.dayStartsAt), DateWindow.firstDay), todayDate)
    }

    /// `out_of_range` for a day outside the date window that `field` led to.
    func outsideWindow(_ field: String, _ what: String) -> DiligenceError {
        DiligenceError(
            "out_of_range",
            "\"\(field)\": \(what) is outside the dates diligence keeps, \(DateWindow.description(today: todayDate)) (from 1990 to a year ahead)."
        )
    }

    func grid(_ first: CalendarDay, _ last: CalendarDay) -> DayGrid {
        LocalDay.grid(from: first, through: last, dayStartsAt: config.dayStartsAt)
    }

    /// Runs every session of `tasks` touching `grid` through an accumulator.
    func accumulate(_ grid: DayGrid, tasks: [TaskConfig], only task: TaskConfig? = nil) throws(DiligenceError) -> StatsAccumulator {
        var acc = StatsAccumulator(grid: grid, taskIDs: tasks.map(\.id))
        guard grid.count > 0 else { return acc }
        try store.forEachSession(from: grid.start, to: grid.end, taskID: task?.id) { task, start, end, focused, pauses, completed in
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
    func goalDays(_ grid: DayGrid, tasks: [TaskConfig], only task: TaskConfig?) throws(DiligenceError) -> [Bool] {
        var counter = GoalDayCounter(grid: grid, taskIDs: tasks.map(\.id), goals: tasks.map(\.goal))
        guard grid.count > 0 else { return [] }
        try store.forEachCompletedSession(from: grid.start, to: grid.end, taskID: task?.id) { task, end in
            counter.addCompleted(taskID: task, end: end)
        }
        return counter.goalDays
    }

    /// The run of goal days ending today (or yesterday while today is not met yet), looking
    /// back in growing windows so a short streak reads only a few weeks of completed sessions.
    /// `known`: goal days the caller has already computed for the days up to today (a report
    /// whose period holds today); when the streak ends inside them, nothing more is read.
    func currentStreak(tasks: [TaskConfig], only task: TaskConfig?, known: [Bool] = []) throws(DiligenceError) -> Int {
        // A streak shorter than the days looked at (less today and yesterday) ended among them.
        if !known.isEmpty, case let current = Statistics.streaks(known).current, current < known.count - 1 {
            return current
        }
        let end = todayDate
        var window = max(32, known.count * 2)
        let first = try firstRecordedDay(taskID: task?.id)
        while true {
            var from = end.adding(days: 1 - window)
            let reachedFirst = first.map { from <= $0 } ?? true
            if let first, reachedFirst { from = min(from, first) }
            let met = try goalDays(grid(from, end), tasks: tasks, only: task)
            let current = Statistics.streaks(met).current
            if current < met.count - 1 || reachedFirst { return current }
            window *= 8
        }
    }

    // MARK: stats

    private func statsReport(period: StatsPeriod, offset: Int, task: String?, date: String?) throws(DiligenceError) -> JSON {
        let only = try task.map { name throws(DiligenceError) in try store.findTask(name) }
        let tasks = if let only { [only] } else { try store.tasks() }
        let now = todayDate
        var anchor = now
        if let date {
            guard period != .all else { throw DiligenceError("invalid_argument", "\"date\" does not apply to the period \"all\".") }
            guard let day = DateText.day(date, today: now) else {
                throw DiligenceError("invalid_date", "\"date\": \(date.debugDescription) is not a day: give \(DateText.dayForms).")
            }
            guard DateWindow.contains(day, today: now) else { throw outsideWindow("date", day.description) }
            anchor = day
        }
        let first: CalendarDay
        let last: CalendarDay
        if let kind = period.reportPeriod {
            guard let span = DateWindow.period(kind, offset: offset, anchor: anchor, today: now) else {
                throw outsideWindow("offset", "the \(period.rawValue) \(offset) from \(date == nil ? "this one" : "that of \(anchor)")")
            }
            (first, last) = span
        } else {
            guard offset == 0 else { throw DiligenceError("invalid_argument", "\"offset\" does not apply to the period \"all\".") }
            first = try firstRecordedDay(taskID: only?.id) ?? now
            last = now
        }
        let acc = try accumulate(grid(first, last), tasks: tasks, only: only)
        // Longest streak among the period's days up to today; the current one runs up to today.
        let elapsed = acc.grid.dates.prefix { $0 <= now }.count
        let periodGoalDays = Array(goalDays(acc, tasks: tasks).prefix(elapsed))
        var result = summary(acc, tasks: tasks, elapsedDays: elapsed)
        let holdsToday = first <= now && now <= last
        let current = try currentStreak(tasks: tasks, only: only, known: holdsToday ? periodGoalDays : [])
        // The current streak reaches into a period that holds today (it may have begun before
        // the period): the longest streak touching the period is never shorter than it.
        let withinPeriod = Statistics.streaks(periodGoalDays).longest
        let longest = holdsToday ? max(withinPeriod, current) : withinPeriod
        result =
            [
                ("period", .string(period.rawValue)), ("offset", .int(offset)), ("task", .string(only?.name)),
                ("from", .string(first.description)), ("to", .string(last.description)), ("today", .string(now.description)),
            ] + result + [("streak", .object([("current", .int(current)), ("longest", .int(longest))]))]
        result.append(("days", .array(try dayRows(acc, tasks: tasks))))
        result.append(("previous", period == .all ? .null : try previousTotals(period, offset: offset, anchor: anchor, only: only)))
        if period == .today || period == .day {
            let day = acc.grid
            let sessions = try store.history(taskID: only?.id, from: day.start - Store.longestSessionSpan, to: day.end)
                .filter { $0.end > day.start } // one ending at the day's start is the day before's
            result.append(("starts_at", .string(RFC3339.format(day.start))))
            result.append(("ends_at", .string(RFC3339.format(day.end))))
            result.append(("sessions", .array(sessions.map(\.json))))
            result.append(
                (
                    "goals",
                    .array(
                        tasks.indices.filter { tasks[$0].goal > 0 }.map { i in
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
    private func previousTotals(_ period: StatsPeriod, offset: Int, anchor: CalendarDay, only: TaskConfig?) throws(DiligenceError) -> JSON {
        guard let kind = period.reportPeriod,
            let (first, last) = DateWindow.period(kind, offset: offset - 1, anchor: anchor, today: todayDate)
        else { return .null }
        let days = grid(first, last)
        let totals = try store.totals(from: days.start, to: days.end, taskID: only?.id)
        return .object([
            ("from", .string(first.description)), ("to", .string(last.description)),
            ("completed", .int(totals.completed)), ("focused_seconds", .int(totals.seconds)),
        ])
    }

    /// One row per day of `acc`: its tally, and its plan with what was done of the planned task
    /// (a plan for a task other than the report's `--task` is left out).
    private func dayRows(_ acc: StatsAccumulator, tasks: [TaskConfig]) throws(DiligenceError) -> [JSON] {
        let grid = acc.grid
        let plans = grid.count == 0 ? [:] : try store.plans(from: grid.dates[0], through: grid.dates[grid.count - 1])
        let taskIndex = Dictionary(tasks.indices.map { (tasks[$0].id, $0) }, uniquingKeysWith: { a, _ in a })
        return grid.dates.indices.map { i in
            let date = grid.dates[i]
            let planned = plans[date].flatMap { taskIndex[$0] }
            var row: [(String, JSON)] = [
                ("date", .string(date.description)), ("weekday", .string(CalendarDay.weekdayNames[date.weekday - 1])),
                ("completed", .int(acc.days[i].completed)), ("focused_seconds", .int(acc.days[i].seconds)),
            ]
            if let planned {
                row += [("planned", .string(tasks[planned].name)), ("planned_completed", .int(acc.tally(day: i, task: planned).completed))]
            }
            return .object(row)
        }
    }

    /// The figures every report has (docs/statistics.md).
    private func summary(_ acc: StatsAccumulator, tasks: [TaskConfig], elapsedDays: Int) -> [(String, JSON)] {
        let total = acc.total
        let active = acc.activeDays
        let taskRows: [JSON] = tasks.indices.map { i in
            let goalDays = (0..<elapsedDays).count { Statistics.reachesGoal(acc.tally(day: $0, task: i).completed, goal: tasks[i].goal) }
            return .object(
                [("task", .string(tasks[i].name)), ("color", .string(tasks[i].color.rawValue)), ("goal", .int(tasks[i].goal))]
                    + tally(acc.tasks[i]) + [("goal_days", .int(goalDays))])
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

    private func weekView(offset: Int) throws(DiligenceError) -> JSON {
        let today = todayDate
        guard let (monday, sunday) = DateWindow.period(.week, offset: offset, today: today) else {
            throw outsideWindow("offset", "the week \(offset) from this one")
        }
        let tasks = try store.tasks()
        let acc = try accumulate(grid(monday, sunday), tasks: tasks)
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
        guard let day = DateText.day(text, today: todayDate, weekOffset: offset) else {
            throw DiligenceError("invalid_date", "\"day\": \(text.debugDescription) is not a day: give \(DateText.dayForms).")
        }
        guard DateWindow.contains(day, today: todayDate) else { throw outsideWindow("day", day.description) }
        return day
    }

    // MARK: history

    /// `since`/`until`: a day (its whole statistics day; `until` includes it) or a moment
    /// (`DateText.bound`).
    private func timeBound(_ text: String?, _ key: String, endOfDay: Bool) throws(DiligenceError) -> Double? {
        guard let text else { return nil }
        let today = today(at: clocks.now)
        let wall: Double
        do {
            wall = try DateText.bound(text, endOfDay: endOfDay, today: today, dayStartsAt: config.dayStartsAt)
        } catch {
            throw DiligenceError(error.code, "\"\(key)\": \(error.message)")
        }
        let day = DateText.day(text, today: today.date) ?? LocalDay.date(containing: wall, dayStartsAt: config.dayStartsAt)
        guard DateWindow.contains(day, today: today.date) else { throw outsideWindow(key, text) }
        return wall
    }

    private func history(task name: String?, since: String?, until: String?, limit: Int?) throws(DiligenceError) -> JSON {
        let task = try name.map { name throws(DiligenceError) in try store.findTask(name) }
        let sessions = try store.history(
            taskID: task?.id, from: try timeBound(since, "since", endOfDay: false),
            to: try timeBound(until, "until", endOfDay: true), limit: limit)
        return .object([("sessions", .array(sessions.map(\.json)))])
    }

    /// A moment (`DateText.moment`): `HH:MM` is the moment of today's statistics day that reads so.
    private func moment(_ text: String, _ key: String) throws(DiligenceError) -> Double {
        do {
            return try DateText.moment(text, today: today(at: clocks.now), dayStartsAt: config.dayStartsAt)
        } catch {
            throw DiligenceError(error.code, "\"\(key)\": \(error.message)")
        }
    }

    /// `history add`: a completed session whose focused and planned time is its length, through
    /// the one door (`Store.admit`) like every other session.
    private func addSession(task name: String, start startText: String, end endText: String, pauses: Int) throws(DiligenceError) -> JSON {
        let task = try store.findTask(name)
        let start = try moment(startText, "start")
        let end = try moment(endText, "end")
        // What a person enters by hand has happened: this request's own rule, stricter than the
        // session rules' window (which leaves a day for clocks that differ between machines).
        guard end <= clocks.now.wall + 60 else {
            throw DiligenceError(
                "invalid_session", "The session ends in the future (\(RFC3339.format(end))); enter sessions that have happened.")
        }
        let seconds = Int(saturating: (end - start).rounded())
        let session = WorkSession(
            taskID: task.id, taskName: task.name, start: start, end: end,
            plannedSeconds: seconds, focusedSeconds: seconds, pauses: pauses, outcome: .completed)
        let admission = try store.admit(
            [session], source: .manual, window: DateWindow.sessions(now: clocks.now.wall),
            reserved: runningWork(at: clocks.now), mode: .allOrNothing)
        if let refusal = admission.refused.first { throw refusal.error }
        guard let id = admission.recorded[0] else {
            let existing = admission.alreadyRecorded[0]
            throw DiligenceError("overlapping_session", "This session is recorded already\(existing.map { " (session \($0))" } ?? "").")
        }
        Log.info("Added a session of \(task.name) by hand.", fields: [("EVENT", "session_added"), ("TASK", task.name)])
        var added = session
        added.id = id
        return added.json
    }

    /// The span of the work phase that is running or paused: no session entered by hand or
    /// imported may overlap it (the timer records it when it ends).
    func runningWork(at now: Now) -> (start: Double, end: Double, task: String)? {
        let saved = machine.saved(at: now)
        guard machine.phase == .work, machine.state == .running || machine.state == .paused, let task = saved.task else { return nil }
        return (saved.phaseStartWall, max(now.wall, saved.phaseStartWall), task.name)
    }

    // MARK: export and import

    private func export(format: ExportFormat, task name: String?, since: String?, until: String?) throws(DiligenceError) -> JSON {
        let task = try name.map { name throws(DiligenceError) in try store.findTask(name) }
        let sessions = try store.sessions(
            taskID: task?.id, from: try timeBound(since, "since", endOfDay: false),
            to: try timeBound(until, "until", endOfDay: true))
        return .object([
            ("format", .string(format.rawValue)), ("count", .int(sessions.count)),
            ("content", .string(format.render(sessions, stamp: clocks.now.wall))),
        ])
    }

    /// One chunk of a JSON-lines import: the first chunk has no `import_id`; `more: true` says
    /// another chunk follows (answer: `import_id`, `received`); the last one passes every
    /// session of every chunk through the one door at once and writes them all in one
    /// transaction (answer: `imported`, `skipped`), or none: every line that could not be read
    /// or that the session rules refuse is named in one `invalid_import`.
    private func importChunk(content: String, importID: Int64?, more: Bool) throws(DiligenceError) -> JSON {
        let id: Int64
        if let given = importID {
            id = given
        } else {
            id = store.beginImport()
        }
        let firstLine = try store.importNextLine(id)
        do throws(DiligenceError) {
            // The last chunk again after its commit found the database locked: staged already.
            var stagedAlready = false
            if importID != nil && !more { stagedAlready = try store.importIsCommitting(id) }
            if !stagedAlready {
                let chunk = try parseImport(content, firstLine: firstLine)
                try store.stageImport(id, sessions: chunk.sessions, rejected: chunk.rejected, lines: chunk.lines)
                if more {
                    return .object([("import_id", .int(id)), ("received", .int(chunk.sessions.count))])
                }
            }
            let now = clocks.now
            let (imported, skipped) = try store.commitImport(id, window: DateWindow.sessions(now: now.wall), reserved: runningWork(at: now))
            Self.returnFreedMemory()
            Log.info("Imported \(imported) sessions (\(skipped) already recorded).", fields: [("EVENT", "imported")])
            return .object([("imported", .int(imported)), ("skipped", .int(skipped))])
        } catch {
            // A locked database is waited for (`serve` sends the chunk again): keep what is staged.
            if error.code != "database_locked" {
                store.discardImport()
                Self.returnFreedMemory()
            }
            throw error
        }
    }

    /// Gives the memory a large import staged back to the system: the daemon's one malloc arena
    /// keeps what is freed otherwise, and an import of 100 000 sessions would leave it some
    /// 30 MiB larger for good (docs/performance.md, memory).
    static func returnFreedMemory() {
        clinux_malloc_trim()
    }

    /// Reads JSON lines (what `export --format jsonl` writes), numbered from `firstLine`; blank
    /// lines are skipped. A line that is not a session object of an existing task, with RFC 3339
    /// times, whole numbers and an outcome, is returned with why; the session rules are the
    /// door's to apply, to every line of every chunk at once.
    private func parseImport(_ content: String, firstLine: Int) throws(DiligenceError)
        -> (sessions: [(line: Int, session: WorkSession)], rejected: [(line: Int, reason: String)], lines: Int)
    {
        let tasks = try store.tasks()
        var exact: [String: TaskConfig] = [:]
        var folded: [String: [TaskConfig]] = [:]
        for t in tasks {
            exact[t.name] = t
            folded[t.name.lowercased(), default: []].append(t)
        }
        var sessions: [(line: Int, session: WorkSession)] = []
        var rejected: [(line: Int, reason: String)] = []
        var number = firstLine - 1
        // One copy of the chunk into contiguous bytes, split by index: a String's UTF-8 view
        // is walked byte by byte, which showed up as a third of an import's time.
        let content = Array(content.utf8)
        var lines = content.split(separator: 0x0A, omittingEmptySubsequences: false)
        if content.last == 0x0A { lines.removeLast() }
        for line in lines {
            number += 1
            var bytes = line
            if bytes.last == 0x0D { bytes = bytes.dropLast() }
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            switch Self.importedSession(bytes, exact: exact, folded: folded) {
            case .success(let session): sessions.append((number, session))
            case .failure(let problem): rejected.append((number, problem.message))
            }
        }
        return (sessions, rejected, lines.count)
    }

    /// One line of an import as a session of an existing task, or why it is not one.
    private static func importedSession(
        _ bytes: ArraySlice<UInt8>, exact: [String: TaskConfig],
        folded: [String: [TaskConfig]]
    ) -> Result<WorkSession, DiligenceError> {
        let json: JSON
        do { json = try JSON.parse(bytes) } catch { return .failure(DiligenceError("invalid_import", "not JSON (\(error.message))")) }
        return WorkSession.exported(json).flatMap { session in
            let name = session.taskName
            guard let task = exact[name] ?? folded[name.lowercased()].flatMap({ $0.count == 1 ? $0[0] : nil }) else {
                return .failure(
                    DiligenceError(
                        "invalid_import",
                        "no task named \(name.debugDescription) (add it first: diligencectl task add \(name.debugDescription))"))
            }
            var found = session
            found.taskID = task.id
            found.taskName = task.name
            return .success(found)
        }
    }
}

/// A tally's members in a report: `completed` and `focused_seconds`.
private func tally(_ t: Tally) -> [(String, JSON)] { [("completed", .int(t.completed)), ("focused_seconds", .int(t.seconds))] }
