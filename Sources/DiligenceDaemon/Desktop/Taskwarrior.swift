import DiligenceCore
import DiligenceProtocol

// Work that follows a Taskwarrior task (docs/integrations.md): `start` names it by UUID and
// project (diligencectl read it from the person's Taskwarrior), and [taskwarrior] map picks the
// diligence task from the project.

extension Daemon {
    /// The diligence task `start` names: `name`, else the one `link`'s project maps to, else nil
    /// (the usual default). A link whose project maps to nothing is refused, never ignored.
    func taskwarriorTaskName(_ name: String?, link: TaskwarriorLink?) throws(DiligenceError) -> String? {
        guard let link else { return name }
        guard !link.uuid.isEmpty else {
            throw DiligenceError(.missingArgument, "\"taskwarrior_project\" needs \"taskwarrior\", the Taskwarrior task's UUID.")
        }
        guard UUIDText.parse(link.uuid) != nil else {
            throw DiligenceError(.invalidValue, "\"taskwarrior\" is a Taskwarrior task's UUID; got \(link.uuid.debugDescription).")
        }
        if let name { return name }
        if let mapped = config.taskwarrior.task(forProject: link.project) { return mapped }
        let project = link.project ?? ""
        let line = project.isEmpty ? "default = TASK" : "map = \(project):TASK (or default = TASK)"
        let what =
            project.isEmpty
            ? "The Taskwarrior task has no project" : "The Taskwarrior project \(project.debugDescription) maps to no diligence task"
        throw DiligenceError(
            .unknownTask,
            "\(what): add `\(line)` under [taskwarrior] in \(paths.config) and run `diligencectl reload`, or name the task: diligencectl start TASK --taskwarrior ID."
        )
    }

    /// `store.findTask` for a name the map gave, saying where the name came from when it fails.
    func findMappedTask(_ name: String, link: TaskwarriorLink?, given: String?) throws(DiligenceError) -> TaskConfig {
        do {
            return try store.findTask(name, scope: .active)
        } catch {
            guard let link, given == nil else { throw error }
            let project = (link.project ?? "").debugDescription
            throw DiligenceError(error.code, "\(error.message) ([taskwarrior] maps the project \(project) to \(name.debugDescription).)")
        }
    }
}
