/// The `[notifications]`, `[hooks]` and `[sound]` sections of `diligenced.conf`.
extension DaemonConfig {
    /// One `key = value` of `[notifications]`, `[hooks]` or `[sound]`.
    mutating func parseOutputSetting(_ entry: Entry, place: String) throws(DiligenceError) {
        switch entry.section {
        case "notifications": try parseNotificationSetting(entry, place: place)
        case "hooks": try parseHookSetting(entry, place: place)
        case "sound": try parseSoundSetting(entry, place: place)
        default: throw Self.unknownSetting(entry, place: place)
        }
    }

    private mutating func parseNotificationSetting(_ entry: Entry, place: String) throws(DiligenceError) {
        let value = entry.value
        switch entry.key {
        case "enabled":
            notifications.enabled = try Self.flag(entry, place: place)
        case "bell":
            notifications.bell = try Self.flag(entry, place: place)
        case "urgency":
            guard let urgency = NotificationSettings.Urgency(rawValue: value) else {
                throw DiligenceError(.invalidConfig, "\(place): urgency is one of low, normal, critical; got \(value.debugDescription).")
            }
            notifications.urgency = urgency
        case "timeout":
            switch value {
            case "default": notifications.timeoutMilliseconds = nil
            case "never": notifications.timeoutMilliseconds = 0
            default:
                let seconds = try Self.seconds(entry, place: place, in: 1...3600, "default, never, or a duration up to 1h such as 10s")
                notifications.timeoutMilliseconds = seconds * 1000
            }
        default:
            throw Self.unknownSetting(entry, place: place)
        }
    }

    private mutating func parseHookSetting(_ entry: Entry, place: String) throws(DiligenceError) {
        switch entry.key {
        case "timeout":
            hooks.timeoutSeconds = try Self.seconds(
                entry, place: place, in: 1...(24 * 3600), "a number of seconds (or a duration such as 2m) between 1 s and 24 h")
        case let key where key.hasPrefix("on_") && HookSettings.events.contains(String(key.dropFirst(3))):
            hooks.commands[String(key.dropFirst(3))] = try Self.command(entry, place: place)
        default:
            throw Self.unknownSetting(entry, place: place)
        }
    }

    private mutating func parseSoundSetting(_ entry: Entry, place: String) throws(DiligenceError) {
        let value = entry.value
        switch entry.key {
        case "player":
            sound.player = value == "auto" ? nil : try Self.command(entry, place: place)
        case "end_of_phase":
            if value.hasPrefix("/") {
                sound.endOfPhase = true
                sound.endOfPhaseFile = value
            } else {
                guard let on = Self.parseBool(value) else {
                    throw DiligenceError(
                        .invalidConfig,
                        "\(place): end_of_phase is on, off, or the absolute path of a sound file; got \(value.debugDescription).")
                }
                sound.endOfPhase = on
            }
        case "ambient":
            sound.ambient = try Self.flag(entry, place: place)
        case "directory":
            guard value.hasPrefix("/") || value.hasPrefix("~/") else {
                throw DiligenceError(.invalidConfig, "\(place): directory is an absolute path (or ~/…); got \(value.debugDescription).")
            }
            sound.directory = value
        default:
            throw Self.unknownSetting(entry, place: place)
        }
    }

    /// An on/off setting's value.
    static func flag(_ entry: Entry, place: String) throws(DiligenceError) -> Bool {
        guard let flag = parseBool(entry.value) else {
            throw DiligenceError(.invalidConfig, "\(place): \(entry.key) is true or false; got \(entry.value.debugDescription).")
        }
        return flag
    }

    /// A command line's words (run directly, never through a shell).
    static func command(_ entry: Entry, place: String) throws(DiligenceError) -> [String] {
        let words: [String]
        do { words = try CommandLineWords.split(entry.rawValue) } catch {
            throw DiligenceError(.invalidConfig, "\(place): \(error.message)")
        }
        guard let first = words.first, !first.isEmpty else {
            throw DiligenceError(
                .invalidConfig, "\(place): \(entry.key) needs a command, such as notify-send Diligence; for a shell, write sh -c '…'.")
        }
        return words
    }

    /// A duration setting of `range` seconds; `allowed` says what may be written.
    private static func seconds(_ entry: Entry, place: String, in range: ClosedRange<Int>, _ allowed: String) throws(DiligenceError) -> Int
    {
        guard let seconds = parseSeconds(entry.value), range.contains(seconds) else {
            throw DiligenceError(.invalidConfig, "\(place): \(entry.key) is \(allowed); got \(entry.value.debugDescription).")
        }
        return seconds
    }

    /// A bare number of seconds (`30`) or a duration with a unit (`90s`, `2m`).
    static func parseSeconds(_ text: String) -> Int? {
        if !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) { return Int(text) }
        return DurationText.parse(text)
    }
}
