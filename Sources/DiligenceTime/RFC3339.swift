#if canImport(Glibc)
    import Glibc
#endif

/// Dates on the wire: RFC 3339 in the local time zone with its offset, e.g. `2026-11-29T18:30:00+01:00`.
public enum RFC3339 {
    public static func format(_ wall: Double) -> String {
        var t = timeT(wall)
        var tm = tm()
        localtime_r(&t, &tm)
        let year = Int(tm.tm_year) + 1900
        let minutes = tm.tm_gmtoff / 60
        // The 25 bytes written in place: the interpolated pieces were a third of the daemon's
        // time for `history` of 100 000 sessions (two dates each). Other years the long way.
        if (0...9999).contains(year), abs(minutes) < 100 * 60 {
            return String(unsafeUninitializedCapacity: 25) { b in
                func put(_ at: Int, _ n: Int, _ digits: Int = 2) {
                    var n = n
                    for i in (at..<at + digits).reversed() {
                        b[i] = UInt8(48 + n % 10)
                        n /= 10
                    }
                }
                put(0, year, 4)
                b[4] = 45 // -
                put(5, Int(tm.tm_mon) + 1)
                b[7] = 45
                put(8, Int(tm.tm_mday))
                b[10] = 84 // T
                put(11, Int(tm.tm_hour))
                b[13] = 58 // :
                put(14, Int(tm.tm_min))
                b[16] = 58
                put(17, Int(tm.tm_sec))
                b[19] = minutes < 0 ? 45 : 43 // - or +
                put(20, abs(minutes) / 60)
                b[22] = 58
                put(23, abs(minutes) % 60)
                return 25
            }
        }
        return "\(pad(year, 4))-\(pad(Int(tm.tm_mon) + 1))-\(pad(Int(tm.tm_mday)))T"
            + "\(pad(Int(tm.tm_hour))):\(pad(Int(tm.tm_min))):\(pad(Int(tm.tm_sec)))"
            + offsetText(tm.tm_gmtoff)
    }

    /// `+05:30`, `-03:00`: an offset of `seconds` east of UTC as RFC 3339 writes it.
    public static func offsetText(_ seconds: Int) -> String {
        let minutes = seconds / 60
        return (minutes < 0 ? "-" : "+") + pad(abs(minutes) / 60) + ":" + pad(abs(minutes) % 60)
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)` to seconds since 1970; nil when malformed or impossible.
    public static func parse(_ text: String) -> Double? {
        let b = Array(text.utf8)
        guard b.count >= 20 else { return nil }
        func num(_ r: Range<Int>) -> Int? {
            guard r.upperBound <= b.count else { return nil }
            var v = 0
            for i in r {
                guard (48...57).contains(b[i]) else { return nil }
                v = v * 10 + Int(b[i] - 48)
            }
            return v
        }
        guard let year = num(0..<4), b[4] == 45, let month = num(5..<7), b[7] == 45, let day = num(8..<10),
            b[10] == 84 || b[10] == 116 || b[10] == 32,
            let hour = num(11..<13), b[13] == 58, let minute = num(14..<16), b[16] == 58, let second = num(17..<19)
        else { return nil }
        var i = 19
        var fraction = 0.0
        if i < b.count, b[i] == 46 {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, (48...57).contains(b[i]) {
                fraction += Double(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        guard i < b.count else { return nil }
        var offsetSeconds = 0
        if b[i] == 90 || b[i] == 122 {
            i += 1
        } else if b[i] == 43 || b[i] == 45 {
            guard let oh = num((i + 1)..<(i + 3)), i + 3 < b.count, b[i + 3] == 58, let om = num((i + 4)..<(i + 6)),
                oh < 24, om < 60
            else { return nil }
            offsetSeconds = (oh * 3600 + om * 60) * (b[i] == 45 ? -1 : 1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count, let date = CalendarDay(year: year, month: month, day: day),
            hour < 24, minute < 60, second < 61
        else { return nil }
        let days = date.daysSince1970
        return Double(days * 86400 + hour * 3600 + minute * 60 + second - offsetSeconds) + fraction
    }

    /// `20261129T184900Z`: the ISO 8601 basic format in UTC (iCalendar's DATE-TIME; sortable,
    /// and safe in a file name).
    public static func compactUTC(_ wall: Double) -> String {
        var t = timeT(wall)
        var parts = tm()
        gmtime_r(&t, &parts)
        return pad(Int(parts.tm_year) + 1900, 4) + pad(Int(parts.tm_mon) + 1) + pad(Int(parts.tm_mday)) + "T"
            + pad(Int(parts.tm_hour)) + pad(Int(parts.tm_min)) + pad(Int(parts.tm_sec)) + "Z"
    }

    /// `YYYY-MM-DD` of an RFC 3339 text: the date in the offset it was written with (the
    /// daemon writes its local time).
    public static func dateText(_ text: String) -> String { String(text.prefix(10)) }

    /// `HH:MM` of an RFC 3339 text, in the offset it was written with.
    public static func clockText(_ text: String) -> String {
        // What the daemon writes is ASCII, a character a byte: no array of characters per call
        // (a sixth of the client's time for `history` of 100 000 sessions). A byte past the 16th
        // that is not ASCII may belong to the 16th character: the slow way then.
        let utf8 = text.utf8
        if utf8.count >= 16, utf8.prefix(17).allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            let start = utf8.index(utf8.startIndex, offsetBy: 11)
            return String(text[start..<utf8.index(start, offsetBy: 5)])
        }
        let b = Array(text)
        return b.count >= 16 ? String(b[11..<16]) : text
    }

    private static func pad(_ n: Int, _ width: Int = 2) -> String {
        let s = String(n)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
