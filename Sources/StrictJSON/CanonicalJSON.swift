/// RFC 8785 JSON Canonicalization Scheme (JCS): the exact bytes a manifest signature covers.
///
/// - Object members are sorted by their keys' UTF-16 code units, recursively; no whitespace.
/// - Strings are escaped minimally: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other
///   control characters as `\u00xx` (lowercase hex); everything else, including `/`, DEL
///   and all non-ASCII text, is written as UTF-8 as is.
/// - Integers (``JSONValue/integer(_:)``, limited to ±(2⁵³−1) by ``StrictJSON``) print as
///   plain decimals, which is exactly what ECMAScript prints for them.
/// - Other numbers (``JSONValue/double(_:)``) print as ECMAScript's `Number.prototype.toString`
///   does (RFC 8785 §3.2.2.3): shortest round-trip digits, exponent form below 1e-6 and
///   from 1e21. Manifests of format `signed-client-v1` only carry strings and integers;
///   doubles are supported so that unknown fields added by later writers still canonicalize
///   the way other JCS implementations do.
package enum CanonicalJSON {
    /// The canonical UTF-8 bytes of `value`.
    package static func serialize(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        write(value, into: &out)
        return out
    }

    /// The canonical bytes of an object.
    package static func serialize(_ object: JSONObject) -> [UInt8] {
        serialize(.object(object))
    }

    static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: Array("null".utf8))
        case .bool(let b): out.append(contentsOf: Array((b ? "true" : "false").utf8))
        case .integer(let n) where n.magnitude <= JSONValue.maxSafeInteger.magnitude:
            out.append(contentsOf: Array(String(n).utf8))
        case .integer(let n):
            // Only built in code, never parsed: JCS numbers are doubles, so print it as one.
            out.append(contentsOf: Array(formatNumber(Double(n)).utf8))
        case .double(let d): out.append(contentsOf: Array(formatNumber(d).utf8))
        case .string(let s): writeString(s, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (k, e) in elements.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                write(e, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            let sorted = object.members.sorted { Array($0.key.utf16).lexicographicallyPrecedes(Array($1.key.utf16)) }
            for (k, m) in sorted.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                writeString(m.key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(m.value, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Writes a JSON string literal with RFC 8785's minimal escaping.
    static func writeString(_ s: String, into out: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            switch b {
            case 0x22: out.append(contentsOf: [0x5C, 0x22])
            case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
            case 0x08: out.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x0C: out.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x00..<0x20:
                out.append(contentsOf: Array("\\u00".utf8))
                out.append(hex[Int(b >> 4)])
                out.append(hex[Int(b & 0x0F)])
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Formats a finite double as ECMAScript's `Number.prototype.toString` (radix 10).
    ///
    /// Swift's `description` already yields the shortest digits that round-trip (closest
    /// to the exact value when several qualify), as ECMAScript requires; only the layout
    /// differs, so the digits and exponent are re-laid out by ECMAScript's rules.
    package static func formatNumber(_ value: Double) -> String {
        precondition(value.isFinite, "JSON numbers are finite")
        if value == 0 { return "0" }
        let negative = value < 0
        let text = value.magnitude.description
        var mantissa = Substring(text)
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = text[..<e]
            exponent = Int(String(text[text.index(after: e)...].filter { $0 != "+" })) ?? 0
        }
        let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
        let intPart = parts[0]
        let fracPart = parts.count > 1 ? parts[1] : ""
        var digits = Array(intPart + fracPart)
        var n = intPart.count + exponent
        while digits.first == "0" {
            digits.removeFirst()
            n -= 1
        }
        while digits.last == "0" { digits.removeLast() }
        let k = digits.count
        let d = String(digits)
        var result: String
        if k <= n && n <= 21 {
            result = d + String(repeating: "0", count: n - k)
        } else if 0 < n && n <= 21 {
            result = String(digits[0..<n]) + "." + String(digits[n...])
        } else if -6 < n && n <= 0 {
            result = "0." + String(repeating: "0", count: -n) + d
        } else {
            let e = n - 1
            let sign = e < 0 ? "-" : "+"
            result = k == 1 ? d : String(digits[0]) + "." + String(digits[1...])
            result += "e" + sign + String(e.magnitude)
        }
        return negative ? "-" + result : result
    }
}
