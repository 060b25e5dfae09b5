import DiligenceJSON
import Testing

@Suite("JSON")
struct JSONTests {
    // MARK: Round trips

    @Test(arguments: [
        #"null"#, #"true"#, #"false"#, #"0"#, #"-7"#, #"1.5"#, #"-2.25"#, #""""#, #""x""#, #"[]"#, #"{}"#,
        #"[1,"two",[3],{"four":4}]"#,
        #"{"command":"start","task":"Writing","id":7,"nested":{"a":[true,false,null]}}"#,
        #"9223372036854775807"#, #"-9223372036854775808"#,
        #""caf\u00e9 \"quoted\" back\\slash""#,
    ])
    func serializedParsesBackToTheSameText(_ text: String) throws {
        let value = try JSON.parse(text)
        let printed = value.serialized
        #expect(try JSON.parse(printed) == value)
        // Canonical input prints byte for byte the same (é is printed raw).
        #expect(printed == text.replacingEscapedE())
    }

    @Test func whitespaceAroundValuesIsIgnored() throws {
        let value = try JSON.parse(" \t\r\n{ \"a\" : [ 1 , 2 ] }\n ")
        #expect(value.serialized == #"{"a":[1,2]}"#)
    }

    @Test func numbers() throws {
        #expect(try JSON.parse("-0") == .int(0))
        #expect(try JSON.parse("1.5e3") == .double(1500))
        #expect(try JSON.parse("1.5e3").serialized == "1500")
        #expect(try JSON.parse("2E-2") == .double(0.02))
        #expect(JSON.double(0.1).serialized == "0.1")
        #expect(JSON.double(.infinity).serialized == "null")
        #expect(JSON.int(1) == JSON.double(1.0))
        #expect(JSON.double(3.0).intValue == 3)
        #expect(JSON.double(3.5).intValue == nil)
        #expect(JSON.int(4).doubleValue == 4.0)
    }

    @Test func objectsKeepKeyOrderAndTheLastDuplicateWins() throws {
        let value = try JSON.parse(#"{"b":1,"a":2,"b":3}"#)
        #expect(value["b"] == .int(3))
        #expect(value.serialized == #"{"b":1,"a":2,"b":3}"#)
        #expect(JSON.object([("a", .int(1)), ("b", .int(2))]) == JSON.object([("b", .int(2)), ("a", .int(1))]))
    }

    // MARK: Escapes

    @Test func escapesInInput() throws {
        #expect(try JSON.parse(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{8}\u{C}\n\r\t"))
        #expect(try JSON.parse(#""\u00e9\u00C9\u20AC""#) == .string("éÉ€"))
        #expect(try JSON.parse(#""\ud83d\ude00""#) == .string("😀"))
        #expect(try JSON.parse(#""\uD834\uDD1E!""#) == .string("𝄞!"))
        #expect(try JSON.parse("\"😀 raw\"") == .string("😀 raw"))
    }

    @Test(arguments: [#""\ud83d""#, #""\ude00""#, #""\ud83dx""#, #""\ud83d\u0041""#, #""\ud83d\n""#, #""\u12""#, #""\u12G4""#, #""\x""#])
    func badEscapesAreInvalidJSON(_ text: String) {
        #expect(jsonErrorCode(text) == "invalid_json")
    }

    @Test func controlCharactersAreEscapedOnOutput() throws {
        var text = ""
        for v in 0..<0x20 { text.unicodeScalars.append(Unicode.Scalar(UInt8(v))) }
        text += "\u{7F}\u{2028}\u{2029}\"\\ end"
        let printed = JSON.object([("k\n", .string(text))]).serialized
        #expect(!printed.utf8.contains { $0 < 0x20 || $0 == 0x7F })
        #expect(!printed.contains("\u{2028}") && !printed.contains("\u{2029}"))
        #expect(printed.contains(#"\n"#) && printed.contains(#"\u0001"#) && printed.contains(#"\u001f"#))
        #expect(printed.contains(#"\u007f"#) && printed.contains(#"\u2028"#))
        #expect(JSON.string("a\nb").serialized == #""a\nb""#)
        #expect(JSON.string("\t\r").serialized == #""\t\r""#)

        // Everything parses back, NUL included (written \u0000, which is accepted on input).
        let back = try JSON.parse(printed)
        #expect(back["k\n"] == .string(text))
    }

    // MARK: Errors

    @Test(arguments: [
        "", "   ", #"{"a":1} x"#, #"{"a":1}{}"#, "tru", "nul", "nulls", "True", "01", "-01", "00", "1.", ".5", "+1", "-",
        "1e", "1e+", #""abc"#, #"{"a":1,}"#, "[1,]", "[1 2]", "{a:1}", #"{"a" 1}"#, "{", "[", "'x'",
        "\"a\u{1}b\"", "\"a\nb\"", "NaN", "Infinity",
    ])
    func invalidJSON(_ text: String) {
        #expect(jsonErrorCode(text) == "invalid_json")
    }

    @Test func aNULByteIsInvalidJSON() {
        #expect(jsonErrorCode([0x7B, 0x00, 0x7D]) == "invalid_json")
        #expect(jsonErrorCode(Array(#"{"command":"status"}"#.utf8) + [0]) == "invalid_json")
    }

    @Test(
        arguments: [
            [0x22, 0xFF, 0x22], [0xFF], [0x22, 0xC0, 0x80, 0x22], [0x22, 0x80, 0x22], [0x22, 0xE2, 0x82, 0x22],
            [0x22, 0xED, 0xA0, 0x80, 0x22],
        ] as [[UInt8]])
    func invalidUTF8(_ bytes: [UInt8]) {
        #expect(jsonErrorCode(bytes) == "invalid_utf8")
    }

    @Test func nestingUpTo32LevelsIsAccepted() throws {
        let arrays = String(repeating: "[", count: 32) + "1" + String(repeating: "]", count: 32)
        #expect(jsonErrorCode(arrays) == nil)
        let objects = String(repeating: #"{"a":"#, count: 32) + "null" + String(repeating: "}", count: 32)
        #expect(jsonErrorCode(objects) == nil)
        #expect(jsonErrorCode(String(repeating: "[", count: 32) + String(repeating: "]", count: 32)) == nil)
    }

    @Test func nesting33LevelsIsTooDeep() {
        #expect(jsonErrorCode(String(repeating: "[", count: 33) + String(repeating: "]", count: 33)) == "too_deep")
        let objects = String(repeating: #"{"a":"#, count: 33) + "1" + String(repeating: "}", count: 33)
        #expect(jsonErrorCode(objects) == "too_deep")
        // Hostile input: deep and unterminated, refused without exhausting the stack.
        #expect(jsonErrorCode(String(repeating: "[", count: 100_000)) == "too_deep")
    }

    @Test(arguments: ["1e400", "-1e400", "1E99999", #"{"command":"extend","duration":1e400}"#])
    func numberOutOfRange(_ text: String) {
        #expect(jsonErrorCode(text) == "number_out_of_range")
    }

    /// Finding 10: an integer past 64 bits is a number; the field it is given for refuses it
    /// with `out_of_range`, naming the field (it was "must be a whole number; got a number").
    @Test(arguments: ["99999999999999999999", "-99999999999999999999", "9223372036854775808"])
    func integersPast64BitsAreNumbers(_ text: String) throws {
        #expect(try JSON.parse(text) == .double(Double(text)!))
    }
}

extension String {
    /// The canonical printed form of the escape test input: `\u00e9` is printed as é.
    fileprivate func replacingEscapedE() -> String { replacing(#"\u00e9"#, with: "é") }

}
