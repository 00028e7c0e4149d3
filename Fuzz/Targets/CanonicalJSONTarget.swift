import StrictJSON
@testable import SignedManifest

/// RFC 8785 canonical JSON: printing is idempotent (canonical bytes re-parsed and printed
/// again are the same bytes) and object keys come out sorted by UTF-16 code units.
enum CanonicalJSONTarget: FuzzTarget {
    static let name = "canonical-json"

    static func run(_ data: [UInt8]) {
        guard let value = try? StrictJSON.parse(data, limits: .manifest) else { return }
        let first = CanonicalJSON.serialize(value)
        guard let reparsed = try? StrictJSON.parse(first, limits: StrictJSON.Limits(maxBytes: 1 << 20, maxDepth: 32)) else {
            FuzzFinding.fail(name, "canonical bytes do not parse")
        }
        guard CanonicalJSON.serialize(reparsed) == first else {
            FuzzFinding.fail(name, "canonical JSON is not idempotent")
        }
        checkSorted(reparsed)
    }

    private static func checkSorted(_ value: JSONValue) {
        switch value {
        case .object(let object):
            let keys = object.keys.map { Array($0.utf16) }
            for (a, b) in zip(keys, keys.dropFirst()) where !a.lexicographicallyPrecedes(b) {
                FuzzFinding.fail(name, "object keys not in UTF-16 order")
            }
            for member in object.members { checkSorted(member.value) }
        case .array(let items): items.forEach(checkSorted)
        default: break
        }
    }
}
