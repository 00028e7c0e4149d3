import Foundation
import StrictJSON
import Testing

@Suite struct StrictJSONTests {
    func parse(_ text: String, limits: StrictJSON.Limits = .manifest) throws -> JSONValue {
        try StrictJSON.parse(Array(text.utf8), limits: limits, source: "test.json")
    }

    func rejection(_ bytes: [UInt8], limits: StrictJSON.Limits = .manifest) -> StrictJSON.ParseError? {
        do {
            _ = try StrictJSON.parse(bytes, limits: limits, source: "test.json")
            return nil
        } catch let error as StrictJSONError {
            #expect(error.code == .malformedJSON)
            #expect(error.message.hasPrefix("test.json: "))
            #expect(error.kind == .dataError)
            return error.underlying as? StrictJSON.ParseError
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    func rejection(_ text: String) -> StrictJSON.ParseError? { rejection(Array(text.utf8)) }

    @Test func parsesEveryKindOfValueAndKeepsKeyOrder() throws {
        let v = try parse(#" {"b": [1, -2, 0, 2.5, -1e3], "a": {"x": null, "y": true, "z": false}, "s": "h\u00e9\n\ud83d\ude00/"} "#)
        let o = try #require(v.objectValue)
        #expect(o.keys == ["b", "a", "s"])
        #expect(o["b"] == .array([.integer(1), .integer(-2), .integer(0), .double(2.5), .double(-1000)]))
        #expect(o["a"] == .object(["x": .null, "y": .bool(true), "z": .bool(false)]))
        #expect(o["s"] == .string("hé\n😀/"))
    }

    @Test func integersAreExactWithinTheIJSONRange() throws {
        #expect(try parse("9007199254740991") == .integer(9_007_199_254_740_991))
        #expect(try parse("-9007199254740991") == .integer(-9_007_199_254_740_991))
        #expect(try parse("-0") == .integer(0))
        // Beyond ±(2⁵³−1) numbers are doubles, as RFC 8785 reads them.
        #expect(try parse("9007199254740993") == .double(9_007_199_254_740_992))
        #expect(try parse("123456789012345678901234567890") == .double(1.2345678901234568e29))
        #expect(rejection("1" + String(repeating: "0", count: 400))?.reason.contains("out of range") == true)
    }

    @Test func duplicateKeysAreRejectedWithTheirPosition() throws {
        let e = try #require(rejection("{\n  \"app\": \"a\",\n  \"app\": \"b\"\n}"))
        #expect(e.reason == "duplicate key \"app\"")
        #expect(e.line == 3)
        #expect(e.column == 3)
        // Escaped spelling of the same key and canonically equivalent Unicode count too.
        #expect(rejection(#"{"app": 1, "\u0061pp": 2}"#)?.reason.hasPrefix("duplicate key") == true)
        #expect(rejection("{\"\u{E9}\": 1, \"e\u{301}\": 2}")?.reason.hasPrefix("duplicate key") == true)
        // Nested objects have their own key space.
        #expect(try parse(#"{"a": {"a": 1}}"#).objectValue?.count == 1)
    }

    @Test func trailingDataIsRejected() {
        #expect(rejection(#"{"a": 1} {"a": 2}"#)?.reason.hasPrefix("trailing data") == true)
        #expect(rejection(#"{"a": 1},"#)?.offset == 8)
        #expect(rejection("1 2") != nil)
    }

    @Test func nestingDeeperThanTheLimitIsRejected() throws {
        let ok = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        #expect(try parse(ok).arrayValue != nil)
        let deep = String(repeating: "[", count: 33) + String(repeating: "]", count: 33)
        #expect(rejection(deep)?.reason == "nesting deeper than 32 levels")
        let objects = String(repeating: #"{"a":"#, count: 40) + "1" + String(repeating: "}", count: 40)
        #expect(rejection(objects)?.reason == "nesting deeper than 32 levels")
    }

    @Test func documentsOverTheSizeCapAreRejected() {
        let big = Array("\"\(String(repeating: "x", count: 70_000))\"".utf8)
        #expect(rejection(big)?.reason.contains("65536-byte limit") == true)
        #expect(rejection(Array("[1]".utf8), limits: StrictJSON.Limits(maxBytes: 2))?.reason.contains("limit") == true)
    }

    @Test func invalidUTF8IsRejected() {
        let cases: [[UInt8]] = [
            [0x22, 0xC3, 0x22],  // truncated two-byte sequence
            [0x22, 0xC0, 0xAF, 0x22],  // overlong '/'
            [0x22, 0xE0, 0x80, 0xAF, 0x22],  // overlong three-byte
            [0x22, 0xED, 0xA0, 0x80, 0x22],  // UTF-8 encoded surrogate U+D800
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // above U+10FFFF
            [0x22, 0xFF, 0x22],
            [0x22, 0x80, 0x22],  // lone continuation byte
        ]
        for bytes in cases {
            #expect(rejection(bytes)?.reason.hasPrefix("invalid UTF-8") == true, "\(bytes)")
        }
        #expect(rejection([0xEF, 0xBB, 0xBF, 0x7B, 0x7D])?.reason == "byte order mark is not allowed")
        #expect(rejection([0x7B, 0xC3, 0xA9, 0x7D]) != nil)  // non-ASCII outside a string
    }

    @Test func loneSurrogatesAreRejected() {
        #expect(rejection(#""\ud83d""#)?.reason == "lone high surrogate \\uD83D")
        #expect(rejection(#""\ud83dx""#)?.reason == "lone high surrogate \\uD83D")
        #expect(rejection(#""\ude00""#)?.reason == "lone low surrogate \\uDE00")
        #expect(rejection(#""\ud83d\u0041""#)?.reason.contains("not followed by a low surrogate") == true)
    }

    @Test func grammarErrorsSayWhatAndWhere() throws {
        #expect(rejection("")?.reason == "empty document")
        #expect(rejection(#"{"a" 1}"#)?.reason == "expected ':' after member name \"a\"")
        #expect(rejection(#"{"a": 1,}"#)?.reason == "unexpected '}', expected a member name string")
        #expect(rejection("[1,]")?.reason == "unexpected ']', expected a value")
        #expect(rejection("[01]")?.reason == "invalid number: leading zero")
        #expect(rejection("[1.]") != nil)
        #expect(rejection("[.5]") != nil)
        #expect(rejection("[+1]") != nil)
        #expect(rejection("[NaN]") != nil)
        #expect(rejection("[tru]")?.reason == "invalid literal, expected 'true'")
        #expect(rejection("\"a\tb\"")?.reason == "control character U+0009 in a string must be escaped")
        #expect(rejection(#""\x""#)?.reason == #"invalid escape after '\': 'x'"#)
        #expect(rejection(#""\u12G4""#) != nil)
        #expect(rejection(#"{"a": "open"#)?.reason == "unterminated string")
        #expect(rejection("[1e999]")?.reason.contains("out of range") == true)
        let e = try #require(rejection("{\n\"a\": x}"))
        #expect((e.line, e.column, e.offset) == (2, 6, 7))
    }

    @Test func parseObjectRequiresAnObject() {
        #expect(throws: StrictJSONError.self) { try StrictJSON.parseObject(Array("[]".utf8)) }
    }
}
