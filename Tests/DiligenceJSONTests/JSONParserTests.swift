import DiligenceJSON
import DiligenceTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The parser's shortcuts must answer exactly what the plain way does: bytes read in place
/// from a slice, UTF-8 checked eight ASCII bytes at a time, decimals read without a String.
@Suite struct JSONParserTests {
    @Test func aSliceOfALargerBufferIsReadInPlaceAndSoIsAnythingElse() throws {
        let lines = Array(#"{"a":[1,2.5,"x"]}"#.utf8) + [0x0A] + Array(#"{"b":{"c":null}} x"#.utf8)
        let newline = try #require(lines.firstIndex(of: 0x0A))
        #expect(try JSON.parse(lines[..<newline]) == JSON.parse(Array(lines[..<newline])))
        #expect(try JSON.parse(lines[..<newline]).serialized == #"{"a":[1,2.5,"x"]}"#)
        // A slice that does not begin at 0 counts its bytes from its own start.
        let second = lines[(newline + 1)...]
        let error = #expect(throws: JSONParseError.self) { try JSON.parse(second) }
        #expect(error?.message == "Not valid JSON: unexpected text after the value at byte 18.")
        // A collection without contiguous storage is read from a copy.
        #expect(try JSON.parse(lines[..<newline].lazy.map { $0 }) == JSON.parse(lines[..<newline]))
    }

    /// Random strings of bytes that start, continue or break UTF-8 sequences, around runs of
    /// ASCII longer than eight bytes: refused as `String(validating:)` refuses them, a NUL
    /// anywhere first.
    @Test func utf8IsCheckedAsTheStandardLibraryChecksIt() throws {
        var random = SeededRandom(seed: 16)
        let pieces: [[UInt8]] = [
            Array("plain ascii text".utf8), [0x61], [0x00], [0x80], [0xBF], [0xC0], [0xC1], [0xC2], [0xDF], [0xE0], [0xE0, 0xA0],
            [0xED], [0xED, 0x9F], [0xED, 0xA0], [0xEF], [0xF0], [0xF0, 0x90], [0xF4], [0xF4, 0x8F], [0xF4, 0x90], [0xF5], [0xFF],
            Array("é€😀".utf8),
        ]
        for _ in 0..<5_000 {
            var body: [UInt8] = []
            for _ in 0..<Int.random(in: 1...8, using: &random) { body += pieces.randomElement(using: &random)! }
            let text = [0x22] + body + [0x22]
            let expected: String? =
                body.contains(0) ? "invalid_json" : String(validating: body, as: UTF8.self) == nil ? "invalid_utf8" : nil
            #expect(jsonErrorCode(text) == expected, "\(body)")
            if expected == nil { #expect(try JSON.parse(text) == .string(String(decoding: body, as: UTF8.self))) }
        }
    }

    /// Decimals with a fraction or an exponent, short and long, in range and out, each the
    /// Double `Double(text)` makes of it, to the bit and the sign of zero.
    @Test func decimalsAreTheDoublesTheirTextMeans() throws {
        var random = SeededRandom(seed: 53)
        var texts = [
            "1764567862.25", "0.1", "-0.0", "0.0e5", "1e22", "1e23", "1e-22", "1e-23", "9007199254740992.0", "9007199254740993.0",
            "123456789012345678e-22", "1234567890123456789.5", "4.9406564584124654e-324", "1.7976931348623157e308", "2.5E+3",
            "1e0001", "7e-0",
        ]
        for _ in 0..<20_000 {
            let digits = (0..<Int.random(in: 1...20, using: &random)).map { _ in String(Int.random(in: 0...9, using: &random)) }
            var text = (Bool.random(using: &random) ? "-" : "") + (digits.count > 1 && digits[0] == "0" ? "1" : digits[0])
            let split = Int.random(in: 1...digits.count, using: &random)
            text += digits[1..<split].joined()
            let fraction = split < digits.count || Bool.random(using: &random)
            if fraction { text += "." + (split < digits.count ? digits[split...].joined() : "0") }
            // A fraction, an exponent or both: else it is an integer.
            if !fraction || Bool.random(using: &random) { text += "e" + String(Int.random(in: -40...40, using: &random)) }
            texts.append(text)
        }
        for text in texts {
            let expected = try #require(Double(text))
            let parsed = try JSON.parse(text)
            guard case .double(let value) = parsed else {
                Issue.record("\(text) parsed as \(parsed)")
                continue
            }
            #expect(value.bitPattern == expected.bitPattern, "\(text): \(value) instead of \(expected)")
        }
    }
}
