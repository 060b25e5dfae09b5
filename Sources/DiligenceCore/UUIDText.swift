/// The stable identifiers of sessions and tasks: RFC 9562 UUIDs (version 4, random) as text,
/// `8-4-4-4-12` lowercase hexadecimal digits. A session or task gets one when it is created and
/// keeps it through export, import and every edit: the iCalendar UID, what an import matches on,
/// what another device's copy of the history names.
public enum UUIDText {
    /// A new version-4 UUID from `generator` (the store passes SQLite's random source, tests a
    /// seeded one).
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for _ in 0..<2 {
            let word = generator.next()
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        bytes[6] = bytes[6] & 0x0F | 0x40 // version 4
        bytes[8] = bytes[8] & 0x3F | 0x80 // the RFC's variant
        return text(bytes)
    }

    /// `text` as a UUID in its canonical form (lowercase), or nil when it is not one: 32
    /// hexadecimal digits in groups of 8, 4, 4, 4 and 12 separated by hyphens, any case. Any
    /// version is accepted: an import may carry identifiers another program made.
    public static func parse(_ text: String) -> String? {
        // Byte by byte and without a copy when the text is canonical already, as ids mostly are:
        // a journal or an import holds them by the hundred thousand.
        var text = text
        switch text.withUTF8(form(of:)) {
        case nil: return nil
        case .lowercase?: return text
        case .uppercase?: return text.lowercased()
        }
    }

    private enum Form { case lowercase, uppercase }

    /// Whether `bytes` are a UUID, and whether any of its digits is in uppercase.
    private static func form(of bytes: UnsafeBufferPointer<UInt8>) -> Form? {
        guard bytes.count == 36 else { return nil }
        var form = Form.lowercase
        for index in 0..<36 {
            let byte = bytes[index]
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
            } else if (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte) {
                form = .uppercase
            } else if !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) && !(UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte) {
                return nil
            }
        }
        return form
    }

    private static func text(_ bytes: [UInt8]) -> String {
        // Written in place: appended a scalar at a time, it was a fifth of the daemon's
        // instructions for an import of 100 000 sessions (one new uuid each).
        String(unsafeUninitializedCapacity: bytes.count * 2 + 4) { out in
            func digit(_ n: UInt8) -> UInt8 { n < 10 ? UInt8(ascii: "0") + n : UInt8(ascii: "a") + n - 10 }
            var at = 0
            for (index, byte) in bytes.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    out[at] = UInt8(ascii: "-")
                    at += 1
                }
                out[at] = digit(byte >> 4)
                out[at + 1] = digit(byte & 0x0F)
                at += 2
            }
            return at
        }
    }

    /// The same random UUID written by SQLite (the migration that gave existing rows one).
    public static let sqliteExpression = """
        lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || \
        substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))
        """
}
