import Foundation
import StrictJSON
import Testing

/// The parser's ways of reading strings, numbers and object keys: each gives what the
/// slow path would, and refuses the same things at the same place.
@Suite struct StrictJSONReadingTests {
    func parse(_ text: String) throws -> JSONValue {
        try StrictJSON.parse(Array(text.utf8), limits: .manifest, source: "test.json")
    }

    func rejection(_ text: String) -> StrictJSON.ParseError? { rejection(Array(text.utf8)) }

    func rejection(_ bytes: [UInt8]) -> StrictJSON.ParseError? {
        do {
            _ = try StrictJSON.parse(bytes, limits: .manifest, source: "test.json")
            return nil
        } catch {
            return (error as? StrictJSONError)?.underlying as? StrictJSON.ParseError
        }
    }

    /// An object of `count` members `k0`, `k1`…, then `tail` members as written.
    func object(_ count: Int, then tail: String = "") -> String {
        "{" + (0..<count).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + tail + "}"
    }

    /// Duplicates are found in small objects (a scan) and large ones (a set) alike, by
    /// canonical equivalence, at the second key's place.
    @Test(arguments: [1, 15, 16, 17, 40])
    func duplicateKeysAreRefusedInObjectsOfAnySize(members: Int) throws {
        let kept = try #require(try parse(object(members)).objectValue)
        #expect(kept.keys == (0..<members).map { "k\($0)" })
        let prefix = String(object(members, then: ",").dropLast())  // without the closing brace
        // (members before the duplicate, the duplicate, the key the error names)
        for (before, duplicate, key) in [
            ("", "\"k0\":1", "k0"),
            ("", "\"\\u006b0\":1", "k0"),
            ("", "\"k\(members - 1)\":1", "k\(members - 1)"),
            ("\"\u{E9}\":1,", "\"e\u{301}\":2", "e\u{301}"),
            ("\"K\":1,", "\"\u{212A}\":2", "\u{212A}"),
        ] {
            let error = try #require(rejection(prefix + before + duplicate + "}"), "\(members) \(key)")
            #expect(error.reason == "duplicate key \"\(key)\"")
            #expect(error.offset == (prefix + before).utf8.count, "\(members) \(key)")
            let distinct = prefix + before + duplicate.replacingOccurrences(of: "\":", with: "x\":") + "}"
            #expect(rejection(distinct) == nil, "\(distinct)")
        }
    }

    /// Strings read the same with and without escapes, wherever the escape stands.
    @Test func stringsReadTheSameWhereverTheEscapeStands() throws {
        #expect(try parse(#""plain""#) == .string("plain"))
        #expect(try parse(#""h\u00e9llo""#) == .string("héllo"))
        #expect(try parse("\"h\u{E9}llo \u{1F600}\"") == .string("héllo 😀"))
        #expect(try parse("\"\u{E9}t\u{E9}\\n\u{E9}t\u{E9}\"") == .string("été\nété"))
        #expect(try parse(#""\"quoted\" and \\ \/ \b\f\r\t""#) == .string("\"quoted\" and \\ / \u{8}\u{C}\r\t"))
        #expect(try parse(#""""#) == .string(""))
        #expect(try parse(#"{"\u0061pp":"x"}"#).objectValue?["app"] == .string("x"))
    }

    /// A bad byte in a string is refused at its own offset, before or after an escape.
    @Test func badBytesInStringsAreRefusedWhereTheyStand() throws {
        let control = try #require(rejection("[\"abc\u{1}\"]"))
        #expect(control.reason == "control character U+0001 in a string must be escaped" && control.offset == 5)
        let afterEscape = try #require(rejection("[\"a\\nbc\u{1}\"]"))
        #expect(afterEscape.offset == 7)
        let utf8 = try #require(rejection([0x5B, 0x22, 0x61, 0xC3, 0x28, 0x22, 0x5D]))
        #expect(utf8.reason == "invalid UTF-8 (byte 0x28 after 0xC3)" && utf8.offset == 3)
        let utf8AfterEscape = try #require(rejection([0x5B, 0x22, 0x5C, 0x74, 0xE0, 0x80, 0xAF, 0x22, 0x5D]))
        #expect(utf8AfterEscape.reason.hasPrefix("invalid UTF-8") && utf8AfterEscape.offset == 4)
        #expect(rejection("[\"abc")?.reason == "unterminated string")
        #expect(rejection("[\"a\\tb")?.reason == "unterminated string")
        #expect(rejection([0x22, 0x61, 0xE2, 0x82])?.reason == "invalid UTF-8 (truncated sequence)")
    }

    /// Integers up to 2⁵³−1 are exact at every length; past it (or with a fraction or an
    /// exponent) they are doubles.
    @Test func integersAreExactAtEveryLength() throws {
        var n: Int64 = 0
        for digit in 1...16 {
            n = n * 10 + Int64(digit % 10)
            let text = String(n)
            let expected: JSONValue = n <= JSONValue.maxSafeInteger ? .integer(n) : .double(Double(n))
            #expect(try parse(text) == expected, "\(text)")
            #expect(try parse("-" + text) == (n <= JSONValue.maxSafeInteger ? .integer(-n) : .double(-Double(n))), "-\(text)")
        }
        #expect(try parse("9007199254740991") == .integer(9_007_199_254_740_991))
        #expect(try parse("9007199254740992") == .double(9_007_199_254_740_992))
        #expect(try parse("9999999999999999") == .double(1e16))
        #expect(try parse("12345678901234567") == .double(12_345_678_901_234_567))
        #expect(try parse("-9007199254740992") == .double(-9_007_199_254_740_992))
        #expect(try parse("0") == .integer(0))
        #expect(try parse("-0") == .integer(0))
        #expect(try parse("10") == .integer(10))
        #expect(try parse("1.0") == .double(1))
        #expect(try parse("10e2") == .double(1000))
        #expect(try parse("[7,-8]") == .array([.integer(7), .integer(-8)]))
        #expect(rejection("-")?.reason == "invalid number: expected a digit")
        #expect(rejection("00")?.reason == "invalid number: leading zero")
        #expect(rejection("-01")?.reason == "invalid number: leading zero")
    }

    /// Literals are read whole.
    @Test func literalsAreReadWhole() throws {
        #expect(try parse("[true,false,null]") == .array([.bool(true), .bool(false), .null]))
        #expect(rejection("[fals]")?.reason == "invalid literal, expected 'false'")
        #expect(rejection("nul")?.reason == "invalid literal, expected 'null'")
        #expect(rejection("truex")?.reason.hasPrefix("trailing data") == true)
    }
}
