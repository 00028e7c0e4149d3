import ClientFoundation
import Foundation
import SignedManifest

/// What `init` was given for a signed-archive root, unvalidated: also what a packaged
/// app's template says (``init(template:folder:)``).
package struct ArchiveSetupRequest: Sendable {
    package var app: String?
    package var channel: String?
    package var manifestURL: String?
    package var trustFiles: [String]
    /// A signed trust root to pin (`root/N.json` of the channel) instead of `trustFiles`.
    package var trustRootFile: String?
    package var shellVersion: String
    package var embedded: String?
    /// The startup timeout, retention and report URL.
    package var deviceSettings: DeviceSettings
    package var allowInsecureHTTP: Bool
    package var limits: DeviceConfig.Limits
    /// Site mirrors' addresses of the manifest, in the order to try them (``MirrorURLs``).
    package var mirrors: [String] = []

    package init(
        app: String?, channel: String?, manifestURL: String?, trustFiles: [String], shellVersion: String,
        embedded: String?, deviceSettings: DeviceSettings, allowInsecureHTTP: Bool,
        limits: DeviceConfig.Limits, trustRootFile: String? = nil
    ) {
        self.app = app
        self.channel = channel
        self.manifestURL = manifestURL
        self.trustFiles = trustFiles
        self.shellVersion = shellVersion
        self.embedded = embedded
        self.deviceSettings = deviceSettings
        self.allowInsecureHTTP = allowInsecureHTTP
        self.limits = limits
        self.trustRootFile = trustRootFile
    }
}

/// A signed-archive root's setup that passed every check of ``ArchiveSetupRequest/checked(now:)``:
/// what the channel turns into its `config.json` and pinned trust root.
package struct CheckedArchiveSetup: Sendable {
    package var app: String
    package var channel: String
    /// The manifest's URL, absolute.
    package var manifestURL: String
    /// The trusted keys' PEM texts (empty when a trust root is pinned).
    package var trustedKeys: [String]
    /// The trust root to pin, verified.
    package var pinnedRoot: TrustRoot?
    package var shellVersion: Version
    /// The seed folder, absolute and standardized.
    package var embeddedPath: String?
    package var deviceSettings: DeviceSettings
    package var allowInsecureHTTP: Bool
    package var limits: DeviceConfig.Limits
    /// Site mirrors' addresses of the manifest, absolute, in order.
    package var mirrors: [String] = []
}

extension ArchiveSetupRequest {
    /// Checks every field as `init` does: the app id and channel name, the manifest's URL
    /// (the rules of `URLPolicy`), the shell's version, the trust (keys or a signed root,
    /// not both), the seed and the settings. Creates nothing.
    /// - Throws: ``DeviceSetupError`` with the ``FieldProblem`` (which field, and why);
    ///   SignedManifest's `SignedManifestError` `.untrustedRoot`/`.rootExpired` for a root not to pin.
    package func checked(now: Date) throws -> CheckedArchiveSetup {
        let r = self
        guard let app = r.app, ReleaseIdentifier.app.problem(app) == nil else {
            throw DeviceSetupError.field("app", "is required and must look like com.example.notes (\(ReleaseIdentifier.app.problem("") ?? ""))")
        }
        guard let channel = r.channel, ReleaseIdentifier.channel.problem(channel) == nil else {
            throw DeviceSetupError.field("channel", "is required and must be a name like stable (\(ReleaseIdentifier.channel.problem("") ?? ""))")
        }
        guard let urlText = r.manifestURL, let url = URL(string: urlText), url.scheme != nil else {
            throw DeviceSetupError.field("manifestURL", "is required and must be an absolute URL")
        }
        let isFile = url.isFileURL
        if case .refused(let why) = URLPolicy.check(url, manifestIsFile: isFile, allowInsecureHTTP: r.allowInsecureHTTP) {
            throw DeviceSetupError.field("manifestURL", "refused: \(why)")
        }
        if let problem = MirrorURLs.problem(r.mirrors, manifestURL: url) {
            let (field, why) = problem.hasPrefix("mirrors: ") ? ("mirrors", String(problem.dropFirst(9))) : ("mirrors", problem)
            throw DeviceSetupError.field(field, why)
        }
        guard let shell = Version(r.shellVersion) else {
            throw DeviceSetupError.field("shellVersion", "'\(r.shellVersion)' is not a SemVer 2.0 version (e.g. 1.4.0)")
        }
        var pinned: TrustRoot?
        if let file = r.trustRootFile {
            guard r.trustFiles.isEmpty else {
                throw DeviceSetupError.field("trustRootFile", "is given with `trustFiles`: trust comes from the root or from keys, not both")
            }
            let read: Data?
            do {
                read = try BoundedFile.read(file, cap: TrustRoot.maxBytes, code: DeviceSetupError.Code.invalidArgument)
            } catch {
                throw DeviceSetupError.field("trustRootFile", error.message)
            }
            guard let data = read else {
                throw DeviceSetupError.field(.notFound, "trustRootFile", "\(file): no such file or not readable")
            }
            pinned = try RootChain.verifyPinned(data, app: app, channel: channel, now: now, source: file).get()
        } else if r.trustFiles.isEmpty {
            throw DeviceSetupError.field("trustFiles", "needs at least one public key: a device trusts only the keys it is given")
        }
        let keys = try r.trustFiles.map(TrustedKeys.readPublicKeyPEM)
        var embeddedPath: String?
        if let embedded = r.embedded {
            let absolute = embedded.hasPrefix("/") ? embedded : FileManager.default.currentDirectoryPath + "/" + embedded
            let path = (absolute as NSString).standardizingPath
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue else {
                throw DeviceSetupError.field(.notFound, "embedded", "\(embedded): no such folder")
            }
            guard FileManager.default.fileExists(atPath: path + "/index.html") else {
                throw DeviceSetupError.field("embedded", "\(embedded): the seed has no index.html")
            }
            embeddedPath = path
        }
        if let problem = r.deviceSettings.fieldProblem(allowInsecureHTTP: r.allowInsecureHTTP) {
            throw DeviceSetupError.field(problem.field, problem.problem)
        }
        guard r.limits.maxUnpackedBytes > 0, r.limits.maxEntries > 0 else {
            throw DeviceSetupError.field("limits", "must be positive")
        }
        return CheckedArchiveSetup(
            app: app, channel: channel, manifestURL: url.absoluteString, trustedKeys: keys, pinnedRoot: pinned,
            shellVersion: shell, embeddedPath: embeddedPath, deviceSettings: r.deviceSettings,
            allowInsecureHTTP: r.allowInsecureHTTP, limits: r.limits,
            mirrors: r.mirrors.compactMap { URL(string: $0)?.absoluteString })
    }
}
