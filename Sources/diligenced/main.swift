import DiligenceClient
import DiligenceDaemon

// One program, two names (as busybox is): installed, `diligencectl` is a link to `diligenced`,
// so the Swift runtime that both link statically is shipped once.
if CommandLine.arguments.first?.split(separator: "/").last == "diligencectl" {
    clientMain(arguments: Array(CommandLine.arguments.dropFirst()))
}
Daemon.main(arguments: Array(CommandLine.arguments.dropFirst()))
