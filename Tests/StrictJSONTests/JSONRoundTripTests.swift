import Foundation
import StrictJSON
import Testing

/// Generated documents: canonical and pretty output always parse back to the same value,
/// canonicalization is idempotent, and truncated or bit-flipped input never crashes the
/// parser (it either parses or throws a positioned error).
@Suite struct JSONRoundTripTests {
    struct SplitMix64: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let alphabet: [Character] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\u{01}", "\u{7F}", "é", "€", "😀", "\u{FB33}", "\u{2028}"]

    func string(_ rng: inout SplitMix64) -> String {
        String((0..<Int.random(in: 0...6, using: &rng)).map { _ in Self.alphabet.randomElement(using: &rng) ?? "a" })
    }

    func value(_ rng: inout SplitMix64, depth: Int) -> JSONValue {
        switch Int.random(in: 0...(depth > 3 ? 4 : 6), using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2: return .integer(Int64.random(in: -JSONValue.maxSafeInteger...JSONValue.maxSafeInteger, using: &rng))
        case 3:
            let d = Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &rng))
            return d.isFinite ? .double(d) : .double(0.5)
        case 4: return .string(string(&rng))
        case 5: return .array((0..<Int.random(in: 0...4, using: &rng)).map { _ in value(&rng, depth: depth + 1) })
        default:
            var o = JSONObject()
            for _ in 0..<Int.random(in: 0...4, using: &rng) { o[string(&rng) + "\(o.count)"] = value(&rng, depth: depth + 1) }
            return .object(o)
        }
    }

    @Test func canonicalAndPrettyOutputRoundTrip() throws {
        var rng = SplitMix64(state: 20_261_122)
        for _ in 0..<300 {
            let v = value(&rng, depth: 0)
            let canonical = CanonicalJSON.serialize(v)
            let parsed = try StrictJSON.parse(canonical, limits: .index)
            #expect(roughlyEqual(parsed, v))
            #expect(CanonicalJSON.serialize(parsed) == canonical)
            #expect(CanonicalJSON.serialize(try StrictJSON.parse(JSONPrettyPrinter.render(v), limits: .index)) == canonical)
        }
    }

    @Test func damagedInputNeverCrashes() throws {
        var rng = SplitMix64(state: 7)
        let sample = Array(JSONPrettyPrinter.render(.object(["a": .array([.integer(1), .string("é😀"), .double(2.5)]), "b": .null])))
        for _ in 0..<2_000 {
            var bytes = sample
            switch Int.random(in: 0...2, using: &rng) {
            case 0: bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &rng)))
            case 1: bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= UInt8(1 << Int.random(in: 0...7, using: &rng))
            default: bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
            do {
                _ = try StrictJSON.parse(bytes)
            } catch let error as StrictJSONError {
                let position = try #require(error.underlying as? StrictJSON.ParseError)
                #expect(position.offset <= bytes.count)
            }
        }
    }

    /// Integers written as doubles (`2.0` → `.double(2)`) canonicalize to `2` and parse back
    /// as integers: same canonical bytes, other case. Compare by canonical bytes there.
    func roughlyEqual(_ a: JSONValue, _ b: JSONValue) -> Bool {
        a == b || CanonicalJSON.serialize(a) == CanonicalJSON.serialize(b)
    }
}
