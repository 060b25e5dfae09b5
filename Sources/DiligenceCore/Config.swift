/// The daemon's configuration file (`diligenced.conf`, docs/configuration.md): INI-style
/// `[section]` headers and `key = value` lines; `#` or `;` start a comment line.
/// Every error names the line and says what is allowed.
public struct DaemonConfig: Equatable, Sendable {
    /// What a suspend of the machine means for a running phase.
    public var suspend: SuspendPolicy = .pause
    /// Minutes after midnight when a statistics day begins (people who work past midnight set 04:00).
    public var dayStartsAt = 0
    /// Whether root may use the control socket of another user's daemon.
    public var allowRoot = false
    public var notifications = NotificationSettings()
    public var hooks = HookSettings()
    public var sound = SoundSettings()

    public init() {}

    /// One `key = value` line of the file.
    public struct Entry: Equatable, Sendable {
        public var section: String
        public var key: String
        public var value: String
        /// The value before surrounding double quotes were removed (command lines need them).
        public var rawValue: String
        public var line: Int
    }

    /// Splits the text into entries; syntax errors name their line.
    public static func entries(of text: String) throws(DiligenceError) -> [Entry] {
        var section = ""
        var result: [Entry] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(raw).trimmingWhitespace()
            let number = index + 1
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]"), line.count > 2 else {
                    throw DiligenceError("invalid_config", "line \(number): a section header looks like [timer].")
                }
                section = String(line.dropFirst().dropLast()).trimmingWhitespace()
                continue
            }
            guard let eq = line.firstIndex(of: "=") else {
                throw DiligenceError("invalid_config", "line \(number): expected `key = value`, got \(line.debugDescription).")
            }
            let key = String(line[..<eq]).trimmingWhitespace()
            let rawValue = String(line[line.index(after: eq)...]).trimmingWhitespace()
            var value = rawValue
            if value.count >= 2, value.first == "\"", value.last == "\"" { value = String(value.dropFirst().dropLast()) }
            guard !key.isEmpty else { throw DiligenceError("invalid_config", "line \(number): a key is missing before `=`.") }
            result.append(Entry(section: section, key: key, value: value, rawValue: rawValue, line: number))
        }
        return result
    }

    /// Parses the whole file; unknown sections or keys and bad values are errors.
    public static func parse(_ text: String) throws(DiligenceError) -> DaemonConfig {
        var config = DaemonConfig()
        for entry in try entries(of: text) {
            let place = "line \(entry.line) ([\(entry.section)] \(entry.key))"
            switch (entry.section, entry.key) {
            case ("timer", "suspend"):
                guard let policy = SuspendPolicy(rawValue: entry.value) else {
                    throw DiligenceError("invalid_config", "\(place): suspend is one of pause, continue, abandon; got \(entry.value.debugDescription).")
                }
                config.suspend = policy
            case ("stats", "day_starts_at"):
                guard let minute = TaskConfig.parseReminder(entry.value) else {
                    throw DiligenceError("invalid_config", "\(place): day_starts_at is a time HH:MM such as 04:00; got \(entry.value.debugDescription).")
                }
                config.dayStartsAt = minute
            case ("daemon", "allow_root"):
                guard let flag = parseBool(entry.value) else {
                    throw DiligenceError("invalid_config", "\(place): allow_root is true or false; got \(entry.value.debugDescription).")
                }
                config.allowRoot = flag
            case ("notifications", _), ("hooks", _), ("sound", _):
                try config.parseOutputSetting(entry, place: place)
            default:
                throw DiligenceError("invalid_config", "\(place): unknown setting. Known: [timer] suspend, [stats] day_starts_at, [daemon] allow_root, [notifications] enabled urgency timeout, [hooks] on_<event> timeout, [sound] player end_of_phase ambient directory.")
            }
        }
        return config
    }

    /// `true/false`, `yes/no`, `on/off`, `1/0`.
    public static func parseBool(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "yes", "on", "1": true
        case "false", "no", "off", "0": false
        default: nil
        }
    }
}
