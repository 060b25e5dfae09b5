#if canImport(Glibc)
import Glibc
#endif
import DiligenceCore

/// Where the control socket lives (SPEC.md): `$DILIGENCE_SOCKET`, else
/// `$XDG_RUNTIME_DIR/diligence/diligenced.sock`, else `/tmp/diligence-<uid>/diligenced.sock`.
public enum SocketPath {
    public static func resolve(environment: [String: String] = ProcessEnvironment.current) -> String {
        if let explicit = environment["DILIGENCE_SOCKET"], !explicit.isEmpty { return explicit }
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return runtime + "/diligence/diligenced.sock"
        }
        return "/tmp/diligence-\(getuid())/diligenced.sock"
    }

    /// `sun_path` holds 107 bytes and a NUL.
    public static let maxLength = 107
}

/// The process environment as a dictionary, read without Foundation.
public enum ProcessEnvironment {
    public static var current: [String: String] {
        var result: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let text = String(cString: entry)
            if let eq = text.firstIndex(of: "=") {
                result[String(text[..<eq])] = String(text[text.index(after: eq)...])
            }
            p += 1
        }
        return result
    }
}

/// Dates on the wire: RFC 3339 in the local time zone with its offset, e.g. `2026-11-29T18:30:00+01:00`.
public enum RFC3339 {
    public static func format(_ wall: Double) -> String {
        var t = time_t(wall.rounded(.down))
        var tm = tm()
        localtime_r(&t, &tm)
        let offset = tm.tm_gmtoff / 60
        let sign = offset < 0 ? "-" : "+"
        return "\(pad(Int(tm.tm_year) + 1900, 4))-\(pad(Int(tm.tm_mon) + 1))-\(pad(Int(tm.tm_mday)))T"
            + "\(pad(Int(tm.tm_hour))):\(pad(Int(tm.tm_min))):\(pad(Int(tm.tm_sec)))"
            + "\(sign)\(pad(abs(offset) / 60)):\(pad(abs(offset) % 60))"
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
            while i < b.count, (48...57).contains(b[i]) { fraction += Double(b[i] - 48) * scale; scale /= 10; i += 1 }
            guard i > start else { return nil }
        }
        guard i < b.count else { return nil }
        var offsetSeconds = 0
        if b[i] == 90 || b[i] == 122 {
            i += 1
        } else if b[i] == 43 || b[i] == 45 {
            guard let oh = num((i + 1)..<(i + 3)), i + 3 < b.count, b[i + 3] == 58, let om = num((i + 4)..<(i + 6)),
                  oh < 24, om < 60 else { return nil }
            offsetSeconds = (oh * 3600 + om * 60) * (b[i] == 45 ? -1 : 1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count, (1...12).contains(month), day >= 1, day <= CivilDate.daysInMonth(year, month),
              hour < 24, minute < 60, second < 61 else { return nil }
        let days = CivilDate.daysFromCivil(year, month, day)
        return Double(days * 86400 + hour * 3600 + minute * 60 + second - offsetSeconds) + fraction
    }

    private static func pad(_ n: Int, _ width: Int = 2) -> String {
        let s = String(n)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}

/// Calendar arithmetic for RFC 3339 parsing; `CalendarDay` (DiligenceCore) holds the algorithms.
public enum CivilDate {
    public static func isLeap(_ y: Int) -> Bool { CalendarDay.isLeap(y) }

    public static func daysInMonth(_ y: Int, _ m: Int) -> Int { CalendarDay.daysInMonth(y, m) }

    /// Days since 1970-01-01 of a civil date (`m` 1...12, `d` within the month).
    public static func daysFromCivil(_ y: Int, _ m: Int, _ d: Int) -> Int {
        CalendarDay(year: y, month: m, day: d)?.daysSince1970 ?? 0
    }
}
