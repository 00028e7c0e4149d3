import ClientFoundation
import Foundation
import StrictJSON

/// The outcome of checking a trust root: trusted, or why not. A status, not a decision:
/// what a device does with a refusal (keep what it has, report) is its own business.
package enum RootVerification: Sendable, Equatable {
    case trusted(TrustRoot)
    case refused(SignedManifestError)

    package static func == (a: RootVerification, b: RootVerification) -> Bool {
        switch (a, b) {
        case (.trusted(let x), .trusted(let y)): return x == y
        case (.refused(let x), .refused(let y)): return x.code == y.code && x.message == y.message
        default: return false
        }
    }

    /// The root, or the refusal thrown.
    package func get() throws -> TrustRoot {
        switch self {
        case .trusted(let root): return root
        case .refused(let error): throw error
        }
    }
}

/// Root rotation with the TUF specification's rules (§5.3 "Update the root role"), in our
/// formats: a device that trusts root N accepts root N+1 only when
/// - its version is exactly N+1 (no rollback to N−1 or lower, no skipping to N+2: §5.3.5),
/// - it is for the same app and channel (a root from another channel is mix-and-match),
/// - a threshold of root N's `root` keys signed it (§5.3.4, the old keys vouch for it),
/// - a threshold of its own `root` keys signed it (§5.3.4, the new keys accept the role).
/// Expiry is checked on the root reached at the end of the walk, not on each step
/// (§5.3.10): an old expired root may still vouch for its successor.
package enum RootChain {
    /// Most roots a device walks in one check (TUF implementations bound it too, against
    /// an endless chain); the rest waits for the next check.
    package static let maxSteps = 32

    /// Checks `bytes` (`root/<N+1>.json`) as the successor of `trusted`.
    package static func verifyNext<Bytes: Collection>(_ bytes: Bytes, after trusted: TrustRoot, source: String) -> RootVerification
    where Bytes.Element == UInt8 {
        let candidate: TrustRoot
        do {
            candidate = try TrustRoot.parse(bytes, source: source)
        } catch let error as SignedManifestError {
            return .refused(error)
        } catch {
            return .refused(SignedManifestError(.untrustedRoot, "\(source): \(error)"))
        }
        func refuse(_ why: String) -> RootVerification { .refused(SignedManifestError(.untrustedRoot, "\(source): \(why)")) }
        guard candidate.version == trusted.version + 1 else {
            let kind = candidate.version <= trusted.version ? "a rollback" : "a skipped root"
            return refuse(
                "root version \(candidate.version) where \(trusted.version + 1) was expected (\(kind)); the device keeps root \(trusted.version)")
        }
        guard candidate.app == trusted.app, candidate.channel == trusted.channel else {
            return refuse("root for \(candidate.app) \(candidate.channel), but this device follows \(trusted.app) \(trusted.channel)")
        }
        let message = candidate.signedBytes
        let byPrevious = Threshold.validSigners(candidate.signatures, message: message, role: trusted.root, keys: trusted.keys)
        guard byPrevious.count >= trusted.root.threshold else {
            return refuse(
                "signed by \(byPrevious.count) of root \(trusted.version)'s root keys, \(trusted.root.threshold) needed "
                    + "(a new root must be vouched for by the keys it replaces)")
        }
        let bySelf = candidate.selfSigners
        guard bySelf.count >= candidate.root.threshold else {
            return refuse("signed by \(bySelf.count) of its own root keys, \(candidate.root.threshold) needed")
        }
        return .trusted(candidate)
    }

    /// Checks a root pinned at `init --trust-root`: for `app` and `channel`, signed by a
    /// threshold of its own root keys, not expired at `now`.
    package static func verifyPinned<Bytes: Collection>(
        _ bytes: Bytes, app: String, channel: String, now: Date, source: String
    ) -> RootVerification where Bytes.Element == UInt8 {
        let root: TrustRoot
        do {
            root = try TrustRoot.parse(bytes, source: source)
        } catch let error as SignedManifestError {
            return .refused(error)
        } catch {
            return .refused(SignedManifestError(.untrustedRoot, "\(source): \(error)"))
        }
        guard root.app == app, root.channel == channel else {
            return .refused(SignedManifestError(.untrustedRoot, "\(source): root for \(root.app) \(root.channel), not \(app) \(channel)"))
        }
        let bySelf = root.selfSigners
        guard bySelf.count >= root.root.threshold else {
            return .refused(
                SignedManifestError(.untrustedRoot, "\(source): signed by \(bySelf.count) of its own root keys, \(root.root.threshold) needed"))
        }
        if let problem = expiryProblem(root, now: now, source: source) { return .refused(problem) }
        return .trusted(root)
    }

    /// The refusal for a root past its `expires` at `now` (TUF's freeze attack: an
    /// attacker replaying old metadata forever), nil when it is current.
    package static func expiryProblem(_ root: TrustRoot, now: Date, source: String) -> SignedManifestError? {
        guard root.isExpired(at: now), let expires = root.expires else { return nil }
        return SignedManifestError(
            .rootExpired,
            "\(source): trust root \(root.version) expired at \(RFC3339.format(expires)); no update is accepted until a newer root is published")
    }
}
