import DiligenceCore
import DiligenceJSON

// The JSON the daemon keeps for itself: the saved timer (a column of `timer_state`) and the
// sessions it could not write before exiting (the spill file). Every field round-trips exactly
// (a spilled session's start finds its row again), and the key names are those Swift's
// Codable gave earlier versions, so a timer saved by one still restores. Written with
// DiligenceJSON rather than Foundation's JSONEncoder, whose first use pages in about a
// megabyte of code and whose runtime type lookups sat on the phase-end path
// (docs/performance.md, memory).

extension TaskConfig {
    var storedJSON: JSON {
        var members: [(String, JSON)] = [
            ("id", .int(id)), ("name", .string(name)), ("description", .string(description)),
            ("color", .string(color.rawValue)), ("workSeconds", .int(workSeconds)),
            ("shortBreakSeconds", .int(shortBreakSeconds)), ("longBreakSeconds", .int(longBreakSeconds)),
            ("longBreakEvery", .int(longBreakEvery)), ("breaks", .bool(breaks)),
            ("autostart", .string(autostart.rawValue)), ("focusMode", .bool(focusMode)), ("goal", .int(goal)),
        ]
        if let reminderMinute { members.append(("reminderMinute", .int(reminderMinute))) }
        if let sound { members.append(("sound", .string(sound))) }
        if !uuid.isEmpty { members.append(("uuid", .string(uuid))) }
        if let awayPolicy { members.append(("awayPolicy", .string(awayPolicy.rawValue))) }
        if let doNotDisturb { members.append(("doNotDisturb", .bool(doNotDisturb))) }
        // Flow and overtime settings: a timer saved before them has none (a pomodoro).
        if mode != .pomodoro { members.append(("mode", .string(mode.rawValue))) }
        if breakRule != .standard { members.append(("breakRule", .string(breakRule.text))) }
        if minBreakSeconds != Self.defaultMinBreak { members.append(("minBreakSeconds", .int(minBreakSeconds))) }
        if maxBreakSeconds != Self.defaultMaxBreak { members.append(("maxBreakSeconds", .int(maxBreakSeconds))) }
        if let flowNudgeSeconds { members.append(("flowNudgeSeconds", .int(flowNudgeSeconds))) }
        if overtime { members.append(("overtime", .bool(true))) }
        if voidOnInterrupt { members.append(("voidOnInterrupt", .bool(true))) }
        return .object(members)
    }

    init?(storedJSON json: JSON) {
        guard let id = json["id"]?.intValue, let name = json["name"]?.stringValue,
            let description = json["description"]?.stringValue,
            let color = json["color"]?.stringValue.flatMap(TaskColor.init(rawValue:)),
            let work = json["workSeconds"]?.intValue, let shortBreak = json["shortBreakSeconds"]?.intValue,
            let longBreak = json["longBreakSeconds"]?.intValue, let every = json["longBreakEvery"]?.intValue,
            let breaks = json["breaks"]?.boolValue,
            let autostart = json["autostart"]?.stringValue.flatMap(Autostart.init(rawValue:)),
            let focusMode = json["focusMode"]?.boolValue, let goal = json["goal"]?.intValue
        else { return nil }
        self.init(
            id: id, name: name, description: description, color: color, workSeconds: Int(work),
            shortBreakSeconds: Int(shortBreak), longBreakSeconds: Int(longBreak), longBreakEvery: Int(every),
            breaks: breaks, autostart: autostart, focusMode: focusMode, goal: Int(goal),
            reminderMinute: json["reminderMinute"]?.intValue.map(Int.init), sound: json["sound"]?.stringValue,
            uuid: json["uuid"]?.stringValue ?? "", awayPolicy: json["awayPolicy"]?.stringValue.flatMap(AwayPolicy.init(rawValue:)),
            doNotDisturb: json["doNotDisturb"]?.boolValue,
            mode: json["mode"]?.stringValue.flatMap(TaskMode.init(rawValue:)) ?? .pomodoro,
            breakRule: json["breakRule"]?.stringValue.flatMap(FlowBreakRule.parse) ?? .standard,
            minBreakSeconds: json["minBreakSeconds"]?.intValue.map(Int.init) ?? Self.defaultMinBreak,
            maxBreakSeconds: json["maxBreakSeconds"]?.intValue.map(Int.init) ?? Self.defaultMaxBreak,
            flowNudgeSeconds: json["flowNudgeSeconds"]?.intValue.map(Int.init), overtime: json["overtime"]?.boolValue ?? false,
            voidOnInterrupt: json["voidOnInterrupt"]?.boolValue ?? false)
    }
}

extension WorkSession {
    public var storedJSON: JSON {
        .object([
            ("id", .int(id)), ("taskID", .int(taskID)), ("taskName", .string(taskName)),
            ("start", .double(start)), ("end", .double(end)), ("plannedSeconds", .int(plannedSeconds)),
            ("focusedSeconds", .int(focusedSeconds)), ("pauses", .int(pauses)), ("outcome", .string(outcome.rawValue)),
            ("uuid", .string(uuid)), ("note", .string(note)), ("awaySeconds", .int(awaySeconds)),
            ("reason", .string(reason?.rawValue)), ("interruptions", .array(interruptions.map { $0.json(wire: false) })),
            ("segments", FocusSegment.pairs(segments)),
        ])
    }

    public init?(storedJSON json: JSON) {
        guard let id = json["id"]?.intValue, let taskID = json["taskID"]?.intValue,
            let taskName = json["taskName"]?.stringValue,
            let start = json["start"]?.doubleValue, let end = json["end"]?.doubleValue,
            let planned = json["plannedSeconds"]?.intValue, let focused = json["focusedSeconds"]?.intValue,
            let pauses = json["pauses"]?.intValue,
            let outcome = json["outcome"]?.stringValue.flatMap(Outcome.init(rawValue:))
        else { return nil }
        self.init(
            id: id, taskID: taskID, taskName: taskName, start: start, end: end, plannedSeconds: Int(planned),
            focusedSeconds: Int(focused), pauses: Int(pauses), outcome: outcome, uuid: json["uuid"]?.stringValue ?? "",
            note: json["note"]?.stringValue, awaySeconds: Int(json["awaySeconds"]?.intValue ?? 0),
            reason: json["reason"]?.stringValue.flatMap(EndReason.init(rawValue:)),
            interruptions: (try? Interruption.list(json["interruptions"], wire: false).get()) ?? [],
            segments: FocusSegment.list(pairs: json["segments"]))
    }
}

extension SavedTimer {
    var storedJSON: JSON {
        var members: [(String, JSON)] = [("state", .string(state.rawValue))]
        if let phase { members.append(("phase", .string(phase.rawValue))) }
        if let task { members.append(("task", task.storedJSON)) }
        members += [
            ("round", .int(round)), ("duration", .double(duration)), ("elapsed", .double(elapsed)),
            ("pauses", .int(pauses)), ("phaseStartWall", .double(phaseStartWall)), ("phaseAge", .double(phaseAge)),
        ]
        if roundSkipped { members.append(("roundSkipped", .bool(true))) }
        if let note { members.append(("note", .string(note))) }
        if let countsUp = run?.countsUp { members.append(("countsUp", .string(countsUp.rawValue))) }
        if run?.nudged == true { members.append(("nudged", .bool(true))) }
        if !interruptions.isEmpty { members.append(("interruptions", .array(interruptions.map { $0.json(wire: false) }))) }
        if !focus.isEmpty {
            members.append(("focus", .array(focus.map { .array([.double($0.from), .double($0.to)]) })))
        }
        if let since = focusSince { members.append(("focusSince", .double(since))) }
        members += presenceJSON
        return .object(members)
    }

    /// Presence, when it is anything but unknown (older timers have none).
    private var presenceJSON: [(String, JSON)] {
        guard presence != .unknown else { return [] }
        var members: [(String, JSON)] = [("presence", .string(presence.rawValue)), ("awayBefore", .double(awayBefore))]
        if workWaitsForBack { members.append(("workWaitsForBack", .bool(true))) }
        if let a = absence {
            var fields: [(String, JSON)] = [
                ("age", .double(a.age)), ("sinceWall", .double(a.sinceWall)), ("pausedWork", .bool(a.pausedWork)),
                ("countsWork", .bool(a.countsWork)), ("elapsedAtLeaving", .double(a.elapsedAtLeaving)),
                ("awayAtLeaving", .double(a.awayAtLeaving)),
            ]
            if let strictIn = a.strictIn { fields.append(("strictIn", .double(strictIn))) }
            members.append(("absence", .object(fields)))
        }
        return members
    }

    private static func absence(_ json: JSON?) -> SavedAbsence? {
        guard let json, let age = json["age"]?.doubleValue, let sinceWall = json["sinceWall"]?.doubleValue else { return nil }
        return SavedAbsence(
            age: age, sinceWall: sinceWall, pausedWork: json["pausedWork"]?.boolValue ?? false,
            countsWork: json["countsWork"]?.boolValue ?? false, elapsedAtLeaving: json["elapsedAtLeaving"]?.doubleValue ?? 0,
            awayAtLeaving: json["awayAtLeaving"]?.doubleValue ?? 0, strictIn: json["strictIn"]?.doubleValue)
    }

    /// `savedWall`: the wall clock at the save, for a timer saved before `phaseAge` was kept
    /// (its age is then read off the wall clock, as it was).
    init?(storedJSON json: JSON, savedWall: Double) {
        guard let state = json["state"]?.stringValue.flatMap(TimerState.init(rawValue:)),
            let round = json["round"]?.intValue, let duration = json["duration"]?.doubleValue,
            let elapsed = json["elapsed"]?.doubleValue, let pauses = json["pauses"]?.intValue,
            let phaseStartWall = json["phaseStartWall"]?.doubleValue
        else { return nil }
        var phase: Phase?
        if let value = json["phase"], !value.isNull {
            guard let parsed = value.stringValue.flatMap(Phase.init(rawValue:)) else { return nil }
            phase = parsed
        }
        var task: TaskConfig?
        if let value = json["task"], !value.isNull {
            guard let parsed = TaskConfig(storedJSON: value) else { return nil }
            task = parsed
        }
        self.init(
            state: state, phase: phase, task: task, round: Int(round), duration: duration, elapsed: elapsed,
            pauses: Int(pauses), phaseStartWall: phaseStartWall,
            phaseAge: json["phaseAge"]?.doubleValue ?? max(0, savedWall - phaseStartWall),
            roundSkipped: json["roundSkipped"]?.boolValue ?? false, note: json["note"]?.stringValue,
            presence: json["presence"]?.stringValue.flatMap(Presence.init(rawValue:)) ?? .unknown,
            absence: Self.absence(json["absence"]), awayBefore: json["awayBefore"]?.doubleValue ?? 0,
            workWaitsForBack: json["workWaitsForBack"]?.boolValue ?? false)
        if let value = json["countsUp"] {
            guard let countsUp = value.stringValue.flatMap(TimerRun.CountUp.init(rawValue:)) else { return nil }
            run?.countsUp = countsUp
        }
        run?.nudged = json["nudged"]?.boolValue ?? false
        guard case .success(let marked) = Interruption.list(json["interruptions"], wire: false) else { return nil }
        run?.interruptions = marked
        // A timer saved before segments were kept has none: its session is one segment.
        focus = (json["focus"]?.arrayValue ?? []).compactMap { pair in
            guard let ends = pair.arrayValue, ends.count == 2, let from = ends[0].doubleValue, let to = ends[1].doubleValue else {
                return nil
            }
            return FocusSpan(from: from, to: to)
        }
        focusSince = json["focusSince"]?.doubleValue
    }
}
