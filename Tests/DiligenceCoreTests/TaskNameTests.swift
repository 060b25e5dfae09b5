import DiligenceTestSupport
import Testing

@testable import DiligenceCore

/// Finding 12: invisible and look-alike names were accepted. New names are NFC, trimmed, and
/// hold nothing that does not show.
@Suite("Task names")
struct TaskNameTests {
    @Test(arguments: [
        // The three names of the finding: each looked like "Work".
        "Work\u{200B}", "\u{202E}Work", "Wo\u{200D}rk", "Wo\u{200C}rk",
        // Format characters of every kind: bidi controls, BOM, soft hyphen, word joiner, tags.
        "\u{200E}Work", "Work\u{2066}", "\u{FEFF}Work", "Wo\u{AD}rk", "Wo\u{2060}rk", "Work\u{E0041}",
        // Control (C0, DEL, C1), private use (BMP and plane 15), line and paragraph separators.
        "Wo\nrk", "Wo\u{7}rk", "Wo\u{7F}rk", "Wo\u{0}rk", "Wo\u{85}rk", "Work\u{E000}", "Work\u{F0000}",
        "Wo\u{2028}rk", "Wo\u{2029}rk",
        // Nothing left after trimming, or too long.
        "", " ", "\u{A0}", "\t\u{3000}", String(repeating: "x", count: 65), String(repeating: "e\u{301}", count: 65),
    ])
    func refused(_ name: String) {
        #expect(errorCode { try TaskName.normalize(name) } == "invalid_name", "\(name.unicodeScalars.map { String($0.value, radix: 16) })")
    }

    @Test func theMessageNamesTheHiddenCharacter() throws {
        do {
            _ = try TaskName.normalize("Work\u{200B}")
            Issue.record("accepted")
        } catch {
            #expect(error.message.contains("U+200B (ZERO WIDTH SPACE)"), "\(error.message)")
        }
    }

    @Test(arguments: [
        (" Work", "Work"), ("Work\u{A0}", "Work"), ("\u{3000}Deep work\t", "Deep work"),
        // NFD (as some keyboards and macOS file names send it) becomes NFC.
        ("Cafe\u{301}", "Caf\u{E9}"), ("A\u{30A}ngstr\u{F6}m", "\u{C5}ngstr\u{F6}m"),
        ("W", "W"), (String(repeating: "x", count: 64), String(repeating: "x", count: 64)),
        // 64 characters in NFD (two scalars each) are 64 characters.
        (String(repeating: "e\u{301}", count: 64), String(repeating: "\u{E9}", count: 64)),
        // Joiners where they build what is seen: an emoji sequence, Persian, a subdivision flag.
        ("👩\u{200D}💻 Code", "👩\u{200D}💻 Code"), ("❤\u{FE0F}\u{200D}🔥", "❤\u{FE0F}\u{200D}🔥"),
        ("می\u{200C}خواهم", "می\u{200C}خواهم"),
        ("🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}", "🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}"),
        ("Écrire ✍️", "Écrire ✍️"), ("Deep\u{A0}work", "Deep\u{A0}work"),
    ])
    func accepted(_ given: String, _ stored: String) throws {
        let name = try TaskName.normalize(given)
        #expect(Array(name.unicodeScalars) == Array(stored.unicodeScalars))
    }
}
