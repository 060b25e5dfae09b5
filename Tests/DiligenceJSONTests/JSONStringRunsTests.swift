import DiligenceJSON
import Testing

/// Strings are printed and parsed in runs (whole stretches without escapes copied at once):
/// mixes of escapes, multi-byte characters and plain text must come out exactly as they went in.
@Suite struct JSONStringRunsTests {
    @Test func longStringsWithManyEscapesRoundTrip() throws {
        // What an import chunk looks like: JSON lines inside one string, a quote every few bytes.
        let line = #"{"task":"Café €","start":"2025-01-01T10:00:00Z","note":"tab\there\\ \u{2028}"}"#
        let text = Array(repeating: line, count: 300).joined(separator: "\n") + "\n"
        let printed = JSON.string(text).serialized
        #expect(!printed.contains("\n") && !printed.contains("\u{2028}"))
        #expect(try JSON.parse(printed) == .string(text))
    }

    @Test func aThreeByteCharacterThatIsNotALineSeparatorIsPrintedAsIs() {
        // € is E2 82 AC: it shares its first byte with U+2028 (E2 80 A8) but needs no escape.
        #expect(JSON.string("€\u{2029}€").serialized == #""€\u2029€""#)
        #expect(JSON.string("ends in €").serialized == #""ends in €""#)
        #expect(JSON.string("ends in \u{2028}").serialized == #""ends in \u2028""#)
    }

    @Test func escapesBetweenMultiByteRunsAreDecoded() throws {
        #expect(try JSON.parse(#""é\"ü\\n\u00e9€\ud83d\ude00x""#) == .string("é\"ü\\n\u{E9}€😀x"))
        #expect(try JSON.parse(#""plain, no escapes: 日本""#) == .string("plain, no escapes: 日本"))
        #expect(try JSON.parse(#""\"""#) == .string("\""))
        #expect(try JSON.parse(#""""#) == .string(""))
    }
}
