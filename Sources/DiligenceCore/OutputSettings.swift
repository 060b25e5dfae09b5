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

    public init() {}
}

/// `[hooks]`: one command per event, run directly (never through a shell).
public struct HookSettings: Equatable, Sendable {
    /// The events a hook can be attached to: `on_<name>` in the file.
    public static let events = [
        "work_start", "work_end", "break_start", "break_end", "pause", "resume", "stop", "skip", "reminder", "away", "back",
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

// MARK: - Command lines

/// Splits a command line into argv the way a POSIX shell splits words, and does nothing else:
/// no variables, globs, pipes or `;`. `'…'` keeps everything literally, `"…"` honours `\"`,
/// `\\`, `\$` and `` \` ``, a backslash outside quotes escapes the next character.
public enum CommandLineWords {
    public static func split(_ text: String) throws(DiligenceError) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var iterator = text.makeIterator()
        while let c = iterator.next() {
            switch c {
            case " ", "\t":
                if inWord {
                    words.append(current)
                    current = ""
                    inWord = false
                }
            case "'":
                inWord = true
                var closed = false
                while let q = iterator.next() {
                    if q == "'" {
                        closed = true
                        break
                    }
                    current.append(q)
                }
                guard closed else { throw DiligenceError("invalid_config", "a single quote is not closed in \(text.debugDescription).") }
            case "\"":
                inWord = true
                var closed = false
                while let q = iterator.next() {
                    if q == "\"" {
                        closed = true
                        break
                    }
                    if q == "\\" {
                        guard let next = iterator.next() else { break }
                        if !["\"", "\\", "$", "`"].contains(next) { current.append("\\") }
                        current.append(next)
                    } else {
                        current.append(q)
                    }
                }
                guard closed else { throw DiligenceError("invalid_config", "a double quote is not closed in \(text.debugDescription).") }
            case "\\":
                inWord = true
                guard let next = iterator.next() else {
                    throw DiligenceError("invalid_config", "a command line cannot end with a backslash: \(text.debugDescription).")
                }
                current.append(next)
            default:
                inWord = true
                current.append(c)
            }
        }
        if inWord { words.append(current) }
        return words
    }
}

// MARK: - Parsing

extension DaemonConfig {
    /// One `key = value` of `[notifications]`, `[hooks]` or `[sound]`.
    mutating func parseOutputSetting(_ entry: Entry, place: String) throws(DiligenceError) {
        let value = entry.value
        func flag() throws(DiligenceError) -> Bool {
            guard let flag = Self.parseBool(value) else {
                throw DiligenceError("invalid_config", "\(place): \(entry.key) is true or false; got \(value.debugDescription).")
            }
            return flag
        }
        func command() throws(DiligenceError) -> [String] {
            let words: [String]
            do { words = try CommandLineWords.split(entry.rawValue) } catch {
                throw DiligenceError("invalid_config", "\(place): \(error.message)")
            }
            guard let first = words.first, !first.isEmpty else {
                throw DiligenceError(
                    "invalid_config", "\(place): \(entry.key) needs a command, such as notify-send Diligence; for a shell, write sh -c '…'."
                )
            }
            return words
        }
        switch (entry.section, entry.key) {
        case ("notifications", "enabled"):
            notifications.enabled = try flag()
        case ("notifications", "urgency"):
            guard let urgency = NotificationSettings.Urgency(rawValue: value) else {
                throw DiligenceError("invalid_config", "\(place): urgency is one of low, normal, critical; got \(value.debugDescription).")
            }
            notifications.urgency = urgency
        case ("notifications", "timeout"):
            switch value {
            case "default": notifications.timeoutMilliseconds = nil
            case "never": notifications.timeoutMilliseconds = 0
            default:
                guard let seconds = Self.parseSeconds(value), seconds > 0, seconds <= 3600 else {
                    throw DiligenceError(
                        "invalid_config",
                        "\(place): timeout is default, never, or a duration up to 1h such as 10s; got \(value.debugDescription).")
                }
                notifications.timeoutMilliseconds = seconds * 1000
            }
        case ("hooks", "timeout"):
            guard let seconds = Self.parseSeconds(value), seconds > 0, seconds <= 24 * 3600 else {
                throw DiligenceError(
                    "invalid_config",
                    "\(place): timeout is a number of seconds (or a duration such as 2m) between 1 s and 24 h; got \(value.debugDescription)."
                )
            }
            hooks.timeoutSeconds = seconds
        case ("hooks", let key) where key.hasPrefix("on_") && HookSettings.events.contains(String(key.dropFirst(3))):
            hooks.commands[String(key.dropFirst(3))] = try command()
        case ("sound", "player"):
            sound.player = value == "auto" ? nil : try command()
        case ("sound", "end_of_phase"):
            if value.hasPrefix("/") {
                sound.endOfPhase = true
                sound.endOfPhaseFile = value
            } else {
                guard let on = Self.parseBool(value) else {
                    throw DiligenceError(
                        "invalid_config",
                        "\(place): end_of_phase is on, off, or the absolute path of a sound file; got \(value.debugDescription).")
                }
                sound.endOfPhase = on
            }
        case ("sound", "ambient"):
            sound.ambient = try flag()
        case ("sound", "directory"):
            guard value.hasPrefix("/") || value.hasPrefix("~/") else {
                throw DiligenceError("invalid_config", "\(place): directory is an absolute path (or ~/…); got \(value.debugDescription).")
            }
            sound.directory = value
        default:
            throw Self.unknownSetting(entry, place: place)
        }
    }

    /// A bare number of seconds (`30`) or a duration with a unit (`90s`, `2m`).
    static func parseSeconds(_ text: String) -> Int? {
        if !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) { return Int(text) }
        return DurationText.parse(text)
    }
}
