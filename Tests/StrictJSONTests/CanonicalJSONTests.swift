import Foundation
import StrictJSON
import Testing

@Suite struct CanonicalJSONTests {
    func canonical(_ text: String) throws -> String {
        String(decoding: CanonicalJSON.serialize(try StrictJSON.parse(Array(text.utf8))), as: UTF8.self)
    }

    /// RFC 8785 §3.2.2: the "numbers, string, literals" example.
    @Test func rfc8785MainExample() throws {
        let input = #"""
            {
              "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
              "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
              "literals": [null, true, false]
            }
            """#
        let expected = #"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        #expect(try canonical(input) == expected)
    }

    /// RFC 8785 §3.2.3: sorting by UTF-16 code units (control, digit, Latin-1, euro, emoji
    /// as a surrogate pair, Hebrew presentation form).
    @Test func rfc8785SortingExample() throws {
        let input = #"""
            {
              "\u20ac": "Euro Sign",
              "\r": "Carriage Return",
              "\ufb33": "Hebrew Letter Dalet With Dagesh",
              "1": "One",
              "\ud83d\ude00": "Emoji: Grinning Face",
              "\u0080": "Control",
              "\u00f6": "Latin Small Letter O With Diaeresis"
            }
            """#
        let expected =
            "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\","
            + "\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\u{FB33}\":\"Hebrew Letter Dalet With Dagesh\"}"
        #expect(try canonical(input) == expected)
        // The emoji (U+1F600, UTF-16 D83D DE00) sorts before U+FB33 although its scalar is larger.
        let keys = try canonical(input).unicodeScalars.filter { $0.value == 0x1F600 || $0.value == 0xFB33 }.map(\.value)
        #expect(keys == [0x1F600, 0xFB33])
    }

    /// RFC 8785 Appendix B style: ECMAScript number serialization from IEEE 754 bit patterns
    /// (expected strings as Node.js `String(x)` prints them).
    @Test(arguments: [
        (0x0000_0000_0000_0000 as UInt64, "0"), (0x8000_0000_0000_0000, "0"),
        (0x0000_0000_0000_0001, "5e-324"), (0x8000_0000_0000_0001, "-5e-324"),
        (0x7FEF_FFFF_FFFF_FFFF, "1.7976931348623157e+308"), (0xFFEF_FFFF_FFFF_FFFF, "-1.7976931348623157e+308"),
        (0x4340_0000_0000_0000, "9007199254740992"), (0xC340_0000_0000_0000, "-9007199254740992"),
        (0x4430_0000_0000_0000, "295147905179352830000"), (0x44B5_2D02_C7E1_4AF5, "9.999999999999997e+22"),
        (0x44B5_2D02_C7E1_4AF6, "1e+23"), (0x44B5_2D02_C7E1_4AF7, "1.0000000000000001e+23"),
        (0x444B_1AE4_D6E2_EF4F, "999999999999999900000"), (0x444B_1AE4_D6E2_EF50, "1e+21"),
        (0x3EB0_C6F7_A0B5_ED8C, "9.999999999999997e-7"), (0x3EB0_C6F7_A0B5_ED8D, "0.000001"),
        (0x41B3_DE43_5555_5553, "333333333.3333332"), (0x41B3_DE43_5555_5554, "333333333.33333325"),
        (0x41B3_DE43_5555_5555, "333333333.3333333"), (0x4415_AF1D_78B5_8C3F, "99999999999999980000"),
        (0x4415_AF1D_78B5_8C40, "100000000000000000000"), (0x4630_0000_0000_0000, "1.2676506002282294e+30"),
        (0x3C00_0000_0000_0000, "1.0842021724855044e-19"),
    ])
    func rfc8785NumberSerialization(bits: UInt64, expected: String) {
        #expect(CanonicalJSON.formatNumber(Double(bitPattern: bits)) == expected)
    }

    @Test func stringsAreEscapedMinimally() throws {
        // Only ", \, and C0 controls are escaped; '/', DEL and non-ASCII stay literal.
        let value = JSONValue.string("\"\\/\u{08}\u{0C}\n\r\t\u{01}\u{1F}\u{7F}é😀\u{2028}")
        let text = String(decoding: CanonicalJSON.serialize(value), as: UTF8.self)
        #expect(text == "\"\\\"\\\\/\\b\\f\\n\\r\\t\\u0001\\u001f\u{7F}é😀\u{2028}\"")
    }

    @Test func integersPrintPlainlyAndNestedObjectsAreSorted() throws {
        #expect(
            try canonical(#"{"z": 1, "a": [ {"y": -42, "b": 0} ], "m": 9007199254740991}"#)
                == #"{"a":[{"b":0,"y":-42}],"m":9007199254740991,"z":1}"#)
        #expect(try canonical("{}") == "{}")
        // An integer beyond 2⁵³ built in code prints as the double JCS would see.
        #expect(CanonicalJSON.serialize(.integer(9_007_199_254_740_993)) == Array("9007199254740992".utf8))
        #expect(try canonical("[ ]") == "[]")
    }

    @Test func prettyOutputParsesBackToTheSameValue() throws {
        let value = try StrictJSON.parse(Array(#"{"b": [1, {"c": "\u0000x"}], "a": {}, "d": []}"#.utf8))
        let pretty = JSONPrettyPrinter.render(value)
        #expect(try StrictJSON.parse(pretty) == value)
        #expect(String(decoding: pretty, as: UTF8.self).hasPrefix("{\n  \"b\": [\n    1,"))
    }
}
