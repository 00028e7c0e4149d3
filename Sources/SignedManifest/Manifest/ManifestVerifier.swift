import ClientFoundation
import Foundation
import StrictJSON

/// The outcome of verifying a manifest: valid, or which check failed.
///
/// A status, not a decision: whether a valid manifest is *acceptable* to a device (app,
/// channel, floor, expiry, URL scheme) is `ManifestPolicy`'s business.
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

    /// The manifest, or the rejection as a ``SignedManifestError`` prefixed with `context`.
    public func get(context: String? = nil) throws -> Manifest {
        switch self {
        case .valid(let m): return m
        case .invalid(let r): throw r.error(context: context)
        }
    }
}

/// Verifies signed manifests against a trust root: a threshold of its `release` keys
/// (one key of the `--trust` keys for a device without a root).
///
/// Order of checks (every error path rejects): the signatures first — every `keyId` and
/// signature must be well-formed, and at least the release role's threshold of distinct
/// release keys must have a signature that verifies over the RFC 8785 canonical bytes of
/// the object without `signature` and `signatures` — then every field (docs/formats.md#manifest).
/// No field is interpreted before the signatures verified.
public struct ManifestVerifier: Sendable {
    /// The root whose `release` role signs manifests.
    public let root: TrustRoot

    /// The keys whose signatures count.
    public var trustedKeys: [Ed25519.PublicKey] { root.release.keyIds.compactMap { root.keys[$0] } }

    /// A verifier for which any one of `trustedKeys` suffices (the implicit root).
    public init(trustedKeys: [Ed25519.PublicKey]) {
        root = .implicit(trusting: trustedKeys, app: "", channel: "")
    }

    /// Reads PEM public keys (SubjectPublicKeyInfo) as config.json stores them.
    public init(trustedKeyPEMs: [String]) throws {
        self.init(trustedKeys: try trustedKeyPEMs.enumerated().map { try Ed25519.PublicKey(pem: $1, source: "trusted key #\($0 + 1)") })
    }

    /// A verifier asking for `root`'s release threshold.
    public init(root: TrustRoot) {
        self.root = root
    }

    /// Parses `bytes` strictly (64 KiB cap, docs/formats.md#strict-json) and verifies the manifest.
    public func verify<Bytes: Collection>(bytes: Bytes, source: String = "manifest") -> ManifestVerification
    where Bytes.Element == UInt8 {
        do {
            return verify(try StrictJSON.parseObject(bytes, limits: .manifest, source: source))
        } catch let error as StrictJSONError {
            return .invalid(ManifestRejection(.malformedJSON, field: nil, error.message))
        } catch {
            return .invalid(ManifestRejection(.malformedJSON, field: nil, "\(source): \(error)"))
        }
    }

    /// Verifies a parsed manifest object: signatures, then fields.
    public func verify(_ object: JSONObject) -> ManifestVerification {
        let signatures: [DocumentSignature]
        do {
            signatures = try Manifest.readSignatures(of: object)
        } catch let rejection as ManifestRejection {
            return .invalid(rejection)
        } catch {
            return .invalid(ManifestRejection(.invalidValue, field: nil, "\(error)"))
        }
        let release = root.release
        let valid = Threshold.validSigners(signatures, message: Manifest.signedBytes(of: object), role: release, keys: root.keys)
        guard valid.count >= release.threshold else { return .invalid(rejection(signatures, valid: valid)) }
        switch Manifest.validate(object) {
        case .success(let manifest): return .valid(manifest)
        case .failure(let rejection): return .invalid(rejection)
        }
    }

    /// Why `signatures` do not meet the threshold, in the terms a release engineer acts on.
    private func rejection(_ signatures: [DocumentSignature], valid: [String]) -> ManifestRejection {
        let release = root.release
        let signers = signatures.map(\.keyId)
        let fromRelease = signers.filter(release.keyIds.contains)
        if fromRelease.isEmpty {
            let trusted = release.keyIds.isEmpty ? "no keys are trusted" : "trusted: " + release.keyIds.joined(separator: ", ")
            let who = signers.count == 1 ? "key \(signers[0]), which is not" : "keys \(signers.joined(separator: ", ")), none of which is"
            return ManifestRejection(.untrustedKey, field: "keyId", "signed by \(who) trusted (\(trusted))")
        }
        if valid.isEmpty, release.threshold == 1 {
            return ManifestRejection(
                .badSignature, field: "signature",
                "signature does not verify with key \(fromRelease[0]): the manifest was altered or signed by another key")
        }
        let validText = valid.isEmpty ? "none" : valid.joined(separator: ", ")
        return ManifestRejection(
            .thresholdNotMet, field: "signatures",
            "signed by \(valid.count) of the release keys (\(validText)), \(release.threshold) needed by trust root \(root.version)")
    }
}
