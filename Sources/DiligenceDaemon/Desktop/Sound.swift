import DiligenceCore
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// Sounds through a player command (docs/configuration.md `[sound]`): a short sound when a
/// phase ends, and the task's ambient sound looped while its work phase runs. Without a player
/// (none configured, and none of pw-play, paplay, aplay on the PATH) there is no sound at all.
final class Sound {
    /// Players tried in order when `[sound] player` is not set.
    static let candidates = ["pw-play", "paplay", "aplay"]
    /// The freedesktop sound theme's end-of-phase sounds, first found wins.
    static let themeFiles = [
        "/usr/share/sounds/freedesktop/stereo/complete.oga",
        "/usr/share/sounds/freedesktop/stereo/bell.oga",
    ]
    static let ambientExtensions = ["oga", "ogg", "opus", "flac", "wav", "mp3"]

    private let queue: DispatchQueue
    /// nil: not looked for yet; .some(nil): looked, none found.
    private var detected: [String]??
    private var ambientFile: String?
    private var ambientPlayer: Subprocess?
    private var ambientStarted = 0.0
    private var chimes: [pid_t: Subprocess] = [:]
    private var warned = false

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// The player's argv (the sound file is appended), or nil when there is none.
    func player(_ settings: SoundSettings) -> [String]? {
        if let configured = settings.player { return configured }
        if let detected { return detected }
        let found = Self.findOnPath(Self.candidates).map { [$0] }
        detected = .some(found)
        if found == nil { Log.info("No sound player (\(Self.candidates.joined(separator: ", "))) on the PATH; sounds are off.") }
        return found
    }

    /// Forgets the detected player (config reload: the PATH or the setting may have changed).
    func reset() { detected = nil }

    static func findOnPath(_ names: [String]) -> String? {
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/local/bin:/usr/bin:/bin"
        for name in names {
            for dir in path.split(separator: ":") where Sys.isExecutable("\(dir)/\(name)") {
                return "\(dir)/\(name)"
            }
        }
        return nil
    }

    /// Plays the end-of-phase sound once.
    func phaseEnded(_ settings: SoundSettings) {
        guard settings.endOfPhase, let player = player(settings) else { return }
        guard let file = settings.endOfPhaseFile ?? Self.themeFiles.first(where: Sys.isReadable) else {
            if !warned {
                warned = true
                Log.info("No end-of-phase sound: install sound-theme-freedesktop or set [sound] end_of_phase to a file.")
            }
            return
        }
        do {
            let child = try Subprocess(argv: player + [file], queue: queue) { [weak self] pid, _ in self?.chimes[pid] = nil }
            chimes[child.pid] = child
            child.limit(to: 30, queue: queue) {}
        } catch {
            Log.warning("Could not play \(file) with \(player[0]): \(error)")
        }
    }

    /// The ambient sound file for the task's `sound` name, if the sound directory has one.
    static func ambientFile(named name: String, settings: SoundSettings, defaultDirectory: String) -> String? {
        guard !name.contains("/"), !name.hasPrefix(".") else { return nil }
        var directory = settings.directory ?? defaultDirectory
        if directory.hasPrefix("~/"), let home = getenv("HOME") { directory = String(cString: home) + directory.dropFirst() }
        for ext in ambientExtensions where Sys.isReadable("\(directory)/\(name).\(ext)") {
            return "\(directory)/\(name).\(ext)"
        }
        return nil
    }

    /// Loops `file` while it is wanted; nil stops the ambient sound. Called after every change
    /// of the timer, so pause, stop and the end of work all silence it.
    func ambient(_ file: String?, settings: SoundSettings) {
        guard file != ambientFile || (file != nil && ambientPlayer == nil) else { return }
        ambientFile = file
        if let playing = ambientPlayer {
            ambientPlayer = nil
            playing.terminate(queue: queue, grace: 1)
            stopping[playing.pid] = playing
        }
        guard let file, settings.ambient, let player = player(settings) else { return }
        startAmbient(player + [file])
    }
    /// Players told to stop, kept until reaped.
    private var stopping: [pid_t: Subprocess] = [:]

    private func startAmbient(_ argv: [String]) {
        do {
            ambientStarted = Clocks().monotonic
            ambientPlayer = try Subprocess(argv: argv, queue: queue) { [weak self] pid, status in
                guard let self else { return }
                self.stopping[pid] = nil
                guard self.ambientPlayer?.pid == pid else { return }
                self.ambientPlayer = nil
                // The file played to its end: loop it. A player that fails at once is not retried.
                if status == 0 && Clocks().monotonic - self.ambientStarted > 1 {
                    self.startAmbient(argv)
                } else {
                    Log.warning("The ambient sound player \(argv[0]) ended with \(Subprocess.describe(status)); not restarting it.")
                }
            }
        } catch {
            Log.warning("Could not play \(argv.last ?? "") with \(argv[0]): \(error)")
        }
    }

    /// Silences everything (daemon exit).
    func stopAll() {
        if let playing = ambientPlayer { Sys.kill(-playing.pid, SIGTERM) }
        for chime in chimes.values { Sys.kill(-chime.pid, SIGTERM) }
    }
}
