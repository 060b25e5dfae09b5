import DiligenceCore
import DiligenceProtocol

#if canImport(Glibc)
    import Glibc
    import CLinux
#endif

extension Daemon {
    /// The whole program: parse arguments, start, serve forever.
    public static func main(arguments: [String]) -> Never {
        blockHandledSignals()
        clinux_single_malloc_arena()
        let options: DaemonOptions
        do {
            options = try DaemonOptions.parse(arguments)
        } catch {
            Log.error("diligenced: \(error.message) Run `diligenced --help` for usage.")
            exit(2)
        }
        if options.help {
            print(DaemonOptions.usage)
            exit(0)
        }
        if options.version {
            print("diligenced \(ProtocolInfo.release) (protocol \(ProtocolInfo.version))")
            exit(0)
        }
        Log.verbose = options.verbose
        // LANG of the user manager's environment picks the language of notifications and STATUS=.
        useEnvironmentLocale()
        ControlServer.raiseDescriptorLimit()
        let paths = DaemonPaths(socket: options.socket, database: options.database, config: options.config)
        let daemon: Daemon
        do {
            daemon = try Daemon(paths: paths)
            // A typed-throws closure through `sync` crashes Swift 6.3's SIL pass: go through Result.
            // Handlers first: a SIGTERM during start-up is then handled right after it, on the queue.
            daemon.queue.sync { daemon.installSignalHandlers() }
            try daemon.queue.sync { Result { () throws(DiligenceError) in try daemon.start() } }.get()
        } catch {
            Log.error("diligenced: \(error.message)")
            // The error's message stays English, as the log has it: only the frame is translated.
            Systemd.notify("STATUS=" + tr("Failed: {error}", ["error": error.message]))
            exit(1)
        }
        // Park the main thread rather than call dispatchMain(): that ends the main thread with
        // an empty signal mask, and a SIGTERM delivered to it would kill the process instead of
        // queueing for the signalfd. Everything runs on `daemon.queue`.
        while true { withExtendedLifetime(daemon) { _ = sleep(UInt32.max) } }
    }
}
