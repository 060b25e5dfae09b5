import CSystemd
import DiligenceCore
import DiligenceJSON

#if canImport(Glibc)
    import Glibc
#endif

/// One line of `doctor`: whether a part that reaches outside the daemon works, and what to
/// install or change when it does not. On a minimal system these fail with nothing said.
struct DoctorCheck {
    enum State: String { case ok, off, problem }

    var name: String
    var state: State
    var detail: String
    var fix: String?

    var json: JSON {
        .object(
            [("name", .string(name)), ("state", .string(state.rawValue)), ("detail", .string(detail))]
                + (fix.map { [("fix", .string($0))] } ?? []))
    }
}

extension Daemon {
    /// The `doctor` answer: each part as this daemon sees it (its environment, config and PATH).
    func doctorReport() -> JSON {
        let checks = [
            notificationCheck(), soundCheck(), presenceCheck(), syncCheck(), hooksCheck(), databaseCheck(), focusCheck(),
            timewarriorCheck(), configCheck(),
        ]
        return .object([("checks", .array(checks.map(\.json)))])
    }

    /// The config file's problems in full: where a person looks for them (`status` points here).
    private func configCheck() -> DoctorCheck {
        guard problems.config.isEmpty else {
            return DoctorCheck(
                name: "config", state: .problem, detail: problems.config.joined(separator: " "),
                fix: "fix \(paths.config) and run 'diligencectl reload'")
        }
        let file = (try? Files.read(paths.config, followingLinks: true)) != nil
        return DoctorCheck(name: "config", state: .ok, detail: file ? paths.config : "no file at \(paths.config): the default settings")
    }

    /// The database's -wal in place: one removed under the daemon is said even before a write notices it.
    private func databaseCheck() -> DoctorCheck {
        if let problem = problems.database ?? (store.logIsLost ? "its write-ahead log \(paths.database)-wal was removed or replaced" : nil)
        {
            return DoctorCheck(
                name: "database", state: .problem, detail: problem,
                fix:
                    "restart the daemon (systemctl --user restart diligenced); keep the database's -wal and -shm files in place while it runs"
            )
        }
        return DoctorCheck(name: "database", state: .ok, detail: "\(paths.database), its write-ahead log in place")
    }

    /// Which backend the focus guard would use now (docs/focus.md), and for which tasks when
    /// the config leaves it off but a task's own `dnd` turns it on.
    private func focusCheck() -> DoctorCheck {
        let focus = config.focus
        guard focus.doNotDisturb else {
            let own = ((try? store.tasks()) ?? []).filter { !$0.archived && $0.doNotDisturb == true }.map(\.name)
            guard !own.isEmpty else {
                return DoctorCheck(name: "focus", state: .off, detail: "off in the config ([focus] do_not_disturb)")
            }
            var check = focusBackendCheck(focus)
            let names = own.prefix(5).joined(separator: ", ") + (own.count > 5 ? " and \(own.count - 5) more" : "")
            check.detail = "on for the task(s) \(names) (task dnd on; off in the config otherwise): " + check.detail
            return check
        }
        return focusBackendCheck(focus)
    }

    private func focusBackendCheck(_ focus: FocusSettings) -> DoctorCheck {
        if focus.backend != .auto {
            return DoctorCheck(name: "focus", state: .ok, detail: "backend \(focus.backend.rawValue), set in the config")
        }
        let commands = focus.onEnter != nil
        switch Notifier.serverInformation() {
        case .success(let server):
            let name = String(server.prefix { $0 != " " })
            if let backend = focusBackend(forServer: name) {
                return DoctorCheck(name: "focus", state: .ok, detail: "backend \(backend.rawValue), for the running server \(server)")
            }
            if commands {
                return DoctorCheck(name: "focus", state: .ok, detail: "backend commands (on_enter, on_leave); \(server) has none")
            }
            return DoctorCheck(
                name: "focus", state: .problem, detail: "no do-not-disturb interface is known for \(server)",
                fix: "set [focus] on_enter and on_leave to commands that turn it on and off")
        case .failure:
            if commands { return DoctorCheck(name: "focus", state: .ok, detail: "backend commands (on_enter, on_leave)") }
            return DoctorCheck(
                name: "focus", state: .problem, detail: "no notification server answers on the session bus",
                fix: "start a notification server, or set [focus] backend")
        }
    }

    private func notificationCheck() -> DoctorCheck {
        guard config.notifications.enabled else {
            return DoctorCheck(name: "notifications", state: .off, detail: "off in the config ([notifications] enabled)")
        }
        switch Notifier.serverInformation() {
        case .success(let server):
            return DoctorCheck(name: "notifications", state: .ok, detail: "\(server) answers on the session bus")
        case .failure(.noBus(let reason)):
            return DoctorCheck(
                name: "notifications", state: .problem, detail: reason,
                fix: "install dbus-user-session and log in again, so that the session has a bus at $XDG_RUNTIME_DIR/bus")
        case .failure(.noServer(let reason)):
            return DoctorCheck(
                name: "notifications", state: .problem, detail: "no notification server answers on the session bus (\(reason))",
                fix: "install and start a notification server: dunst, mako-notifier or xfce4-notifyd (GNOME and Plasma have their own)")
        }
    }

    private func soundCheck() -> DoctorCheck {
        let settings = config.sound
        guard settings.endOfPhase || settings.ambient else {
            return DoctorCheck(name: "sound", state: .off, detail: "off in the config ([sound] end_of_phase and ambient)")
        }
        guard let player = desktop.sound.player(settings) else {
            return DoctorCheck(
                name: "sound", state: .problem,
                detail: "no sound player: none of \(Sound.candidates.joined(separator: ", ")) is on the PATH",
                fix: "install pipewire-bin (pw-play), pulseaudio-utils (paplay) or alsa-utils (aplay), or set [sound] player")
        }
        let command = player.joined(separator: " ")
        guard settings.endOfPhase else { return DoctorCheck(name: "sound", state: .ok, detail: "ambient sounds play with \(command)") }
        if let file = settings.endOfPhaseFile {
            guard Sys.isReadable(file) else {
                return DoctorCheck(
                    name: "sound", state: .problem, detail: "the end-of-phase sound \(file) cannot be read",
                    fix: "set [sound] end_of_phase to a sound file that exists")
            }
            return DoctorCheck(name: "sound", state: .ok, detail: "\(command) \(file) at each phase end")
        }
        guard let theme = Sound.themeFiles.first(where: Sys.isReadable) else {
            return DoctorCheck(
                name: "sound", state: .problem, detail: "no end-of-phase sound: \(Sound.themeFiles[0]) is missing",
                fix: "install sound-theme-freedesktop, or set [sound] end_of_phase to a sound file")
        }
        return DoctorCheck(name: "sound", state: .ok, detail: "\(command) \(theme) at each phase end")
    }

    private func presenceCheck() -> DoctorCheck {
        var sources: [String] = []
        if let session = desktop.logind.sessionPath { sources.append("logind's lock and idle hints of \(session)") }
        if desktop.screenSaver.following { sources.append("the screen saver on the session bus") }
        guard !sources.isEmpty else {
            return DoctorCheck(
                name: "presence", state: .problem,
                detail: "no logind session and no screen saver heard: only `diligencectl away`/`back` tell",
                fix: "run `diligencectl away` and `back` from swayidle or xss-lock (diligencectl(1), PRESENCE)")
        }
        return DoctorCheck(name: "presence", state: .ok, detail: "following " + sources.joined(separator: " and "))
    }

    private func timewarriorCheck() -> DoctorCheck {
        let mirror = records.timewarrior
        guard mirror.settings.enabled else {
            return DoctorCheck(name: "timewarrior", state: .off, detail: "off ([timewarrior] enabled = yes turns it on)")
        }
        guard let timew = Sound.findOnPath(["timew"]) else {
            return DoctorCheck(
                name: "timewarrior", state: .problem, detail: "timew is not on the PATH; \(mirror.pending.count) session(s) wait for it",
                fix: "install timewarrior (apt install timewarrior)")
        }
        if let failure = mirror.lastFailure, !mirror.pending.isEmpty {
            return DoctorCheck(
                name: "timewarrior", state: .problem, detail: "\(mirror.pending.count) session(s) wait for timew: \(failure)",
                fix: "see the log (EVENT=timewarrior_failed); diligencectl timewarrior sync --dry-run shows the difference")
        }
        return DoctorCheck(name: "timewarrior", state: .ok, detail: "the history is mirrored through \(timew)")
    }

    private func syncCheck() -> DoctorCheck {
        guard let folder = sync.journal.directory() else {
            return DoctorCheck(name: "sync", state: .off, detail: "off (diligencectl sync enable DIR turns it on)")
        }
        if let problem = sync.journal.problem {
            return DoctorCheck(name: "sync", state: .problem, detail: problem, fix: "see diligencectl sync status")
        }
        return DoctorCheck(name: "sync", state: .ok, detail: "this device's journal is in \(folder)")
    }

    private func hooksCheck() -> DoctorCheck {
        let commands = config.hooks.commands.sorted { $0.key < $1.key }
        guard !commands.isEmpty else { return DoctorCheck(name: "hooks", state: .off, detail: "none set ([hooks])") }
        let missing = commands.filter { _, argv in
            guard let program = argv.first else { return true }
            return program.contains("/") ? !Sys.isExecutable(program) : Sound.findOnPath([program]) == nil
        }
        guard missing.isEmpty else {
            let names = missing.map { "on_\($0.key) (\($0.value.first ?? ""))" }.joined(separator: ", ")
            return DoctorCheck(
                name: "hooks", state: .problem, detail: "not found or not executable: \(names)",
                fix: "install the program, or give its full path in [hooks]")
        }
        return DoctorCheck(
            name: "hooks", state: .ok,
            detail: "\(commands.count) set, each program found: " + commands.map { "on_\($0.key)" }.joined(separator: ", "))
    }
}
