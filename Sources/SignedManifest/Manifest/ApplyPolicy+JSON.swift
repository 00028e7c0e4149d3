import ApplyPolicy
import Foundation
import StrictJSON

extension ApplyPolicy {
    /// Reads the `apply` member of a signed document (docs/formats.md#apply):
    /// `{"mode": …, "idleSeconds": …, "deadline": …, "graceSeconds": …}`.
    ///
    /// Lenient only where a newer publisher may say more: an unknown mode reads as
    /// `next-start` (its text kept), unknown members are ignored (they are signed all the
    /// same). A known member of the wrong type or out of range is refused.
    /// - Throws: ``ManifestRejection`` naming `field` and why.
    package static func read(_ value: JSONValue, field: String) throws -> ApplyPolicy {
        guard case .object(let o) = value else {
            throw ManifestRejection(.wrongType, field: field, "field '\(field)' must be an object, got \(value.typeName)")
        }
        func string(_ key: String) throws -> String? {
            guard let v = o[key] else { return nil }
            guard case .string(let s) = v else {
                throw ManifestRejection(.wrongType, field: field, "field '\(field).\(key)' must be a string, got \(v.typeName)")
            }
            return s
        }
        func integer(_ key: String) throws -> Int? {
            guard let v = o[key] else { return nil }
            guard case .integer(let n) = v, let small = Int(exactly: n) else {
                throw ManifestRejection(.wrongType, field: field, "field '\(field).\(key)' must be an integer, got \(v.typeName)")
            }
            return small
        }
        guard let mode = try string("mode") else {
            throw ManifestRejection(.missingField, field: field, "field '\(field)' has no 'mode'")
        }
        do {
            return try ApplyPolicy.received(
                mode: mode, idleSeconds: try integer("idleSeconds"), deadline: try string("deadline"),
                graceSeconds: try integer("graceSeconds"))
        } catch let error as ApplyPolicyError {
            throw ManifestRejection(.invalidValue, field: field, "field '\(field)': \(error.message)")
        }
    }

    /// The policy as the `apply` member of a signed document: `mode` (an unknown received
    /// mode's own text), `idleSeconds` and `deadline` when set, `graceSeconds`.
    package var jsonValue: JSONValue {
        var o = JSONObject()
        o["mode"] = .string(unknownMode ?? mode.rawValue)
        if let idleSeconds { o["idleSeconds"] = .integer(Int64(idleSeconds)) }
        if let deadline { o["deadline"] = .string(RFC3339Time.string(from: deadline)) }
        o["graceSeconds"] = .integer(Int64(graceSeconds))
        return .object(o)
    }
}
