import ClientFoundation
import Foundation
import StrictJSON

/// One signature of a signed document (a manifest or a trust root): the signer's key id
/// and the 64 Ed25519 bytes over the document's canonical bytes.
public struct DocumentSignature: Sendable, Equatable {
    /// First 16 hex of SHA-256 over the signer's DER SubjectPublicKeyInfo.
    public var keyId: String
    /// The Ed25519 signature bytes (64).
    public var signature: [UInt8]

    public init(keyId: String, signature: [UInt8]) {
        self.keyId = keyId
        self.signature = signature
    }

    /// Most entries a `signatures` array may hold: far above any threshold, far below
    /// what would make counting expensive.
    public static let maxCount = 64

    /// `{"keyId": …, "signature": <base64>}`.
    public var jsonValue: JSONValue {
        var o = JSONObject()
        o["keyId"] = .string(keyId)
        o["signature"] = .string(Data(signature).base64EncodedString())
        return .object(o)
    }

    /// Reads the `signatures` array of `object` (absent: none), each entry an object with
    /// a well-formed `keyId` and `signature`.
    /// - Throws: ``ManifestRejection`` naming `signatures[i]`.
    static func readList(of object: JSONObject) throws -> [DocumentSignature] {
        guard let value = object["signatures"] else { return [] }
        guard case .array(let entries) = value else {
            throw ManifestRejection(.wrongType, field: "signatures", "field 'signatures' must be an array, got \(value.typeName)")
        }
        guard entries.count <= maxCount else {
            throw ManifestRejection(.invalidValue, field: "signatures", "field 'signatures' has \(entries.count) entries, at most \(maxCount)")
        }
        return try entries.enumerated().map { index, entry in
            let name = "signatures[\(index)]"
            guard case .object(let o) = entry else {
                throw ManifestRejection(.wrongType, field: name, "field '\(name)' must be an object, got \(entry.typeName)")
            }
            let fields = ManifestFieldReader(object: o)
            do {
                return DocumentSignature(keyId: try fields.keyId("keyId"), signature: try fields.signature("signature"))
            } catch let rejection as ManifestRejection {
                throw ManifestRejection(rejection.reason, field: name, "\(name): \(rejection.message)")
            }
        }
    }
}

/// A role of a trust root: the keys that may sign for it and how many of them must.
public struct RoleKeys: Sendable, Equatable {
    /// Distinct key ids, in the order the root lists them.
    public var keyIds: [String]
    /// Distinct valid signatures needed (at least 1, at most `keyIds.count`).
    public var threshold: Int

    public init(keyIds: [String], threshold: Int) {
        var seen = Set<String>()
        self.keyIds = keyIds.filter { seen.insert($0).inserted }
        self.threshold = threshold
    }

    /// `{"keyIds": […], "threshold": n}`.
    public var jsonValue: JSONValue {
        var o = JSONObject()
        o["keyIds"] = .array(keyIds.map { .string($0) })
        o["threshold"] = .integer(Int64(threshold))
        return .object(o)
    }
}

/// Counting signatures toward a threshold, with the TUF specification's rules (§5.3.4:
/// only keys of the role count, each key at most once however often it signed or is
/// listed, and only signatures that verify).
package enum Threshold {
    /// The distinct key ids of `role` with a signature in `signatures` that verifies over
    /// `message` with the key `keys` holds for that id, in the role's order.
    package static func validSigners(
        _ signatures: [DocumentSignature], message: [UInt8], role: RoleKeys, keys: [String: Ed25519.PublicKey]
    ) -> [String] {
        role.keyIds.filter { keyId in
            guard let key = keys[keyId] else { return false }
            return signatures.contains { $0.keyId == keyId && key.isValidSignature($0.signature, for: message) }
        }
    }

    /// True when at least `role.threshold` distinct keys of `role` signed `message`.
    package static func isMet(
        _ signatures: [DocumentSignature], message: [UInt8], role: RoleKeys, keys: [String: Ed25519.PublicKey]
    ) -> Bool {
        validSigners(signatures, message: message, role: role, keys: keys).count >= role.threshold
    }
}
