import DiligenceProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The client as a process: its arguments and environment in, texts out, then exit.
public func clientMain(arguments: [String]) -> Never {
    // A reader that went away (`diligencectl watch | head -1`, a status bar that quit) is an EPIPE
    // from write, which `watch` ends on, rather than a signal that kills the process.
    signal(SIGPIPE, SIG_IGN)
    // Only here: the client's texts follow LANG; in-process tests keep the C locale's English.
    useEnvironmentLocale()
    let run = runClient(arguments, environment: ProcessEnvironment.current, terminal: .standard)
    writeAll(run.stdout, to: 1)
    writeAll(run.stderr, to: 2)
    exit(run.code)
}
