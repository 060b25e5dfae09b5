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
            case "'":
                inWord = true
                var closed = false
                while let q = iterator.next() {
                    if q == "'" {
                        closed = true
                        break
                    }
                    current.append(q)
                }
                guard closed else { throw DiligenceError("invalid_config", "a single quote is not closed in \(text.debugDescription).") }
            case "\"":
                inWord = true
                var closed = false
                while let q = iterator.next() {
                    if q == "\"" {
                        closed = true
                        break
                    }
                    if q == "\\" {
                        guard let next = iterator.next() else { break }
                        if !["\"", "\\", "$", "`"].contains(next) { current.append("\\") }
                        current.append(next)
                    } else {
                        current.append(q)
                    }
                }
                guard closed else { throw DiligenceError("invalid_config", "a double quote is not closed in \(text.debugDescription).") }
            case "\\":
                inWord = true
                guard let next = iterator.next() else {
                    throw DiligenceError("invalid_config", "a command line cannot end with a backslash: \(text.debugDescription).")
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
}
