import StrictJSON
@testable import SignedManifest

/// Strict JSON (duplicate keys, depth, trailing data, caps): whatever it accepts must
/// survive parse → canonical print → parse with the same value.
enum StrictJSONTarget: FuzzTarget {
    static let name = "strict-json"

    static func run(_ data: [UInt8]) {
        guard let value = try? StrictJSON.parse(data, limits: .manifest) else { return }
        let printed = CanonicalJSON.serialize(value)
        let again: JSONValue
        do {
            again = try StrictJSON.parse(printed, limits: StrictJSON.Limits(maxBytes: 1 << 20, maxDepth: 32))
        } catch {
            FuzzFinding.fail(name, "canonical form of an accepted document is refused: \(error)")
        }
        guard JSONSemantics.same(value, again) else {
            FuzzFinding.fail(name, "parse → canonical → parse changed the value")
        }
    }
}
