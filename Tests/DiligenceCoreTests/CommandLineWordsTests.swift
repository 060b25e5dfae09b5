import DiligenceCore
import Testing

@Suite struct CommandLineWordsTests {
    @Test(arguments: [
        ("notify-send Diligence", ["notify-send", "Diligence"]),
        ("  a   b\tc  ", ["a", "b", "c"]),
        ("sh -c 'echo \"$DILIGENCE_TASK\" >> log'", ["sh", "-c", "echo \"$DILIGENCE_TASK\" >> log"]),
        ("\"/opt/my tools/hook\" --flag", ["/opt/my tools/hook", "--flag"]),
        ("a\\ b c", ["a b", "c"]),
        ("\"say \\\"hi\\\" \\n\"", ["say \"hi\" \\n"]),
        ("x'y'\"z\"", ["xyz"]),
        ("''", [""]),
        ("echo ; rm -rf ~", ["echo", ";", "rm", "-rf", "~"]),
        ("", []),
    ])
    func splitsLikeAShellWithoutOne(line: String, words: [String]) throws {
        #expect(try CommandLineWords.split(line) == words)
    }

    @Test(arguments: [
        ("'open", "a single quote is not closed in \("'open".debugDescription)."),
        ("\"open", "a double quote is not closed in \("\"open".debugDescription)."),
        ("trailing\\", "a command line cannot end with a backslash: \("trailing\\".debugDescription)."),
    ])
    func unbalancedQuotesAreErrors(line: String, message: String) throws {
        let error = try #require(throws: DiligenceError.self) { try CommandLineWords.split(line) }
        #expect(error.code.rawValue == "invalid_config" && error.message == message, "\(error.code): \(error.message)")
    }
}
