import DiligenceDaemon

Daemon.main(arguments: Array(CommandLine.arguments.dropFirst()))
