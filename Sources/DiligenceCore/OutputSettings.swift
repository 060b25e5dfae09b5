/// The daemon's outward effects, configured in `diligenced.conf` (docs/configuration.md):
/// desktop notifications, hook commands and sounds.

/// `[notifications]`: desktop notifications through org.freedesktop.Notifications.
public struct NotificationSettings: Equatable, Sendable {
    public enum Urgency: String, CaseIterable, Sendable {
        case low, normal, critical

        /// The byte the Notifications spec uses in the `urgency` hint.
        public var level: UInt8 {
            switch self {
            case .low: 0
            case .normal: 1
            case .critical: 2
            }
        }
    }

    /// Whether phase ends and reminders show a notification.
    public var enabled = true
    public var urgency: Urgency = .normal
    /// How long a notification stays, in milliseconds; nil lets the server decide (-1), 0 = until dismissed.
    public var timeoutMilliseconds: Int?
    /// The terminal fallback: a notification no desktop shows (notifications off, no session
    /// bus, no notification server) is sent to the watchers as a `bell` event, and
    /// `diligencectl watch` rings the terminal's bell on it.
    public var bell = false

    public init() {}
}

/// `[hooks]`: one command per event, run directly (never through a shell).
public struct HookSettings: Equatable, Sendable {
    /// The events a hook can be attached to: `on_<name>` in the file.
    public static let events = [
        "work_start", "work_end", "break_start", "break_end", "pause", "resume", "stop", "skip", "reminder", "away", "back",
        "interrupt",
        "session_recorded", "session_changed", "session_removed",
    ]

    /// Event name (without `on_`) → argv.
    public var commands: [String: [String]] = [:]
    /// Seconds a hook may run before it gets SIGTERM (and SIGKILL 2 s later).
    public var timeoutSeconds = 30

    public init() {}
}

/// `[sound]`: the end-of-phase sound and the task's ambient sound during work.
public struct SoundSettings: Equatable, Sendable {
    /// argv of the player, the sound file is appended; nil = the first of pw-play, paplay, aplay on the PATH.
    public var player: [String]?
    public var endOfPhase = true
    /// The end-of-phase sound file; nil = the freedesktop theme's `complete.oga`.
    public var endOfPhaseFile: String?
    public var ambient = true
    /// Where ambient sounds `<name>.oga|.ogg|.wav|.flac` live; nil = `$XDG_DATA_HOME/diligence/sounds`.
    public var directory: String?

    public init() {}
}
