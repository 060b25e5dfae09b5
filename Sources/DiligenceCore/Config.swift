import DiligenceTime

/// The daemon's configuration file (`diligenced.conf`, docs/configuration.md): INI-style
/// `[section]` headers and `key = value` lines; `#` or `;` start a comment line.
/// Every error names the line and says what is allowed.
public struct DaemonConfig: Equatable, Sendable {
    /// What a suspend of the machine means for a running phase.
    public var suspend: SuspendPolicy = .pause
    /// Work stopped or skipped after less focus than this (seconds) is not recorded
    /// (`SessionRules.whyNotRecorded`).
    public var minSession = SessionRules.defaultMinSession
    /// Minutes after midnight when a statistics day begins (people who work past midnight set 04:00).
    public var dayStartsAt = 0
    /// What leaving the computer means (`[presence]`, docs/presence.md).
    public var presence = PresenceSettings()
    /// Whether root may use the control socket of another user's daemon.
    public var allowRoot = false
    public var notifications = NotificationSettings()
    public var hooks = HookSettings()
    public var sound = SoundSettings()
    public var focus = FocusSettings()
    /// `[timewarrior]`: the built-in Timewarrior mirror (docs/integrations.md).
    public var timewarrior = TimewarriorSettings()
    /// `[taskwarrior]`: work on Taskwarrior's tasks (docs/integrations.md).
    public var taskwarrior = TaskwarriorSettings()
    /// `[sync] directory` as written (absolute or `~/…`): the sync folder, which then overrides
    /// `sync enable` (docs/sync.md); nil: the database's setting decides.
    public var syncDirectory: String?
    /// `[sync] name` (`DeviceName`): this device's name, which then overrides `sync enable
    /// --name` and the host name (docs/sync.md, "Device names"); nil: those decide.
    public var deviceName: String?
    /// What a bad line does: `refuse` (default) stops the start; `defaults` keeps the default
    /// for that setting and reports the line in `problems`.
    public var onBadConfig: BadConfigPolicy = .refuse
    /// Lines ignored under `on_bad_config = defaults`, each with its line number and reason.
    public var problems: [String] = []

    public enum BadConfigPolicy: String, Sendable {
        case refuse, defaults
    }

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
        var errors: [(line: Int, error: DiligenceError)] = []
        let result = entries(of: text, errors: &errors)
        if let first = errors.first { throw first.error }
        return result
    }

    /// Splits the text into entries, collecting syntax errors (with their line) instead of
    /// stopping at the first.
    static func entries(of text: String, errors: inout [(line: Int, error: DiligenceError)]) -> [Entry] {
        var section = ""
        var result: [Entry] = []
        // A file from a Windows editor: a UTF-8 byte order mark first, "\r\n" line ends (one
        // Character in Swift, so a split on "\n" alone would not see them).
        let body = text.hasPrefix("\u{FEFF}") ? text.dropFirst() : Substring(text)
        for (index, raw) in body.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            let line = String(raw).trimmingWhitespace()
            let number = index + 1
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]"), line.count > 2 else {
                    errors.append((number, DiligenceError(.invalidConfig, "line \(number): a section header looks like [timer].")))
                    continue
                }
                section = String(line.dropFirst().dropLast()).trimmingWhitespace()
                continue
            }
            guard let eq = line.firstIndex(of: "=") else {
                errors.append(
                    (number, DiligenceError(.invalidConfig, "line \(number): expected `key = value`, got \(line.debugDescription).")))
                continue
            }
            let key = String(line[..<eq]).trimmingWhitespace()
            let rawValue = String(line[line.index(after: eq)...]).trimmingWhitespace()
            var value = rawValue
            if value.count >= 2, value.first == "\"", value.last == "\"" { value = String(value.dropFirst().dropLast()) }
            guard !key.isEmpty else {
                errors.append((number, DiligenceError(.invalidConfig, "line \(number): a key is missing before `=`.")))
                continue
            }
            result.append(Entry(section: section, key: key, value: value, rawValue: rawValue, line: number))
        }
        return result
    }

    /// Parses the whole file; unknown sections or keys and bad values are errors. Under
    /// `[daemon] on_bad_config = defaults` (wherever it stands in the file) the bad lines are
    /// only listed in `problems` and their settings keep their defaults.
    public static func parse(_ text: String) throws(DiligenceError) -> DaemonConfig {
        var config = DaemonConfig()
        var found: [(line: Int, error: DiligenceError)] = []
        let all = entries(of: text, errors: &found)
        // The policy first: it decides what every other bad line means.
        for entry in all where entry.section == "daemon" && entry.key == "on_bad_config" {
            guard let policy = BadConfigPolicy(rawValue: entry.value) else {
                throw DiligenceError(
                    .invalidConfig,
                    "line \(entry.line) ([daemon] on_bad_config): on_bad_config is refuse or defaults; got \(entry.value.debugDescription)."
                )
            }
            config.onBadConfig = policy
        }
        for entry in all where !(entry.section == "daemon" && entry.key == "on_bad_config") {
            do {
                try config.apply(entry)
            } catch {
                found.append((entry.line, error))
            }
        }
        if let problem = config.focusProblem(at: all) {
            found.append(problem)
            config.focus.onEnter = nil
            config.focus.onLeave = nil
            if config.focus.backend == .commands { config.focus.backend = .auto }
        }
        let errors = found.sorted { $0.line < $1.line }.map(\.error)
        guard let first = errors.first else { return config }
        if config.onBadConfig == .defaults {
            config.problems = errors.map { "\($0.message) Using the default." }
            return config
        }
        let more = errors.count > 1 ? " (and \(errors.count - 1) more bad line\(errors.count > 2 ? "s" : ""))" : ""
        throw DiligenceError(
            first.code,
            "\(first.message)\(more) Fix the line, or add `on_bad_config = defaults` under [daemon] to start with the defaults for bad settings."
        )
    }

    /// Applies one `key = value` line.
    mutating func apply(_ entry: Entry) throws(DiligenceError) {
        let place = "line \(entry.line) ([\(entry.section)] \(entry.key))"
        switch (entry.section, entry.key) {
        case ("timer", "suspend"):
            guard let policy = SuspendPolicy(rawValue: entry.value) else {
                throw DiligenceError(
                    .invalidConfig, "\(place): suspend is one of pause, continue, abandon; got \(entry.value.debugDescription).")
            }
            suspend = policy
        case ("timer", "min_session"):
            let range = SessionRules.minSessionRange
            guard let seconds = DurationText.parse(entry.value), range.contains(seconds) else {
                throw DiligenceError(
                    .invalidConfig,
                    "\(place): min_session is a duration from 0 (record every session) to \(DurationText.format(range.upperBound)), such as 60s or 2m; got \(entry.value.debugDescription)."
                )
            }
            minSession = seconds
        case ("presence", _):
            try parsePresence(entry, place: place)
        case ("stats", "day_starts_at"):
            guard let minute = TimeOfDay.parse(entry.value) else {
                throw DiligenceError(
                    .invalidConfig, "\(place): day_starts_at is a time HH:MM such as 04:00; got \(entry.value.debugDescription).")
            }
            dayStartsAt = minute
        case ("daemon", "allow_root"):
            allowRoot = try Self.flag(entry, place: place)
        case ("sync", "directory"):
            if let problem = SyncFolder.problem(with: entry.value) { throw DiligenceError(.invalidConfig, "\(place): \(problem).") }
            syncDirectory = entry.value
        case ("sync", "name"):
            do { deviceName = try DeviceName.normalize(entry.value) } catch {
                throw DiligenceError(.invalidConfig, "\(place): \(error.message)")
            }
        case ("notifications", _), ("hooks", _), ("sound", _):
            try parseOutputSetting(entry, place: place)
        case ("focus", _):
            try parseFocusSetting(entry, place: place)
        case ("timewarrior", _):
            try parseTimewarriorSetting(entry, place: place)
        case ("taskwarrior", _):
            try parseTaskwarrior(entry, place: place)
        default:
            throw Self.unknownSetting(entry, place: place)
        }
    }

    /// Every setting the file knows, by section.
    public static let knownSettings: [(section: String, keys: [String])] = [
        ("timer", ["suspend", "min_session"]), ("stats", ["day_starts_at"]),
        ("presence", ["idle_after", "on_away", "strict_grace"]), ("daemon", ["allow_root", "on_bad_config"]),
        ("notifications", ["enabled", "urgency", "timeout", "bell"]), ("hooks", HookSettings.events.map { "on_" + $0 } + ["timeout"]),
        ("sound", ["player", "end_of_phase", "ambient", "directory"]), ("sync", ["directory", "name"]),
        ("focus", ["do_not_disturb", "backend", "on_enter", "on_leave"]), ("timewarrior", ["enabled", "data", "tags"]),
        ("taskwarrior", ["enabled", "map", "default"]),
    ]

    /// The error for a key the file does not know: the closest known one ("did you mean"), in
    /// its section or, for a key written under the wrong section, in the right one.
    static func unknownSetting(_ entry: Entry, place: String) -> DiligenceError {
        let inSection = knownSettings.first { $0.section == entry.section }?.keys ?? []
        var hint = Suggestion.didYouMean(entry.key, inSection)
        if hint.isEmpty {
            // Compare keys without their section, suggest them with it.
            let keys = knownSettings.flatMap(\.keys)
            let match = keys.contains(entry.key) ? entry.key : Suggestion.closest(to: entry.key, in: keys).first
            if let match, let section = knownSettings.first(where: { $0.keys.contains(match) })?.section {
                hint = " Did you mean [\(section)] \(match)?"
            }
        }
        // The known keys (~600 characters) only when nothing is close: after a suggestion they bury it.
        let known = knownSettings.map { "[\($0.section)] " + $0.keys.joined(separator: " ") }.joined(separator: ", ")
        let rest = hint.isEmpty ? " Known: \(known)." : hint
        return DiligenceError(
            .invalidConfig, "\(place): unknown \(entry.section == "hooks" && entry.key.hasPrefix("on_") ? "hook" : "setting").\(rest)")
    }

    /// One `[presence]` line, each value checked against its range.
    mutating func parsePresence(_ entry: Entry, place: String) throws(DiligenceError) {
        func duration(_ range: ClosedRange<Int>, _ example: String) throws(DiligenceError) -> Int {
            guard let seconds = DurationText.parse(entry.value), range.contains(seconds) else {
                throw DiligenceError(
                    .invalidConfig,
                    "\(place): \(entry.key) is a duration from \(DurationText.format(range.lowerBound)) to \(DurationText.format(range.upperBound)), such as \(example); got \(entry.value.debugDescription)."
                )
            }
            return seconds
        }
        switch entry.key {
        case "idle_after":
            presence.idleAfter = try duration(PresenceSettings.idleAfterRange, "5m")
        case "strict_grace":
            presence.strictGrace = try duration(PresenceSettings.strictGraceRange, "10s")
        case "on_away":
            guard let policy = AwayPolicy(rawValue: entry.value) else {
                throw DiligenceError(
                    .invalidConfig, "\(place): on_away is one of pause, continue, abandon; got \(entry.value.debugDescription).")
            }
            presence.onAway = policy
        default:
            throw Self.unknownSetting(entry, place: place)
        }
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
