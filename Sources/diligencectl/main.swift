#if canImport(Glibc)
import Glibc
#endif
import DiligenceProtocol

// diligencectl: the command-line client. Everything happens in runClient (Run.swift); this file
// only feeds it the process's arguments and environment and prints what it returns.
let outcome = runClient(
    Array(CommandLine.arguments.dropFirst()),
    environment: ProcessEnvironment.current,
    terminal: .standard
)
writeAll(outcome.stdout, to: 1)
writeAll(outcome.stderr, to: 2)
exit(outcome.code)
