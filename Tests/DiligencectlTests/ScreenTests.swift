import Testing

@testable import DiligenceClient

@Suite struct DisplayWidthTests {
    @Test(arguments: [
        ("abc", 3), ("", 0), ("é", 1), ("e\u{301}", 1), // combining acute
        ("日本語", 6), ("ｶﾀｶﾅ", 4), // wide; halfwidth katakana stays narrow
        ("ＡＢ", 4), // fullwidth Latin
        ("한국", 4), ("\u{1100}\u{1161}\u{11A8}", 2), // precomposed and conjoining jamo
        ("😀", 2), ("👍🏽", 2), ("👨‍👩‍👧", 2), ("🇩🇪", 2), // emoji, skin tone, ZWJ family, flag
        ("❤", 1), ("❤️", 2), ("1️⃣", 2), // text style; VS16 makes it an emoji
        ("a\u{200B}b", 2), ("\u{200D}", 0), ("\u{FEFF}", 0), // zero width space, joiner, BOM
        ("\u{1B}[1mbold\u{1B}[0m", 4), ("\u{1B}[38;2;1;2;3m█\u{1B}[0m", 1), // escape sequences take none
        ("·░▒▓█", 5), ("▁▂▃▅▇", 5), ("–—…", 3),
        // ASCII before other text: the character before the first other one may begin a cluster
        ("09:00–09:25", 11), ("key 1️⃣", 6), ("cafe\u{301}s", 5), ("ab\u{1B}[1mc\u{1B}[0m", 3), ("a\r\nb", 2),
    ])
    func widths(text: String, expected: Int) {
        #expect(text.displayWidth == expected, "\(text.debugDescription)")
    }

    @Test func truncation() {
        #expect("abcdef".truncated(toWidth: 4) == "abc…")
        #expect("abc".truncated(toWidth: 3) == "abc")
        #expect("日本語テキスト".truncated(toWidth: 6) == "日本…")
        #expect("日本語テキスト".truncated(toWidth: 5) == "日本…")
        #expect("日本語".truncated(toWidth: 6) == "日本語")
        #expect("abc".truncated(toWidth: 0) == "")
    }

    @Test func padding() {
        #expect("日本".padded(toWidth: 6) == "日本  ")
        #expect("日本".padded(toWidth: 6, right: true) == "  日本")
        #expect("toolong".padded(toWidth: 3) == "toolong")
    }

    @Test("tables align wide task names by terminal columns, not characters")
    func tablesAlignWideNames() {
        let text = columns([["日本語", "1h"], ["work", "2h"]], indent: "")
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines == ["日本語  1h", "work    2h"])
    }
}

@Suite struct ScreenTests {
    @Test func columnsFromEnvironmentThenWindowThenEighty() {
        #expect(Screen.detect(environment: ["COLUMNS": "120"], isTerminal: false, windowColumns: nil).columns == 120)
        #expect(Screen.detect(environment: ["COLUMNS": "120"], isTerminal: true, windowColumns: 90).columns == 120)
        #expect(Screen.detect(environment: [:], isTerminal: true, windowColumns: 90).columns == 90)
        #expect(Screen.detect(environment: [:], isTerminal: false, windowColumns: nil).columns == 80)
        // Out of range or not a number: ignored.
        for bad in ["0", "-5", "10", "abc", "", "1001", "99999999999999999999"] {
            #expect(Screen.detect(environment: ["COLUMNS": bad], isTerminal: false, windowColumns: nil).columns == 80, "\(bad)")
        }
        #expect(Screen.detect(environment: [:], isTerminal: true, windowColumns: 5).columns == 20)
    }

    @Test func colorsOnlyOnATerminalThatHasThem() {
        func colors(_ env: [String: String], tty: Bool = true) -> ColorSupport {
            Screen.detect(environment: env, isTerminal: tty, windowColumns: nil).colors
        }
        #expect(colors(["TERM": "xterm"]) == .basic)
        #expect(colors(["TERM": "xterm-256color"]) == .palette256)
        #expect(colors(["TERM": "xterm-256color", "COLORTERM": "truecolor"]) == .truecolor)
        #expect(colors(["TERM": "xterm", "COLORTERM": "24bit"]) == .truecolor)
        #expect(colors(["TERM": "xterm-256color"], tty: false) == ColorSupport.none)
        #expect(colors(["TERM": "xterm-256color", "NO_COLOR": "1"]) == ColorSupport.none)
        #expect(colors(["TERM": "xterm-256color", "NO_COLOR": ""]) == .palette256) // empty NO_COLOR: no effect
        #expect(colors(["TERM": "dumb", "COLORTERM": "truecolor"]) == ColorSupport.none)
        #expect(colors([:]) == ColorSupport.none)
    }
}
