/// The `[notifications]`, `[hooks]` and `[sound]` sections of `diligenced.conf`.
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
        case ("notifications", "bell"):
            notifications.bell = try flag()
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
