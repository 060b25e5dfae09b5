import DiligenceProtocol
// placeholder, filled below
func reportPage(_ parsed: ParsedCommand, send: (Request) throws(Failure) -> JSON) throws(Failure) -> String { "" }
