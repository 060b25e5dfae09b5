/// Splits a command line into argv the way a POSIX shell splits words, and does nothing else:
/// no variables, globs, pipes or `;`. `'…'` keeps everything literally, `"…"` honours `\"`,
/// `\\`, `\$` and `` \` ``, a backslash outside quotes escapes the next character.
public enum CommandLineWords {
    public static func split(_ text: String) throws(DiligenceError) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var iterator = text.makeIterator()
        while let c = iterator.next() {
            switch c {
            case " ", "\t":
                if inWord {
                    words.append(current)
                    current = ""
                    inWord = false
                }
            case "'", "\"":
                inWord = true
                guard let quoted = quoted(until: c, from: &iterator) else {
                    let kind = c == "'" ? "single" : "double"
                    throw DiligenceError(.invalidConfig, "a \(kind) quote is not closed in \(text.debugDescription).")
                }
                current += quoted
            case "\\":
                inWord = true
                guard let next = iterator.next() else {
                    throw DiligenceError(.invalidConfig, "a command line cannot end with a backslash: \(text.debugDescription).")
                }
                current.append(next)
            default:
                inWord = true
                current.append(c)
            }
        }
        if inWord { words.append(current) }
        return words
    }

    /// The text up to the closing `quote`, which is consumed; nil when there is none. Inside
    /// double quotes a backslash escapes `"`, `\\`, `$` and `` ` `` and is kept before anything else.
    private static func quoted(until quote: Character, from iterator: inout String.Iterator) -> String? {
        var text = ""
        while let c = iterator.next() {
            if c == quote { return text }
            if quote == "\"", c == "\\" {
                guard let next = iterator.next() else { return nil }
                if !["\"", "\\", "$", "`"].contains(next) { text.append("\\") }
                text.append(next)
            } else {
                text.append(c)
            }
        }
        return nil
    }
}
