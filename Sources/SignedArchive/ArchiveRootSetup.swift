import ClientFoundation
import ClientUpdater
import DeviceSetup
import Foundation
import SignedManifest

/// Validates `clientctl init` input for a signed-archive root and builds its config.
package enum ArchiveRootSetup {
    /// What `init` was given, unvalidated (DeviceSetup's, shared with a template's check).
    package typealias Request = ArchiveSetupRequest

    /// Validates every field and returns the config to write.
    /// - Throws: DeviceSetup's ``DeviceSetupError`` with the ``FieldProblem`` (which field, and why).
    package static func makeConfig(_ r: Request) throws -> DeviceConfig {
        try make(r).config
    }

    /// Validates every field and returns the config to write and, with `trustRootFile`,
    /// the pinned root (to store with ``TrustStore/save(_:)`` once the root exists).
    /// - Throws: DeviceSetup's ``DeviceSetupError`` with the ``FieldProblem`` (which field, and why);
    ///   SignedManifest's `SignedManifestError` `.untrustedRoot`/`.rootExpired` for a root not to pin.
    package static func make(_ r: Request, now: Date = max(Date(), ProgramDate.released)) throws -> (config: DeviceConfig, root: TrustRoot?) {
        let checked = try r.checked(now: now)
        let config = try DeviceConfig(
            app: checked.app, channelKind: .signedArchive,
            settings: ArchiveSettings(
                channel: checked.channel, manifestURL: checked.manifestURL, trustedKeys: checked.trustedKeys,
                pinnedRoot: checked.pinnedRoot == nil ? nil : true, mirrors: checked.mirrors.isEmpty ? nil : checked.mirrors),
            shellVersion: checked.shellVersion, embeddedPath: checked.embeddedPath, deviceSettings: checked.deviceSettings,
            allowInsecureHTTP: checked.allowInsecureHTTP, limits: checked.limits)
        return (config, checked.pinnedRoot)
    }
}
