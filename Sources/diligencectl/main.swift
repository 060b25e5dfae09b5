import DiligenceClient

// diligencectl: the command-line client, the same code as `diligenced` run under this name.
clientMain(arguments: Array(CommandLine.arguments.dropFirst()))
