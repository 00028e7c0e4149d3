import Foundation

/// The recursive-descent parser behind ``StrictJSON``: one pass over the bytes, positions
/// kept for error messages.
extension StrictJSON {
    struct Parser {
        let bytes: [UInt8]
        let maxDepth: Int
        var i = 0

        init(bytes: [UInt8], maxDepth: Int) {
            self.bytes = bytes
            self.maxDepth = maxDepth
        }

        func fail(_ reason: String, at offset: Int? = nil) -> Failure {
            Failure(offset: offset ?? i, reason: reason)
        }

        mutating func document() throws -> JSONValue {
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { throw fail("byte order mark is not allowed") }
            skipWhitespace()
            guard i < bytes.count else { throw fail("empty document") }
            let value = try parseValue(depth: 0)
            skipWhitespace()
            guard i == bytes.count else { throw fail("trailing data after the JSON value (\(describe(bytes[i])))") }
            return value
        }

        mutating func skipWhitespace() {
            while i < bytes.count {
                switch bytes[i] {
                case 0x20, 0x09, 0x0A, 0x0D: i += 1
                default: return
                }
            }
        }

        func describe(_ b: UInt8) -> String {
            if b >= 0x21 && b < 0x7F { return "'\(Character(Unicode.Scalar(b)))'" }
            return String(format: "byte 0x%02X", b)
        }

        mutating func parseValue(depth: Int) throws -> JSONValue {
            guard i < bytes.count else { throw fail("unexpected end of input, expected a value") }
            switch bytes[i] {
            case UInt8(ascii: "{"): return .object(try parseObject(depth: depth + 1))
            case UInt8(ascii: "["): return .array(try parseArray(depth: depth + 1))
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
            default: throw fail("unexpected \(describe(bytes[i])), expected a value")
            }
        }

        mutating func literal(_ word: StaticString) throws {
            let count = word.utf8CodeUnitCount
            let matches = bytes.count - i >= count && word.withUTF8Buffer { w in w.elementsEqual(bytes[i..<i + count]) }
            guard matches else { throw fail("invalid literal, expected '\(word)'") }
            i += count
        }

        mutating func parseObject(depth: Int) throws -> JSONObject {
            guard depth <= maxDepth else { throw fail("nesting deeper than \(maxDepth) levels") }
            i += 1
            var object = JSONObject()
            // The keys read so far, once the object has more than `linearKeys` members: up to
            // that, a scan of the members is cheaper than hashing every key.
            var seen: Set<String>?
            skipWhitespace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
                i += 1
                return object
            }
            object.reserveCapacity(Self.reservedMembers)
            while true {
                skipWhitespace()
                guard i < bytes.count else { throw fail("unexpected end of input in object") }
                guard bytes[i] == UInt8(ascii: "\"") else { throw fail("unexpected \(describe(bytes[i])), expected a member name string") }
                let keyOffset = i
                let key = try parseString()
                // Swift String equality is canonical equivalence: this also refuses two keys
                // that differ only in Unicode normalization (the scan and the set alike).
                if var keys = seen {
                    seen = nil
                    let inserted = keys.insert(key).inserted
                    seen = keys
                    guard inserted else { throw fail("duplicate key \"\(key)\"", at: keyOffset) }
                } else {
                    guard !object.members.contains(where: { $0.key == key }) else {
                        throw fail("duplicate key \"\(key)\"", at: keyOffset)
                    }
                    if object.members.count == Self.linearKeys {
                        var keys = Set(object.members.lazy.map(\.key))
                        keys.insert(key)
                        seen = keys
                    }
                }
                skipWhitespace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':' after member name \"\(key)\"") }
                i += 1
                skipWhitespace()
                let value = try parseValue(depth: depth)
                object.appendUnchecked(key, value)
                skipWhitespace()
                guard i < bytes.count else { throw fail("unexpected end of input in object") }
                if bytes[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                guard bytes[i] == UInt8(ascii: "}") else { throw fail("unexpected \(describe(bytes[i])), expected ',' or '}'") }
                i += 1
                return object
            }
        }

        /// Up to this many members, an object's keys are checked for duplicates by a scan.
        static let linearKeys = 16
        /// Room made for a non-empty object's members at once (a report has 4 to 15): one
        /// allocation instead of growing 1, 2, 4, 8, yet little unused in a large document's
        /// many small objects.
        static let reservedMembers = 8

        mutating func parseArray(depth: Int) throws -> [JSONValue] {
            guard depth <= maxDepth else { throw fail("nesting deeper than \(maxDepth) levels") }
            i += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
                i += 1
                return elements
            }
            while true {
                skipWhitespace()
                elements.append(try parseValue(depth: depth))
                skipWhitespace()
                guard i < bytes.count else { throw fail("unexpected end of input in array") }
                if bytes[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                guard bytes[i] == UInt8(ascii: "]") else { throw fail("unexpected \(describe(bytes[i])), expected ',' or ']'") }
                i += 1
                return elements
            }
        }

        mutating func parseNumber() throws -> JSONValue {
            let start = i
            var isInteger = true
            let negative = bytes[i] == UInt8(ascii: "-")
            if negative { i += 1 }
            guard i < bytes.count, isDigit(bytes[i]) else { throw fail("invalid number: expected a digit") }
            let digitsStart = i
            // The integer part's value, exact while it has at most 16 digits (< 2⁶³).
            var magnitude: Int64 = 0
            if bytes[i] == UInt8(ascii: "0") {
                i += 1
                if i < bytes.count, isDigit(bytes[i]) { throw fail("invalid number: leading zero") }
            } else {
                while i < bytes.count, isDigit(bytes[i]) {
                    if i - digitsStart < 16 { magnitude = magnitude &* 10 &+ Int64(bytes[i] &- 0x30) }
                    i += 1
                }
            }
            if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
                isInteger = false
                i += 1
                guard i < bytes.count, isDigit(bytes[i]) else { throw fail("invalid number: expected a digit after '.'") }
                while i < bytes.count, isDigit(bytes[i]) { i += 1 }
            }
            if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
                isInteger = false
                i += 1
                if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
                guard i < bytes.count, isDigit(bytes[i]) else { throw fail("invalid number: expected a digit in the exponent") }
                while i < bytes.count, isDigit(bytes[i]) { i += 1 }
            }
            // The common case without making text: what `Int64(text)` gives, within the range.
            if isInteger, i - digitsStart <= 16, magnitude <= JSONValue.maxSafeInteger {
                return .integer(negative ? -magnitude : magnitude)
            }
            let text = String(decoding: bytes[start..<i], as: UTF8.self)
            // Integers within ±(2⁵³−1) are exact; larger ones are read as IEEE doubles, as
            // RFC 8785 does (its canonical output writes doubles below 1e21 without exponent).
            if isInteger, let n = Int64(text), n.magnitude <= JSONValue.maxSafeInteger.magnitude {
                return .integer(n)
            }
            guard let d = Double(text), d.isFinite else { throw fail("number \(text) is out of range", at: start) }
            return .double(d)
        }

        func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

        mutating func parseString() throws -> String {
            i += 1
            let start = i
            // Without escapes (most strings), the String is made once from the checked bytes.
            while i < bytes.count {
                let b = bytes[i]
                switch b {
                case UInt8(ascii: "\""):
                    let text = String(decoding: bytes[start..<i], as: UTF8.self)
                    i += 1
                    return text
                case UInt8(ascii: "\\"):
                    var out = Array(bytes[start..<i])
                    return try parseEscapedString(into: &out)
                case 0x00..<0x20:
                    throw fail(String(format: "control character U+%04X in a string must be escaped", b))
                case 0x80...:
                    i += try utf8SequenceLength()
                default:
                    i += 1
                }
            }
            throw fail("unterminated string")
        }

        /// The rest of a string from its first escape on, `out` holding what came before.
        mutating func parseEscapedString(into out: inout [UInt8]) throws -> String {
            while true {
                guard i < bytes.count else { throw fail("unterminated string") }
                let b = bytes[i]
                switch b {
                case UInt8(ascii: "\""):
                    i += 1
                    return String(decoding: out, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    try parseEscape(into: &out)
                case 0x00..<0x20:
                    throw fail(String(format: "control character U+%04X in a string must be escaped", b))
                case 0x80...:
                    try copyUTF8Sequence(into: &out)
                default:
                    out.append(b)
                    i += 1
                }
            }
        }

        mutating func parseEscape(into out: inout [UInt8]) throws {
            let start = i
            i += 1
            guard i < bytes.count else { throw fail("unterminated escape") }
            let c = bytes[i]
            i += 1
            switch c {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                let unit = try hex4()
                var scalarValue = UInt32(unit)
                if (0xD800...0xDBFF).contains(unit) {
                    guard bytes.count - i >= 6, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                        throw fail(String(format: "lone high surrogate \\u%04X", unit), at: start)
                    }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else {
                        throw fail(String(format: "high surrogate \\u%04X not followed by a low surrogate", unit), at: start)
                    }
                    scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(unit) {
                    throw fail(String(format: "lone low surrogate \\u%04X", unit), at: start)
                }
                guard let scalar = Unicode.Scalar(scalarValue) else { throw fail("invalid \\u escape", at: start) }
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
            default:
                throw fail("invalid escape after '\\': \(describe(c))", at: start)
            }
        }

        mutating func hex4() throws -> UInt16 {
            guard bytes.count - i >= 4 else { throw fail("truncated \\u escape") }
            var v: UInt16 = 0
            for _ in 0..<4 {
                let b = bytes[i]
                let d: UInt8
                switch b {
                case 0x30...0x39: d = b - 0x30
                case 0x41...0x46: d = b - 0x41 + 10
                case 0x61...0x66: d = b - 0x61 + 10
                default: throw fail("invalid hex digit \(describe(b)) in \\u escape")
                }
                v = v << 4 | UInt16(d)
                i += 1
            }
            return v
        }

        /// Validates one UTF-8 sequence (Unicode Table 3-7) and copies it.
        mutating func copyUTF8Sequence(into out: inout [UInt8]) throws {
            let length = try utf8SequenceLength()
            out.append(contentsOf: bytes[i..<i + length])
            i += length
        }

        /// Validates the UTF-8 sequence at `i` (Unicode Table 3-7): its length in bytes.
        func utf8SequenceLength() throws -> Int {
            let lead = bytes[i]
            let length: Int
            var secondRange: ClosedRange<UInt8> = 0x80...0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0:
                length = 3
                secondRange = 0xA0...0xBF
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED:
                length = 3
                secondRange = 0x80...0x9F
            case 0xF0:
                length = 4
                secondRange = 0x90...0xBF
            case 0xF1...0xF3: length = 4
            case 0xF4:
                length = 4
                secondRange = 0x80...0x8F
            default: throw fail(String(format: "invalid UTF-8 (byte 0x%02X)", lead))
            }
            guard bytes.count - i >= length else { throw fail("invalid UTF-8 (truncated sequence)") }
            guard secondRange.contains(bytes[i + 1]) else {
                throw fail(String(format: "invalid UTF-8 (byte 0x%02X after 0x%02X)", bytes[i + 1], lead))
            }
            for k in 2..<max(2, length) where !(0x80...0xBF).contains(bytes[i + k]) {
                throw fail(String(format: "invalid UTF-8 (byte 0x%02X in a sequence)", bytes[i + k]))
            }
            return length
        }
    }
}
