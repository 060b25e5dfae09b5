// How many terminal columns text takes, as a terminal draws it (what wcwidth(3) answers, for
// grapheme clusters): East Asian wide and fullwidth characters and emoji take two, combining
// marks and zero-width characters none, ANSI escape sequences none. Every table, picture and
// truncation of the client measures with this (docs/architecture.md, "The client").

enum DisplayWidth {
    /// Columns of `text`; ANSI escape sequences (`ESC [ ... letter`) take none.
    static func of(_ text: String) -> Int {
        // Printable ASCII, byte for byte a column: nearly every cell of a table, measured without
        // walking its grapheme clusters (that walk was half of `history`'s time at 100 000
        // sessions). From the byte before the first other one on, clusters are walked: it may
        // begin one with what follows (`1` and U+FE0F U+20E3 make a wide 1️⃣).
        let utf8 = text.utf8
        var ascii = 0
        for byte in utf8 {
            guard byte >= 0x20, byte < 0x7F else { break }
            ascii += 1
        }
        if ascii == utf8.count { return ascii }
        let kept = max(0, ascii - 1)
        return kept + clusterWidth(text[utf8.index(utf8.startIndex, offsetBy: kept)...])
    }

    /// Columns of `text`, cluster by cluster.
    private static func clusterWidth(_ text: Substring) -> Int {
        var width = 0
        var escaped = false
        for c in text {
            if escaped {
                if let s = c.unicodeScalars.first, s.value >= 0x40, s.value <= 0x7E, s != "[" { escaped = false }
                continue
            }
            if c == "\u{1B}" || c.unicodeScalars.first == "\u{1B}" {
                escaped = true
                continue
            }
            width += of(c)
        }
        return width
    }

    /// Columns of one grapheme cluster: 0, 1 or 2.
    static func of(_ c: Character) -> Int {
        let scalars = c.unicodeScalars
        guard let first = scalars.first else { return 0 }
        // A text-style emoji followed by VS16 (U+FE0F) is drawn as a wide emoji: ❤️, 1️⃣.
        if scalars.count > 1, scalars.contains("\u{FE0F}"), first.properties.isEmoji { return 2 }
        var width = 0
        for s in scalars { width = max(width, of(s)) }
        return width
    }

    /// Columns of one scalar on its own.
    static func of(_ s: Unicode.Scalar) -> Int {
        let v = s.value
        if v < 0x20 || (v >= 0x7F && v < 0xA0) { return 0 } // control characters
        if v < 0x300 { return 1 } // Latin: the common case, without a property look-up
        switch s.properties.generalCategory {
        case .nonspacingMark, .enclosingMark: return 0
        case .format where v != 0x00AD: return 0 // zero width space and joiners, bidi marks; not the soft hyphen
        default: break
        }
        if v >= 0x1160 && v <= 0x11FF { return 0 } // Hangul medial vowels and final consonants join the syllable
        if s.properties.isEmojiPresentation { return 2 }
        return isWide(v) ? 2 : 1
    }

    /// East Asian Wide (W) and Fullwidth (F) blocks of Unicode 15 (EastAsianWidth.txt) that are
    /// not emoji (those `isEmojiPresentation` answers), merged into ranges.
    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF,
        0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF,
        0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x16FE0...0x16FE4,
        0x17000...0x18CFF, 0x1AFF0...0x1B2FF, 0x1F200...0x1F2FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD,
    ]

    private static func isWide(_ v: UInt32) -> Bool {
        guard v >= 0x1100 else { return false }
        var low = 0
        var high = wideRanges.count - 1
        while low <= high {
            let mid = (low + high) / 2
            if v < wideRanges[mid].lowerBound {
                high = mid - 1
            } else if v > wideRanges[mid].upperBound {
                low = mid + 1
            } else {
                return true
            }
        }
        return false
    }
}

extension String {
    /// Columns on a terminal (`DisplayWidth.of`).
    var displayWidth: Int { DisplayWidth.of(self) }

    /// The text cut to at most `width` columns, ending in `…` when cut. Meant for plain text
    /// (cut before colouring it): a wide character that would straddle the edge is left out.
    func truncated(toWidth width: Int) -> String {
        guard displayWidth > width else { return self }
        guard width > 0 else { return "" }
        var out = ""
        var used = 0
        for c in self {
            let w = DisplayWidth.of(c)
            if used + w > width - 1 { break }
            out.append(c)
            used += w
        }
        return out + "…"
    }

    /// The text followed (or, `right`, preceded) by spaces up to `width` columns.
    func padded(toWidth width: Int, right: Bool = false) -> String {
        let pad = String(repeating: " ", count: max(0, width - displayWidth))
        return right ? pad + self : self + pad
    }
}
