import ClientFoundation
import Foundation
import StrictJSON

/// Whether a *verified* manifest is acceptable to one device: pure functions, no I/O.
///
/// Verification (``ManifestVerifier``) says whether a manifest is authentic and well
/// formed; this says whether this device should take it (docs/formats.md#device-policy).
package enum ManifestPolicy {
    /// The decision for one manifest.
    package enum Decision: Sendable, Equatable {
        case accept
        /// Signed for another application.
        case wrongApp(expected: String, actual: String)
        /// Signed for another channel.
        case wrongChannel(expected: String, actual: String)
        /// Below the highest version ever accepted: a rollback attempt.
        case belowFloor(floor: Version)
        /// The shell is outside `minShellVersion…maxShellVersion`.
        case incompatibleShell(shell: Version)
        /// Past `expires`: keep what the device has and report a stale feed.
        case expired(Date)

        /// One line for people, naming the version.
        package func message(for manifest: Manifest) -> String {
            let v = manifest.version
            switch self {
            case .accept: return "release \(v) is acceptable"
            case .wrongApp(let e, let a): return "release \(v) is for app \(a), this device runs \(e)"
            case .wrongChannel(let e, let a): return "release \(v) is on channel \(a), this device follows \(e)"
            case .belowFloor(let f): return "release \(v) is below \(f), the highest version already accepted (rollback refused)"
            case .incompatibleShell(let s):
                let max = manifest.maxShellVersion.map { " and at most \($0)" } ?? ""
                return "release \(v) needs a shell of at least \(manifest.minShellVersion)\(max); this shell is \(s)"
            case .expired(let d): return "release \(v) expired at \(RFC3339.format(d)): the feed is stale"
            }
        }
    }

    /// Applies the device rules in order: app, channel, expiry, floor, shell compatibility.
    /// - Parameters:
    ///   - floor: the highest version ever accepted (``ArchiveMemory/highestAccepted``);
    ///     the floor itself is accepted (re-installing it is not a rollback).
    ///   - expiresInstead: the expiry to judge instead of the manifest's own: a media
    ///     index's `offlineExpires` for a release read from offline media.
    package static func evaluate(
        _ manifest: Manifest, app: String, channel: String, shellVersion: Version,
        floor: Version?, now: Date, expires expiresInstead: Date? = nil
    ) -> Decision {
        guard manifest.app == app else { return .wrongApp(expected: app, actual: manifest.app) }
        guard manifest.channel == channel else { return .wrongChannel(expected: channel, actual: manifest.channel) }
        if let expires = expiresInstead ?? manifest.expires, expires <= now { return .expired(expires) }
        if let floor, manifest.version < floor { return .belowFloor(floor: floor) }
        guard manifest.isCompatible(withShell: shellVersion) else { return .incompatibleShell(shell: shellVersion) }
        return .accept
    }

    /// Resolves a manifest's `url` against the URL the manifest was read from and applies
    /// the scheme rules of docs/formats.md#archive-url-rule: `https:` always; `http:` only to a loopback host or
    /// with `allowInsecureHTTP`; `file:` only when the manifest itself came from `file:`.
    /// - Returns: the absolute archive URL, or why it is refused.
    package static func archiveURL(for manifest: Manifest, manifestURL: URL, allowInsecureHTTP: Bool) -> Result<URL, SignedManifestError> {
        guard let resolved = URL(string: manifest.url, relativeTo: manifestURL)?.absoluteURL, resolved.scheme != nil else {
            return .failure(SignedManifestError(.invalidManifest, "release \(manifest.version): url \"\(manifest.url)\" is not a valid URL"))
        }
        // One URL rule for the whole device (``URLPolicy``), applied to the resolved URL.
        switch URLPolicy.check(resolved, manifestIsFile: manifestURL.scheme?.lowercased() == "file", allowInsecureHTTP: allowInsecureHTTP) {
        case .allowed:
            return .success(resolved)
        case .refused(let why):
            return .failure(SignedManifestError(.invalidManifest, "release \(manifest.version): archive URL \(why)"))
        }
    }
}
