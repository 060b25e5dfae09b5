import DiligenceProtocol

#if canImport(Glibc)
    import Glibc
#endif

// diligencectl: the command-line client. Everything happens in runClient (Run.swift); this file
// only feeds it the process's arguments and environment and prints what it returns.

// A reader that went away (`diligencectl watch | head -1`, a status bar that quit) is an EPIPE
// from write, which `watch` ends on, rather than a signal that kills the process.
signal(SIGPIPE, SIG_IGN)
let run = runClient(
    Array(CommandLine.arguments.dropFirst()),
    environment: ProcessEnvironment.current,
    terminal: .standard
)
writeAll(run.stdout, to: 1)
writeAll(run.stderr, to: 2)
exit(run.code)
