import ClientFoundation
import ClientUpdater
import Foundation
import SignedManifest

/// Validates `clientctl init` input for a signed-archive root and builds its config.
package enum ArchiveRootSetup {
    /// What `init` was given, unvalidated.
    package struct Request: Sendable {
        package var app: String?
        package var channel: String?
        package var manifestURL: String?
        package var trustFiles: [String]
        /// A signed trust root to pin (`root/N.json` of the channel) instead of `trustFiles`.
        package var trustRootFile: String?
        package var shellVersion: String
        package var embedded: String?
        package var startupTimeout: Double
        package var keep: Int
        package var allowInsecureHTTP: Bool
        package var limits: DeviceConfig.Limits

        package init(
            app: String?, channel: String?, manifestURL: String?, trustFiles: [String], shellVersion: String,
            embedded: String?, startupTimeout: Double, keep: Int, allowInsecureHTTP: Bool,
            limits: DeviceConfig.Limits, trustRootFile: String? = nil
        ) {
            self.app = app
            self.channel = channel
            self.manifestURL = manifestURL
            self.trustFiles = trustFiles
            self.shellVersion = shellVersion
            self.embedded = embedded
            self.startupTimeout = startupTimeout
            self.keep = keep
            self.allowInsecureHTTP = allowInsecureHTTP
            self.limits = limits
            self.trustRootFile = trustRootFile
        }
    }

    /// Validates every field and returns the config to write.
    /// - Throws: ``SignedArchiveError`` with the ``FieldProblem`` (which field, and why).
    package static func makeConfig(_ r: Request) throws -> DeviceConfig {
        try make(r).config
    }

    /// Validates every field and returns the config to write and, with `trustRootFile`,
    /// the pinned root (to store with ``TrustStore/save(_:)`` once the root exists).
    /// - Throws: ``SignedArchiveError`` with the ``FieldProblem`` (which field, and why);
    ///   SignedManifest's `SignedManifestError` `.untrustedRoot`/`.rootExpired` for a root not to pin.
    package static func make(_ r: Request, now: Date = Date()) throws -> (config: DeviceConfig, root: TrustRoot?) {
        guard let app = r.app, ReleaseIdentifier.app.problem(app) == nil else {
            throw SignedArchiveError.field("app", "is required and must look like com.example.notes (\(ReleaseIdentifier.app.problem("") ?? ""))")
        }
        guard let channel = r.channel, ReleaseIdentifier.channel.problem(channel) == nil else {
            throw SignedArchiveError.field("channel", "is required and must be a name like stable (\(ReleaseIdentifier.channel.problem("") ?? ""))")
        }
        guard let urlText = r.manifestURL, let url = URL(string: urlText), url.scheme != nil else {
            throw SignedArchiveError.field("manifestURL", "is required and must be an absolute URL")
        }
        let isFile = url.isFileURL
        if case .refused(let why) = URLPolicy.check(url, manifestIsFile: isFile, allowInsecureHTTP: r.allowInsecureHTTP) {
            throw SignedArchiveError.field("manifestURL", "refused: \(why)")
        }
        guard let shell = Version(r.shellVersion) else {
            throw SignedArchiveError.field("shellVersion", "'\(r.shellVersion)' is not a SemVer 2.0 version (e.g. 1.4.0)")
        }
        var pinned: TrustRoot?
        if let file = r.trustRootFile {
            guard r.trustFiles.isEmpty else {
                throw SignedArchiveError.field("trustRootFile", "is given with `trustFiles`: trust comes from the root or from keys, not both")
            }
            let read: Data?
            do {
                read = try BoundedFile.read(file, cap: TrustRoot.maxBytes, code: SignedArchiveError.Code.invalidArgument)
            } catch {
                throw SignedArchiveError.field("trustRootFile", error.message)
            }
            guard let data = read else {
                throw SignedArchiveError.field(.notFound, "trustRootFile", "\(file): no such file or not readable")
            }
            pinned = try RootChain.verifyPinned(data, app: app, channel: channel, now: now, source: file).get()
        } else if r.trustFiles.isEmpty {
            throw SignedArchiveError.field("trustFiles", "needs at least one public key: a device trusts only the keys it is given")
        }
        let keys = try r.trustFiles.map(TrustedKeys.readPublicKeyPEM)
        var embeddedPath: String?
        if let embedded = r.embedded {
            let path = RootLayout(root: embedded).root
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue else {
                throw SignedArchiveError.field(.notFound, "embedded", "\(embedded): no such folder")
            }
            guard FileManager.default.fileExists(atPath: path + "/index.html") else {
                throw SignedArchiveError.field("embedded", "\(embedded): the seed has no index.html")
            }
            embeddedPath = path
        }
        guard r.startupTimeout > 0 else { throw SignedArchiveError.field("startupTimeout", "must be positive") }
        guard r.keep >= 1 else { throw SignedArchiveError.field("keep", "must be at least 1") }
        guard r.limits.maxUnpackedBytes > 0, r.limits.maxEntries > 0 else {
            throw SignedArchiveError.field("limits", "must be positive")
        }
        let config = try DeviceConfig(
            app: app, channelKind: .signedArchive,
            settings: ArchiveSettings(
                channel: channel, manifestURL: url.absoluteString, trustedKeys: keys, pinnedRoot: pinned == nil ? nil : true),
            shellVersion: shell, embeddedPath: embeddedPath, startupTimeoutSeconds: r.startupTimeout,
            keep: r.keep, allowInsecureHTTP: r.allowInsecureHTTP, limits: r.limits)
        return (config, pinned)
    }
}
