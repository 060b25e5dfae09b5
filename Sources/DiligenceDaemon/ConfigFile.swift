import DiligenceCore
import DiligenceProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The config file as the daemon uses it (docs/configuration.md). A file it refuses never takes
/// it down: at start-up it runs on the last configuration it accepted — kept beside its
/// database as `diligenced.conf.last-good` — or on the defaults; on reload it keeps the settings
/// it has. Either way it says so loudly until a good file is loaded: the log, STATUS=,
/// `config_problems` in every status, `doctor` (in full), `diligencectl status` (a line pointing
/// to doctor), and a failed `reload` (exit 1; `systemctl --user reload` fails too).
extension Daemon {
    /// What reading the config file gave.
    struct ConfigLoad {
        var config: DaemonConfig
        /// For `config_problems`: why the file was refused, or the lines `on_bad_config =
        /// defaults` skipped. Empty when the file is fine.
        var problems: [String]
        /// The accepted file's text (nil: no file, the defaults) to keep as the last good one;
        /// unset when the file was refused.
        var accepted: String??
    }

    /// `<database directory>/diligenced.conf.last-good`.
    static func lastGoodConfigPath(_ paths: DaemonPaths) -> String {
        Files.directory(of: paths.database) + "/diligenced.conf.last-good"
    }

    /// Reads and checks the config file; throws the reason (with the file and line) when it is refused.
    static func readConfig(_ paths: DaemonPaths) throws(DiligenceError) -> (config: DaemonConfig, text: String?) {
        guard let text = try Files.read(paths.config, followingLinks: true) else {
            if paths.configRequired {
                throw DiligenceError(.missingConfig, "The config file \(paths.config) does not exist.")
            }
            return (DaemonConfig(), nil)
        }
        do {
            let config = try DaemonConfig.parse(text)
            for problem in config.problems {
                Log.warning("\(paths.config): \(problem)", fields: [("EVENT", "config_problem")])
            }
            return (config, text)
        } catch {
            throw DiligenceError(error.code, "\(paths.config): \(error.message)")
        }
    }

    /// The configuration to start with: the file's, else the last good one, else the defaults.
    static func startupConfig(_ paths: DaemonPaths) -> ConfigLoad {
        do {
            let (config, text) = try readConfig(paths)
            return ConfigLoad(config: config, problems: config.problems.map { "\(paths.config): \($0)" }, accepted: .some(text))
        } catch {
            let lastGood = lastGoodConfigPath(paths)
            var fallback = DaemonConfig()
            var source = "the default settings"
            if let text = try? Files.read(lastGood), let good = try? DaemonConfig.parse(text) {
                fallback = good
                source = "the last good configuration (\(lastGood))"
            }
            let problem = "Refused the config file, running on \(source) until it is fixed and reloaded: \(error.message)"
            Log.error(problem, fields: [("EVENT", "config_refused"), ("CODE", error.code.rawValue)])
            return ConfigLoad(config: fallback, problems: [problem], accepted: nil)
        }
    }

    /// Keeps `text` (an accepted file) as the last good configuration; no file (the defaults)
    /// removes the kept one. Written to a temporary file and renamed, so it is whole or absent.
    static func keepLastGood(_ text: String?, _ paths: DaemonPaths) {
        let path = lastGoodConfigPath(paths)
        guard let text else {
            Sys.unlink(path)
            return
        }
        if (try? Files.read(path)) == text { return }
        do { try Files.replace(path, with: text, synced: false) } catch {
            Log.warning("Could not keep the accepted configuration in \(path): \(error.reason).")
            Sys.unlink(path + ".new")
        }
    }
}
