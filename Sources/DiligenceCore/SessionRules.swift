import DiligenceTime

/// The rules every work session meets before it enters the store, whatever the door — the
/// timer, `history add`, an import, the replay of sessions spilled at an exit (docs/protocol.md,
/// "Sessions"). A statistic is only as good as the sessions it adds up: a doubled import, a
/// 25-minute session with a day of focus, a session in year 1 or 2099 would each corrupt one.
///
/// These are the rules that need nothing but the session; the store adds the ones that need
/// the others (`Store.admit`): no overlap with a recorded session or another of the same batch,
/// and a session already recorded (same task, same start) is skipped, not written twice.
public enum SessionRules {
    /// A session lasts at most a day, wall clock; so does a phase (`DurationText.maxSeconds`).
    public static let maxLength = Double(DurationText.maxSeconds)
    public static let maxPauses = 1000
    /// Time away during a session (`WorkSession.awaySeconds`): within the day a session lasts at most.
    public static let awayRange = 0...DurationText.maxSeconds
    /// Two sessions of one task whose starts are less than this apart are the same session.
    public static let sameStart = 1.0
    /// `[timer] min_session`: its default and its range (0 records every session).
    public static let defaultMinSession = 60
    public static let minSessionRange = 0...3600

    /// Why the timer does not record `s` under `[timer] min_session = minimum` (seconds), or
    /// nil when it does: work stopped or skipped (or abandoned at a suspend) after less focus
    /// than that is noise — `start Study; stop` — not a session. Completed phases are always
    /// recorded, however short the task's phases are, and so are failures (a `reason`: strict
    /// focus, leaving, a voiding interruption), which are what the person wants to see.
    public static func whyNotRecorded(_ s: WorkSession, minimum: Int) -> String? {
        guard s.outcome != .completed, s.reason == nil, s.focusedSeconds < minimum else { return nil }
        return
            "\(s.outcome.rawValue) after \(DurationText.format(s.focusedSeconds)) of focus, less than min_session (\(DurationText.format(minimum)))"
    }

    /// Why `session` may not be recorded, in words for a message ("it lasts 48h; ..."), or nil
    /// when it may. `window`: the wall-clock bounds of the date window now
    /// (`DateWindow.sessions(now:)`).
    public static func problem(with s: WorkSession, window: ClosedRange<Double>) -> String? {
        guard s.start.isFinite, s.end.isFinite else { return "its start or end is not a time" }
        if s.start < window.lowerBound || s.end < window.lowerBound {
            return "it lies before \(DateWindow.firstDay), the first day diligence keeps"
        }
        if s.end > window.upperBound || s.start > window.upperBound {
            return "it ends more than a day from now (\(RFC3339.format(s.end)))"
        }
        let length = s.end - s.start
        guard length > 0 else {
            return length == 0
                ? "it lasts no time (it starts and ends at \(RFC3339.format(s.start)))"
                : "it ends (\(RFC3339.format(s.end))) before it starts (\(RFC3339.format(s.start)))"
        }
        guard length <= maxLength else {
            return
                "it lasts \(DurationText.format(Int(saturating: length))); a session lasts at most \(DurationText.format(DurationText.maxSeconds))"
        }
        guard (1...DurationText.maxSeconds).contains(s.plannedSeconds) else {
            return "its planned time (\(s.plannedSeconds) s) is not 1 s to \(DurationText.format(DurationText.maxSeconds))"
        }
        // Focused time is whole seconds of the steady clock, the span wall-clock seconds: a
        // second apart is rounding, not a wrong record.
        guard s.focusedSeconds >= 0, Double(s.focusedSeconds) <= length.rounded(.up) + 1 else {
            return "its focused time (\(DurationText.format(max(0, s.focusedSeconds)))) is "
                + (s.focusedSeconds < 0
                    ? "negative" : "longer than the session (\(DurationText.format(Int(saturating: length.rounded(.up)))))")
        }
        guard (0...maxPauses).contains(s.pauses) else {
            return "its pauses (\(s.pauses)) are not 0 to \(maxPauses)"
        }
        guard awayRange.contains(s.awaySeconds) else {
            return "its time away (\(s.awaySeconds) s) is not 0 s to \(DurationText.format(awayRange.upperBound))"
        }
        guard s.interruptions.count <= Interruption.maxPerSession else {
            return "it holds \(s.interruptions.count) interruptions; a session holds at most \(Interruption.maxPerSession)"
        }
        // Marked on the phase's own clock, as its end: a second apart is rounding.
        if let stray = s.interruptions.first(where: { !($0.at >= s.start - 1 && $0.at <= s.end + 1) }) {
            return "an interruption (\(RFC3339.format(stray.at))) lies outside the session"
        }
        return nil
    }
}
