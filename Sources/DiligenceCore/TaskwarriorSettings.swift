/// `[taskwarrior]` (docs/integrations.md): which diligence task a Taskwarrior task's project
/// starts, and whether work phases that follow a Taskwarrior task run `task start`, `task stop`
/// and `task annotate`.
public struct TaskwarriorSettings: Equatable, Sendable {
    /// `enabled`: whether the daemon runs `task` for work that follows a Taskwarrior task.
    public var enabled = true
    /// `map = Project:Task, ...`, in the order written; several `map` lines add up.
    public var map: [(project: String, task: String)] = []
    /// `default`: the task for a project the map does not name (and for no project).
    public var defaultTask: String?

    public init() {}

    public static func == (a: Self, b: Self) -> Bool {
        a.enabled == b.enabled && a.defaultTask == b.defaultTask
            && a.map.map { [$0.project, $0.task] } == b.map.map { [$0.project, $0.task] }
    }

    /// The task for `project`: its own entry, else its nearest parent's (Taskwarrior's projects
    /// nest with dots: `Home` maps `Home.garden`), else `default`; nil when none applies.
    public func task(forProject project: String?) -> String? {
        var name = project ?? ""
        while !name.isEmpty {
            if let entry = map.first(where: { $0.project == name }) { return entry.task }
            guard let dot = name.lastIndex(of: ".") else { break }
            name = String(name[..<dot])
        }
        return defaultTask
    }

    /// `Project:Task, Other:Task` into entries; nil when an entry lacks its colon or a side.
    static func parseMap(_ text: String) -> [(project: String, task: String)]? {
        var entries: [(project: String, task: String)] = []
        for item in text.split(separator: ",") {
            guard let colon = item.firstIndex(of: ":") else { return nil }
            let project = String(item[..<colon]).trimmingWhitespace()
            let task = String(item[item.index(after: colon)...]).trimmingWhitespace()
            guard !project.isEmpty, !task.isEmpty else { return nil }
            entries.append((project, task))
        }
        return entries.isEmpty ? nil : entries
    }
}

extension DaemonConfig {
    /// One `[taskwarrior]` line.
    mutating func parseTaskwarrior(_ entry: Entry, place: String) throws(DiligenceError) {
        switch entry.key {
        case "enabled":
            taskwarrior.enabled = try Self.flag(entry, place: place)
        case "map":
            guard let entries = TaskwarriorSettings.parseMap(entry.value) else {
                throw DiligenceError(
                    .invalidConfig,
                    "\(place): map is a list of project:task pairs such as `Home:Chores, Work.report:Writing`; got \(entry.value.debugDescription)."
                )
            }
            taskwarrior.map += entries
        case "default":
            guard !entry.value.isEmpty else {
                throw DiligenceError(.invalidConfig, "\(place): default names a diligence task, such as Chores.")
            }
            taskwarrior.defaultTask = entry.value
        default:
            throw Self.unknownSetting(entry, place: place)
        }
    }
}
