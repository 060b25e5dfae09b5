/// `[focus]`: do-not-disturb while a work phase runs (docs/focus.md).
public struct FocusSettings: Equatable, Sendable {
    /// How the notification server is told to hold other programs' notifications back.
    public enum Backend: String, Sendable, CaseIterable {
        /// Chosen from the running server's GetServerInformation name.
        case auto
        case dunst, mako, swaync, gnome, plasma
        /// `on_enter` / `on_leave` only.
        case commands
    }

    /// `do_not_disturb`: off by default.
    public var doNotDisturb = false
    public var backend = Backend.auto
    /// Run at work start; `onLeave` is owed for every run of it, after a crash too.
    public var onEnter: [String]?
    public var onLeave: [String]?

    public init() {}

    /// Whether work of `task` is done under do not disturb: the task's own setting, else
    /// `do_not_disturb`.
    public func doNotDisturb(for task: TaskConfig?) -> Bool {
        task?.doNotDisturb ?? doNotDisturb
    }
}

extension DaemonConfig {
    /// One `key = value` of `[focus]`.
    mutating func parseFocusSetting(_ entry: Entry, place: String) throws(DiligenceError) {
        switch entry.key {
        case "do_not_disturb":
            focus.doNotDisturb = try Self.flag(entry, place: place)
        case "backend":
            guard let backend = FocusSettings.Backend(rawValue: entry.value) else {
                let names = FocusSettings.Backend.allCases.map(\.rawValue).joined(separator: ", ")
                throw DiligenceError(.invalidConfig, "\(place): backend is one of \(names); got \(entry.value.debugDescription).")
            }
            focus.backend = backend
        case "on_enter":
            focus.onEnter = try Self.command(entry, place: place)
        case "on_leave":
            focus.onLeave = try Self.command(entry, place: place)
        default:
            throw Self.unknownSetting(entry, place: place)
        }
    }

    /// The `[focus]` rules between lines: the commands come in pairs (a leave is owed for every
    /// enter), and `backend = commands` needs them.
    func focusProblem(at lines: [Entry]) -> (line: Int, error: DiligenceError)? {
        let focusLines = lines.filter { $0.section == "focus" }
        guard let line = focusLines.last?.line else { return nil }
        if (focus.onEnter == nil) != (focus.onLeave == nil) {
            let missing = focus.onEnter == nil ? "on_enter" : "on_leave"
            return (
                line,
                DiligenceError(.invalidConfig, "line \(line) ([focus]): on_enter and on_leave come together; \(missing) is missing.")
            )
        }
        if focus.backend == .commands, focus.onEnter == nil {
            return (
                line, DiligenceError(.invalidConfig, "line \(line) ([focus] backend): backend = commands needs on_enter and on_leave.")
            )
        }
        return nil
    }
}
