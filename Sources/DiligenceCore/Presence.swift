import DiligenceTime

/// Whether the person is at the computer, as the daemon last heard (docs/presence.md).
public enum Presence: String, CaseIterable, Sendable {
    case here, away
    /// No source has said anything yet: treated as here.
    case unknown
}

/// What leaving the computer (or a suspend, `[timer] suspend`) does to running work.
public enum AwayPolicy: String, CaseIterable, Sendable {
    /// The time away does not count: the phase resumes where it was.
    case pause
    /// The time away counts (after an absence the person may discard it).
    case `continue`
    /// The work is given up (recorded as abandoned).
    case abandon
}

/// The suspend setting takes the same choices as the presence one: a suspend is one way of
/// being away.
public typealias SuspendPolicy = AwayPolicy

/// Why a work session ended other than by its deadline or a command.
public enum EndReason: String, CaseIterable, Sendable {
    /// The person left during work (strict focus after the grace, or `on_away = abandon`).
    case left
    /// An external interruption voided the work (the task's `void_on_interrupt`).
    case interrupted
}

/// The `[presence]` settings (docs/configuration.md).
public struct PresenceSettings: Equatable, Sendable {
    /// Idle this long (seconds, after the desktop says idle) counts as away.
    public var idleAfter = 300
    /// What leaving does to work, unless the task says otherwise (`task edit --away`).
    public var onAway = AwayPolicy.pause
    /// Strict focus: seconds away during work before the session fails.
    public var strictGrace = 10

    public static let idleAfterRange = 0...3600
    public static let strictGraceRange = 0...600

    public init(idleAfter: Int = 300, onAway: AwayPolicy = .pause, strictGrace: Int = 10) {
        self.idleAfter = idleAfter
        self.onAway = onAway
        self.strictGrace = strictGrace
    }
}

/// Time away that was counted as work (`continue`): the person may still discard it, which
/// takes it out of the phase that is still open, or trims a session that ended meanwhile to
/// the moment they left.
public struct AwayOffer: Equatable, Sendable {
    /// Seconds of away time the work phase counted.
    public var countedSeconds: Double
    /// The clocks when the person left.
    public var left: Now
    /// Running time of the work phase when the person left.
    public var elapsedAtLeaving: Double
    /// Seconds away during the work phase before that absence.
    public var awayAtLeaving: Double
    /// The steady time the person came back; nil while away.
    public var back: Double? = nil
    /// The work session that ended while away (the offer then trims it), nil while open.
    public var endedSession: WorkSession? = nil
}

/// The machine's record of an absence, for status and the policies.
struct Absence: Equatable, Sendable {
    /// When the person left.
    var since: Now
    /// The running work phase was paused by leaving (it resumes on return).
    var pausedWork = false
    /// The work phase counts the time away (`continue`): an offer follows the return.
    var countsWork = false
    /// Running time of the work phase when the person left.
    var elapsedAtLeaving: Double = 0
    /// Seconds away during the work phase before this absence.
    var awayAtLeaving: Double = 0
    /// Strict focus: the steady time at which the work phase fails if still away.
    var strictDeadline: Double?
}
