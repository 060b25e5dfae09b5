/// A note on a work session (`start --note`, `note`, `history edit --note`): one line a person
/// reads in history, exports and calendars, and a hook receives in its environment. One line:
/// a control character (a newline, an escape sequence) would break the history table, a CSV
/// row or a terminal that shows it.
public enum SessionNote {
    /// Characters (as a person counts them: grapheme clusters), after trimming.
    public static let maxLength = 500

    /// `text` as it is stored: without white space at either end; nil when nothing is left (an
    /// empty note removes one). Throws `invalid_value` for a control character, `out_of_range`
    /// past `maxLength`. `label` names the field as the person typed it.
    public static func normalize(_ text: String, label: String = "note") throws(DiligenceError) -> String? {
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw DiligenceError(.invalidValue, "\(label) is one line of text: no control characters (newline, tab, escape).")
        }
        var note = Substring(text)
        while let first = note.first, first.isWhitespace { note.removeFirst() }
        while let last = note.last, last.isWhitespace { note.removeLast() }
        if note.count > maxLength {
            throw DiligenceError(.outOfRange, "\(label) holds at most \(maxLength) characters; got \(note.count).")
        }
        return note.isEmpty ? nil : String(note)
    }
}
