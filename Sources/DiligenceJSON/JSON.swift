/// A JSON value, with a small parser and printer of its own: the protocol needs exact error
/// codes for hostile input, stable key order, and a client that starts without Foundation.
public enum JSON: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    /// Keys keep the order they were written in (stable, readable output).
    case object([(String, JSON)])

    public static func == (a: JSON, b: JSON) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let x), .bool(let y)): x == y
        case (.int(let x), .int(let y)): x == y
        case (.double(let x), .double(let y)): x == y
        case (.int(let x), .double(let y)), (.double(let y), .int(let x)): Double(x) == y
        case (.string(let x), .string(let y)): x == y
        case (.array(let x), .array(let y)): x == y
        case (.object(let x), .object(let y)):
            // Duplicate keys are kept; as in lookups, the last one of a key counts.
            x.count == y.count && Set(x.map(\.0)) == Set(y.map(\.0))
                && x.allSatisfy { key, _ in a[key] == b[key] }
        default: false
        }
    }

    // MARK: Access

    public subscript(key: String) -> JSON? {
        guard case .object(let members) = self else { return nil }
        // Lengths first: most keys differ in theirs, and comparing two lengths costs less than
        // comparing two strings.
        let length = key.utf8.count
        return members.last { $0.0.utf8.count == length && $0.0 == key }?.1
    }

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    public var intValue: Int64? {
        switch self {
        case .int(let i): i
        case .double(let d) where d == d.rounded() && abs(d) < 9.0e15: Int64(d)
        default: nil
        }
    }
    public var doubleValue: Double? {
        switch self {
        case .int(let i): Double(i)
        case .double(let d): d
        default: nil
        }
    }
    public var arrayValue: [JSON]? { if case .array(let a) = self { a } else { nil } }
    public var isNull: Bool { self == .null }

    /// The JSON type's name, for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int, .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// `.string(s)`, or `.null` when `s` is nil.
    public static func string(_ s: String?) -> JSON { s.map { .string($0) } ?? .null }
    public static func int(_ i: Int) -> JSON { .int(Int64(i)) }
    public static func int(_ i: Int?) -> JSON { i.map { .int(Int64($0)) } ?? .null }
}

extension String {
    /// "a number", "an array", "an object": for messages naming a JSON type.
    public var withArticle: String { (first.map { "aeiou".contains($0) } ?? false ? "an " : "a ") + self }
}

// MARK: Printing

extension JSON {
    /// Compact JSON on one line (no newline inside: strings escape theirs).
    public var serialized: String {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    public func write(to out: inout String) {
        out += serialized
    }

    /// Appends the compact JSON as UTF-8 bytes: a report of a year is some 30 KB of small
    /// pieces, which byte appends handle far faster than String appends.
    public func write(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): Self.writeInteger(i, to: &out)
        case .double(let d):
            if d.isFinite {
                if d == d.rounded() && abs(d) < 1e15 { Self.writeInteger(Int64(d), to: &out) } else { out.append(contentsOf: "\(d)".utf8) }
            } else {
                out.append(contentsOf: "null".utf8)
            }
        case .string(let s): Self.writeString(s, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Decimal digits, as `String(i)` writes them.
    private static func writeInteger(_ i: Int64, to out: inout [UInt8]) {
        if i < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = i.magnitude
        let first = out.count
        repeat {
            out.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        out[first...].reverse()
    }

    /// Copies runs that need no escaping whole. Escaped: quote, backslash, control characters,
    /// DEL, and U+2028/U+2029 (E2 80 A8/A9), which end lines in JavaScript.
    private static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var text = s
        text.withUTF8 { bytes in
            var runStart = 0
            var i = 0
            while i < bytes.count {
                let byte = bytes[i]
                var width = 1
                let escape: String
                switch byte {
                case UInt8(ascii: "\""): escape = "\\\""
                case UInt8(ascii: "\\"): escape = "\\\\"
                case 0x0A: escape = "\\n"
                case 0x0D: escape = "\\r"
                case 0x09: escape = "\\t"
                case 0..<0x20, 0x7F: escape = unicodeEscape(UInt32(byte))
                case 0xE2 where i + 2 < bytes.count && bytes[i + 1] == 0x80 && (bytes[i + 2] == 0xA8 || bytes[i + 2] == 0xA9):
                    escape = unicodeEscape(bytes[i + 2] == 0xA8 ? 0x2028 : 0x2029)
                    width = 3
                default:
                    i += 1
                    continue
                }
                out.append(contentsOf: bytes[runStart..<i])
                out.append(contentsOf: escape.utf8)
                i += width
                runStart = i
            }
            out.append(contentsOf: bytes[runStart..<bytes.count])
        }
        out.append(UInt8(ascii: "\""))
    }

    /// `\\u` and four lowercase hex digits.
    private static func unicodeEscape(_ value: UInt32) -> String {
        let hex = String(value, radix: 16)
        return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
    }
}

// MARK: Parsing

/// Why a text is not acceptable JSON; `code`'s raw value goes to the protocol as is.
public struct JSONParseError: Error, Equatable, Sendable {
    public var code: Code
    public var message: String

    public enum Code: String, Sendable, CaseIterable {
        case invalidJSON = "invalid_json"
        case invalidUTF8 = "invalid_utf8"
        case tooDeep = "too_deep"
        case numberOutOfRange = "number_out_of_range"
    }
}

extension JSON {
    /// Deepest nesting accepted: requests are flat; this bounds the parser's stack.
    public static let maxDepth = 32

    /// Parses one JSON text from UTF-8 bytes, read in place when they are contiguous (a line
    /// of a journal or a request is a slice of a larger buffer: it is not copied).
    public static func parse<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(JSONParseError) -> JSON {
        let parsed =
            bytes.withContiguousStorageIfAvailable { Parser.parse($0) } ?? Array(bytes).withUnsafeBufferPointer { Parser.parse($0) }
        return try parsed.get()
    }

    public static func parse(_ text: String) throws(JSONParseError) -> JSON {
        var text = text
        return try text.withUTF8 { Parser.parse($0) }.get()
    }
}

/// Reads the bytes it is lent, in place: every index is checked against `bytes.count` before
/// it is read.
private struct Parser {
    let bytes: UnsafeBufferPointer<UInt8>
    var i = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<JSON, JSONParseError> {
        var parser = Parser(bytes: bytes)
        do { return .success(try parser.parseDocument()) } catch { return .failure(error) }
    }

    func fail(_ code: JSONParseError.Code, _ message: String) -> JSONParseError {
        JSONParseError(code: code, message: message)
    }

    func invalid(_ what: String) -> JSONParseError {
        fail(.invalidJSON, "Not valid JSON: \(what) at byte \(i + 1).")
    }

    mutating func parseDocument() throws(JSONParseError) -> JSON {
        let text = Self.check(bytes)
        if text.hasNUL { throw fail(.invalidJSON, "A raw NUL byte is not JSON text (in a string, write \\u0000).") }
        guard text.isUTF8 else { throw fail(.invalidUTF8, "Not valid UTF-8.") }
        skipSpace()
        guard i < bytes.count else { throw fail(.invalidJSON, "Empty: send one JSON object per line.") }
        let value = try parseValue(depth: 0)
        skipSpace()
        guard i == bytes.count else { throw invalid("unexpected text after the value") }
        return value
    }

    /// Whether `bytes` hold a raw NUL byte, and whether they are well-formed UTF-8 (Unicode's
    /// table 3-7: shortest forms only, no surrogates, nothing past U+10FFFF), in one pass.
    static func check(_ bytes: UnsafeBufferPointer<UInt8>) -> (hasNUL: Bool, isUTF8: Bool) {
        var hasNUL = false
        var i = 0
        while i < bytes.count {
            // Eight ASCII bytes without a NUL at a time (most text is that).
            if i + 8 <= bytes.count, let base = bytes.baseAddress {
                let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                let high: UInt64 = 0x8080_8080_8080_8080
                if word & high == 0 && (word &- 0x0101_0101_0101_0101) & ~word & high == 0 {
                    i += 8
                    continue
                }
            }
            let lead = bytes[i]
            i += 1
            if lead < 0x80 {
                if lead == 0 { hasNUL = true }
                continue
            }
            // The continuation bytes that follow `lead`, and the range of the first of them.
            let more: Int
            var first: ClosedRange<UInt8> = 0x80...0xBF
            switch lead {
            case 0xC2...0xDF: more = 1
            case 0xE0: (more, first) = (2, 0xA0...0xBF)
            case 0xE1...0xEC, 0xEE...0xEF: more = 2
            case 0xED: (more, first) = (2, 0x80...0x9F)
            case 0xF0: (more, first) = (3, 0x90...0xBF)
            case 0xF1...0xF3: more = 3
            case 0xF4: (more, first) = (3, 0x80...0x8F)
            default: return (hasNUL || bytes[i...].contains(0), false)
            }
            guard i + more <= bytes.count, first.contains(bytes[i]),
                bytes[(i + 1)..<(i + more)].allSatisfy({ (0x80...0xBF).contains($0) })
            else { return (hasNUL || bytes[i...].contains(0), false) }
            i += more
        }
        return (hasNUL, true)
    }

    mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0A || bytes[i] == 0x0D { i += 1 }
    }

    /// `depth`: how many arrays and objects enclose the value. Only containers count towards
    /// `maxDepth`: 32 nested arrays are accepted (whatever they hold), a 33rd is too deep.
    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSON {
        guard i < bytes.count else { throw invalid("unexpected end") }
        switch bytes[i] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard depth < JSON.maxDepth else {
                throw fail(.tooDeep, "Nested deeper than \(JSON.maxDepth) levels.")
            }
            return bytes[i] == UInt8(ascii: "{") ? try parseObject(depth: depth) : try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw invalid("unexpected character")
        }
    }

    mutating func literal(_ word: String) throws(JSONParseError) {
        let w = Array(word.utf8)
        guard i + w.count <= bytes.count, bytes[i..<(i + w.count)].elementsEqual(w) else { throw invalid("unknown word") }
        i += w.count
    }

    mutating func parseObject(depth: Int) throws(JSONParseError) -> JSON {
        // Room for a journal line's or a request's members without growing on the way.
        var members: [(String, JSON)] = []
        members.reserveCapacity(12)
        try parseElements(closing: UInt8(ascii: "}")) { (p: inout Parser) throws(JSONParseError) in
            guard p.i < p.bytes.count, p.bytes[p.i] == UInt8(ascii: "\"") else { throw p.invalid("expected a string key") }
            let key = try p.parseString()
            p.skipSpace()
            guard p.i < p.bytes.count, p.bytes[p.i] == UInt8(ascii: ":") else { throw p.invalid("expected ':'") }
            p.i += 1
            p.skipSpace()
            members.append((key, try p.parseValue(depth: depth + 1)))
        }
        return .object(members)
    }

    mutating func parseArray(depth: Int) throws(JSONParseError) -> JSON {
        var items: [JSON] = []
        try parseElements(closing: UInt8(ascii: "]")) { (p: inout Parser) throws(JSONParseError) in
            items.append(try p.parseValue(depth: depth + 1))
        }
        return .array(items)
    }

    /// The elements of the array or object opening at `i`, each read by `element` (after the
    /// space before it), separated by commas, up to `closing`.
    mutating func parseElements(
        closing: UInt8, _ element: (inout Parser) throws(JSONParseError) -> Void
    ) throws(JSONParseError) {
        i += 1
        skipSpace()
        if i < bytes.count, bytes[i] == closing {
            i += 1
            return
        }
        while true {
            skipSpace()
            try element(&self)
            skipSpace()
            guard i < bytes.count else { throw invalid("unexpected end") }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            if bytes[i] == closing {
                i += 1
                return
            }
            throw invalid("expected ',' or '\(Character(Unicode.Scalar(closing)))'")
        }
    }

    /// A string without escapes is decoded from the request's bytes in one go; with escapes,
    /// the unescaped bytes are gathered in one buffer and decoded once (the text was validated
    /// as UTF-8 by `parseDocument`, and runs are split only at ASCII bytes).
    mutating func parseString() throws(JSONParseError) -> String {
        i += 1
        let start = i
        var unescaped: [UInt8] = []
        var hasEscapes = false
        var runStart = i
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                defer { i += 1 }
                guard hasEscapes else { return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self) }
                unescaped.append(contentsOf: bytes[runStart..<i])
                return String(decoding: unescaped, as: UTF8.self)
            }
            if b < 0x20 { throw invalid("control character in a string") }
            if b == UInt8(ascii: "\\") {
                if !hasEscapes {
                    hasEscapes = true
                    unescaped.reserveCapacity(bytes.count - start)
                }
                unescaped.append(contentsOf: bytes[runStart..<i])
                i += 1
                guard i < bytes.count else { break }
                let e = bytes[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): unescaped.append(e)
                case UInt8(ascii: "b"): unescaped.append(0x08)
                case UInt8(ascii: "f"): unescaped.append(0x0C)
                case UInt8(ascii: "n"): unescaped.append(0x0A)
                case UInt8(ascii: "r"): unescaped.append(0x0D)
                case UInt8(ascii: "t"): unescaped.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code) {
                        guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                            throw invalid("unpaired surrogate")
                        }
                        i += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw invalid("unpaired surrogate") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    // `\u0000` is a character like any other (RFC 8259); a raw NUL byte is not
                    // JSON text (parseDocument refuses it), and neither is a lone surrogate.
                    guard let scalar = Unicode.Scalar(code) else { throw invalid("unpaired surrogate") }
                    Unicode.UTF8.encode(scalar) { unescaped.append($0) }
                default: throw invalid("unknown escape")
                }
                runStart = i
                continue
            }
            i += 1
        }
        throw invalid("unterminated string")
    }

    mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard i + 4 <= bytes.count else { throw invalid("short \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[i]
            let d: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(b - UInt8(ascii: "A") + 10)
            default: throw invalid("bad \\u escape")
            }
            v = v * 16 + d
            i += 1
        }
        return v
    }

    mutating func parseNumber() throws(JSONParseError) -> JSON {
        let start = i
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        func digits(_ p: inout Parser) -> Int {
            let s = p.i
            while p.i < p.bytes.count, p.bytes[p.i] >= UInt8(ascii: "0"), p.bytes[p.i] <= UInt8(ascii: "9") { p.i += 1 }
            return p.i - s
        }
        let intDigits = digits(&self)
        guard intDigits > 0 else { throw invalid("bad number") }
        if intDigits > 1 && bytes[i - intDigits] == UInt8(ascii: "0") { throw invalid("leading zero") }
        var isInteger = true
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            isInteger = false
            guard digits(&self) > 0 else { throw invalid("bad number") }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            isInteger = false
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard digits(&self) > 0 else { throw invalid("bad number") }
        }
        // Up to 18 digits cannot overflow: read them directly (a report is mostly small integers).
        if isInteger && intDigits <= 18 {
            var value: Int64 = 0
            for digit in bytes[(i - intDigits)..<i] { value = value * 10 + Int64(digit - UInt8(ascii: "0")) }
            return .int(bytes[start] == UInt8(ascii: "-") ? -value : value)
        }
        if !isInteger, let d = Self.exactDouble(UnsafeBufferPointer(rebasing: bytes[start..<i])) { return .double(d) }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        // An integer past 64 bits is a number like any other (as a double): the field it is
        // given for says it is out of its range, naming the field.
        if isInteger, let v = Int64(text) { return .int(v) }
        guard let d = Double(text), d.isFinite else {
            throw fail(.numberOutOfRange, "The number \(text.prefix(40)) is out of range.")
        }
        return .double(d)
    }

    /// Powers of ten a Double holds exactly.
    static let exactPowersOfTen: [Double] = (0...22).map { power in (0..<power).reduce(1.0) { value, _ in value * 10 } }

    /// The value of a number with a fraction or an exponent (`-12.5`, `1e3`; checked by
    /// `parseNumber`) without making a String of it, when its digits make an integer up to 2^53
    /// and its power of ten is at most 22 either way: then both are exact Doubles, and one
    /// multiplication or division of them is rounded correctly, as `Double(text)` rounds
    /// (Clinger's fast path). A journal's times (`1764567862.25`) are such numbers. Nil otherwise.
    static func exactDouble(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
        var digits: UInt64 = 0
        var count = 0
        var fraction = 0
        var exponent = 0
        var exponentSign = 1
        var k = text[0] == UInt8(ascii: "-") ? 1 : 0
        var inFraction = false
        while k < text.count {
            let byte = text[k]
            k += 1
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                count += 1
                guard count <= 19 else { return nil }
                digits = digits * 10 + UInt64(byte - UInt8(ascii: "0"))
                if inFraction { fraction += 1 }
            case UInt8(ascii: "."): inFraction = true
            default:
                // The exponent: its sign and at most 3 digits (more means no fast path).
                if k < text.count, text[k] == UInt8(ascii: "-") || text[k] == UInt8(ascii: "+") {
                    if text[k] == UInt8(ascii: "-") { exponentSign = -1 }
                    k += 1
                }
                guard text.count - k <= 3 else { return nil }
                while k < text.count {
                    exponent = exponent * 10 + Int(text[k] - UInt8(ascii: "0"))
                    k += 1
                }
            }
        }
        let power = exponentSign * exponent - fraction
        guard digits <= 1 << 53, (-22...22).contains(power) else { return nil }
        let magnitude = power < 0 ? Double(digits) / exactPowersOfTen[-power] : Double(digits) * exactPowersOfTen[power]
        return text[0] == UInt8(ascii: "-") ? -magnitude : magnitude
    }
}
