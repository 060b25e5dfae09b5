import Testing

@testable import DiligenceJSON

/// The JSON parser against the kinds of case RFC 8259 conformance suites (JSONTestSuite's y_,
/// n_ and i_ files) check — escapes including `\u0000`, surrogates, numbers at the edges, deep
/// nesting, trailing garbage, invalid UTF-8 — written out here, one table each: what must be
/// accepted (with the value it must give), what must be refused (with the code), and what
/// RFC 8259 leaves to the implementation (with what this one does, so it cannot change silently).
@Suite("JSON conformance (RFC 8259)")
struct JSONConformanceTests {
    /// Must be accepted, giving this value.
    static let mustAccept: [(text: String, value: JSON)] = [
        // Structure
        ("[]", .array([])), ("{}", .object([])), (" [ ] ", .array([])), ("\t{\n}\r\n", .object([])),
        (#"[null,true,false]"#, .array([.null, .bool(true), .bool(false)])),
        (#"{"a":[{"b":{}}]}"#, .object([("a", .array([.object([("b", .object([]))])]))])),
        (#"{"":0}"#, .object([("", .int(0))])),
        (#"{"a":1,"a":2}"#, .object([("a", .int(1)), ("a", .int(2))])), // duplicate keys: kept, the last one counts
        (#""lonely string""#, .string("lonely string")), ("123", .int(123)), ("null", .null), ("true", .bool(true)),
        // Numbers
        ("[0]", .array([.int(0)])), ("[-0]", .array([.int(0)])), ("[-0.0]", .array([.double(-0.0)])),
        ("[-123]", .array([.int(-123)])), ("[1E22]", .array([.double(1e22)])), ("[1e+2]", .array([.double(100)])),
        ("[1e-2]", .array([.double(0.01)])), ("[1.5E+9]", .array([.double(1.5e9)])), ("[0e1]", .array([.double(0)])),
        ("[123e65]", .array([.double(123e65)])), ("[0.1e1]", .array([.double(1)])),
        ("[9223372036854775807]", .array([.int(Int64.max)])), ("[-9223372036854775808]", .array([.int(Int64.min)])),
        // Strings and escapes
        (#"["\u0000"]"#, .array([.string("\u{0}")])), // y_string_null_escape
        (#"{"foo\u0000bar":42}"#, .object([("foo\u{0}bar", .int(42))])), // y_object_escaped_null_in_key
        (#"["a\u0000b"]"#, .array([.string("a\u{0}b")])),
        (#"["\uD801\udc37"]"#, .array([.string("\u{10437}")])), // a pair, mixed case
        (#"["\uDBFF\uDFFF"]"#, .array([.string("\u{10FFFF}")])), // the last code point
        (#"["\u0061\u30af\u30EA\u30b9"]"#, .array([.string("aクリス")])),
        (#"["\"\\\/\b\f\n\r\t"]"#, .array([.string("\"\\/\u{8}\u{C}\n\r\t")])),
        (#"["new\u000Aline"]"#, .array([.string("new\nline")])),
        (#"["\uFFFF"]"#, .array([.string("\u{FFFF}")])), // a noncharacter, escaped
        ("[\"\u{7F}\"]", .array([.string("\u{7F}")])), // DEL needs no escape
        ("[\"€𝄞\u{2028}\"]", .array([.string("€𝄞\u{2028}")])), // raw UTF-8, a raw line separator
        ("[\"\"]", .array([.string("")])),
    ]

    /// Must be refused, with this code.
    static let mustReject: [(text: [UInt8], code: String)] =
        [
            // Structure and trailing garbage
            ("[1,]", "invalid_json"), ("[,1]", "invalid_json"), (#"["x",,]"#, "invalid_json"), (#"{"a":1,}"#, "invalid_json"),
            ("{,}", "invalid_json"), ("[", "invalid_json"), (#"{"a""#, "invalid_json"), (#"{"a":}"#, "invalid_json"),
            ("{:1}", "invalid_json"), ("{1:1}", "invalid_json"), ("{'a':1}", "invalid_json"), (#"{"a" "b"}"#, "invalid_json"),
            (#"["a""#, "invalid_json"), ("[1 true]", "invalid_json"), ("[1]x", "invalid_json"), ("{}}", "invalid_json"),
            ("[]]", "invalid_json"), ("[][]", "invalid_json"), (#""a" "b""#, "invalid_json"), ("[1] // comment", "invalid_json"),
            ("/* c */ []", "invalid_json"), ("", "invalid_json"), (" \n ", "invalid_json"), ("['x']", "invalid_json"),
            // Numbers
            ("[1.]", "invalid_json"), ("[.1]", "invalid_json"), ("[01]", "invalid_json"), ("[-01]", "invalid_json"),
            ("[+1]", "invalid_json"), ("[1e]", "invalid_json"), ("[1e+]", "invalid_json"), ("[1.0e]", "invalid_json"),
            ("[0x1]", "invalid_json"), ("[Infinity]", "invalid_json"), ("[-Infinity]", "invalid_json"), ("[NaN]", "invalid_json"),
            ("[-]", "invalid_json"), ("[- 1]", "invalid_json"), ("[1e1.5]", "invalid_json"),
            // Words
            ("[tru]", "invalid_json"), ("[nul]", "invalid_json"), ("[True]", "invalid_json"), ("[nulll]", "invalid_json"),
            // Strings
            (#"["abc]"#, "invalid_json"), (#"["\x00"]"#, "invalid_json"), (#"["\a"]"#, "invalid_json"), (#"["\u00A"]"#, "invalid_json"),
            (#"["\uqqqq"]"#, "invalid_json"), (#"["\"]"#, "invalid_json"), ("[\"tab\there\"]", "invalid_json"),
            ("[\"new\nline\"]", "invalid_json"), ("[\"\u{1F}\"]", "invalid_json"),
        ].map { (Array($0.0.utf8), $0.1) } + [
            // Raw bytes: NUL (a control character, in a string or not), and invalid UTF-8
            ([0x5B, 0x22, 0x61, 0x00, 0x62, 0x22, 0x5D], "invalid_json"), ([0x5B, 0x00, 0x5D], "invalid_json"),
            ([0x5B, 0x22, 0xFF, 0x22, 0x5D], "invalid_utf8"), ([0x5B, 0x22, 0xC0, 0x80, 0x22, 0x5D], "invalid_utf8"),
            ([0x5B, 0x22, 0x80, 0x22, 0x5D], "invalid_utf8"), ([0x5B, 0x22, 0xE2, 0x82, 0x22, 0x5D], "invalid_utf8"),
            ([0x5B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x5D], "invalid_utf8"),
            ([0x5B, 0x22, 0xF4, 0x90, 0x80, 0x80, 0x22, 0x5D], "invalid_utf8"),
            ([0x5B, 0x22, 0xF8, 0x88, 0x80, 0x80, 0x80, 0x22, 0x5D], "invalid_utf8"),
        ]

    /// Left to the implementation by RFC 8259; what this parser does. Accepted ones give this
    /// value; refused ones this code.
    static let eitherWay: [(text: [UInt8], outcome: Result<JSON, JSONParseError>)] = [
        // Numbers past a double: refused, since no value can stand for them.
        (Array("[1E400]".utf8), .failure(code("number_out_of_range"))),
        (Array("[-1e400]".utf8), .failure(code("number_out_of_range"))),
        (Array("[123123e100000]".utf8), .failure(code("number_out_of_range"))),
        // Integers past 64 bits: numbers like any other (a field's range check then names them).
        (Array("[100000000000000000000]".utf8), .success(.array([.double(1e20)]))),
        (Array("[-9223372036854775809]".utf8), .success(.array([.double(-9_223_372_036_854_775_808)]))), // the nearest double
        // Underflow: the nearest double, 0.
        (Array("[1e-400]".utf8), .success(.array([.double(0)]))),
        (Array("[0.0000000000000000000000000000001e-300]".utf8), .success(.array([.double(0)]))),
        // A lone surrogate is not a character: refused.
        (Array(#"["\uD800"]"#.utf8), .failure(code("invalid_json"))),
        (Array(#"["\uDFAA"]"#.utf8), .failure(code("invalid_json"))),
        (Array(#"["\uD800\u0041"]"#.utf8), .failure(code("invalid_json"))),
        (Array(#"["\uD800\uD800"]"#.utf8), .failure(code("invalid_json"))),
        // A byte order mark is not JSON text here (requests are lines of JSON).
        ([0xEF, 0xBB, 0xBF, 0x7B, 0x7D], .failure(code("invalid_json"))),
        // Deep nesting: 32 levels at most (requests are flat; this bounds the parser's stack).
        (Array((String(repeating: "[", count: 500) + String(repeating: "]", count: 500)).utf8), .failure(code("too_deep"))),
        (Array(String(repeating: "[", count: 100_000).utf8), .failure(code("too_deep"))),
        // Noncharacters written raw in UTF-8: valid UTF-8, accepted.
        (Array("[\"\u{FFFE}\u{10FFFF}\"]".utf8), .success(.array([.string("\u{FFFE}\u{10FFFF}")]))),
    ]

    static func code(_ code: String) -> JSONParseError { JSONParseError(code: JSONParseError.Code(rawValue: code)!, message: "") }

    @Test("must accept", arguments: mustAccept.indices)
    func accepted(_ index: Int) throws {
        let (text, value) = Self.mustAccept[index]
        let parsed = try JSON.parse(text)
        #expect(parsed == value, "\(text)")
        // And keeps key order, duplicates included.
        if case .object(let members) = value { #expect(parsed.serialized == JSON.object(members).serialized) }
        // What it gives prints to text that parses back to it.
        #expect(try JSON.parse(parsed.serialized) == parsed, "\(text)")
    }

    @Test("must reject", arguments: mustReject.indices)
    func refused(_ index: Int) {
        let (bytes, code) = Self.mustReject[index]
        #expect(jsonErrorCode(bytes) == code, "\(String(decoding: bytes, as: UTF8.self).debugDescription)")
    }

    @Test("either way: this parser's choice", arguments: eitherWay.indices)
    func implementationDefined(_ index: Int) throws {
        let (bytes, outcome) = Self.eitherWay[index]
        let shown = String(decoding: bytes.prefix(60), as: UTF8.self).debugDescription
        switch outcome {
        case .success(let value): #expect(try JSON.parse(bytes) == value, "\(shown)")
        case .failure(let error): #expect(jsonErrorCode(bytes) == error.code.rawValue, "\(shown)")
        }
    }
}
