import ClientUpdater
import Foundation

/// The outcome of verifying a manifest: valid, or which check failed.
///
/// A status, not a decision: whether a valid manifest is *acceptable* to a device (app,
/// channel, floor, expiry, URL scheme) is ``ManifestPolicy``'s business.
public enum ManifestVerification: Sendable, Equatable {
    /// Signature and every field are valid.
    case valid(Manifest)
    /// Something failed; the rejection says what.
    case invalid(ManifestRejection)

    /// The manifest, when valid.
    public var manifest: Manifest? {
        if case .valid(let m) = self { return m }
        return nil
    }

    /// The rejection, when invalid.
    public var rejection: ManifestRejection? {
        if case .invalid(let r) = self { return r }
        return nil
    }

    /// The manifest, or the rejection as a ``SignedArchiveError`` prefixed with `context`.
    public func get(context: String? = nil) throws -> Manifest {
        switch self {
        case .valid(let m): return m
        case .invalid(let r): throw r.error(context: context)
        }
    }
}

/// Verifies signed manifests against a set of trusted Ed25519 keys.
///
/// Order of checks (every error path rejects): the signature first — `keyId` and
/// `signature` must be well-formed, a trusted key with that `keyId` must exist, and the
/// signature must verify over the RFC 8785 canonical bytes of the object without
/// `signature` — then every field of DESIGN §2. No field is interpreted before the
/// signature verified.
public struct ManifestVerifier: Sendable {
    /// The keys whose signatures are accepted.
    public var trustedKeys: [Ed25519.PublicKey]

    public init(trustedKeys: [Ed25519.PublicKey]) {
        self.trustedKeys = trustedKeys
    }

    /// Reads PEM public keys (SubjectPublicKeyInfo) as config.json stores them.
    public init(trustedKeyPEMs: [String]) throws {
        trustedKeys = try trustedKeyPEMs.enumerated().map { try Ed25519.PublicKey(pem: $1, source: "trusted key #\($0 + 1)") }
    }

    /// Parses `bytes` strictly (64 KiB cap, DESIGN §8) and verifies the manifest.
    public func verify<Bytes: Collection>(bytes: Bytes, source: String = "manifest") -> ManifestVerification
    where Bytes.Element == UInt8 {
        do {
            return verify(try StrictJSON.parseObject(bytes, limits: .manifest, source: source))
        } catch let error as SignedArchiveError {
            return .invalid(ManifestRejection(.malformedJSON, field: nil, error.message))
        } catch {
            return .invalid(ManifestRejection(.malformedJSON, field: nil, "\(source): \(error)"))
        }
    }

    /// Verifies a parsed manifest object: signature, then fields.
    public func verify(_ object: JSONObject) -> ManifestVerification {
        let fields = ManifestFieldReader(object: object)
        let keyId: String
        let signature: [UInt8]
        do {
            keyId = try fields.keyId("keyId")
            signature = try fields.signature("signature")
        } catch let rejection as ManifestRejection {
            return .invalid(rejection)
        } catch {
            return .invalid(ManifestRejection(.invalidValue, field: nil, "\(error)"))
        }
        let candidates = trustedKeys.filter { $0.keyId == keyId }
        guard !candidates.isEmpty else {
            let trusted = trustedKeys.isEmpty ? "no keys are trusted" : "trusted: " + trustedKeys.map(\.keyId).joined(separator: ", ")
            return .invalid(ManifestRejection(.untrustedKey, field: "keyId", "signed by key \(keyId), which is not trusted (\(trusted))"))
        }
        let message = Manifest.signedBytes(of: object)
        guard candidates.contains(where: { $0.isValidSignature(signature, for: message) }) else {
            return .invalid(
                ManifestRejection(
                    .badSignature, field: "signature",
                    "signature does not verify with key \(keyId): the manifest was altered or signed by another key"))
        }
        switch Manifest.validate(object) {
        case .success(let manifest): return .valid(manifest)
        case .failure(let rejection): return .invalid(rejection)
        }
    }
}
