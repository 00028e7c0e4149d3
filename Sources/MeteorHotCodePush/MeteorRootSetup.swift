import ClientFoundation
import ClientUpdater
import DeviceSetup
import Foundation

/// Validates `clientctl init --meteor-url …` input and builds the root's config and first state.
package enum MeteorRootSetup {
    /// What `init` was given for a Meteor root, unvalidated.
    package struct Request: Sendable {
        /// The server's ROOT_URL (where `/__cordova/manifest.json` is fetched).
        package var meteorURL: String
        /// The embedded bundle folder (`program.json`, `index.html`, assets by manifest `path`).
        package var embedded: String?
        /// `ios` (default) or `android`.
        package var compatPlatform: String?
        /// The shell's version; `0.0.0` when not given (Meteor bundles carry no shell range).
        package var shellVersion: String?
        /// The startup timeout, retention and report URL.
        package var deviceSettings: DeviceSettings
        package var allowInsecureHTTP: Bool

        package init(
            meteorURL: String, embedded: String?, compatPlatform: String?, shellVersion: String?,
            deviceSettings: DeviceSettings, allowInsecureHTTP: Bool
        ) {
            self.meteorURL = meteorURL
            self.embedded = embedded
            self.compatPlatform = compatPlatform
            self.shellVersion = shellVersion
            self.deviceSettings = deviceSettings
            self.allowInsecureHTTP = allowInsecureHTTP
        }
    }

    /// Why a seed without program.json is refused, in Meteor's words.
    package static let noHotCodePush =
        #"no program.json: the app was built without hot code push (meteor.capacitor.hcp is "none" in package.json); set it to "webapp" (the default), rebuild, and run init with the new bundle"#

    /// Validates every field; the app id is the embedded index.html's `appId`.
    /// - Returns: the config to write and the first state (embedded version seen, the
    ///   embedded bundle's appId, ROOT_URL and compatibility version remembered).
    /// - Throws: ``MeteorError`` with the ``FieldProblem`` (which field, and why).
    package static func make(_ r: Request) throws -> (DeviceConfig, DeviceState) {
        guard let url = URL(string: r.meteorURL), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            throw MeteorError.field("meteorURL", "'\(r.meteorURL)' is not an absolute http(s) URL")
        }
        // The device's one URL rule (``URLPolicy``): https:, or http: to loopback or with the opt-in.
        guard scheme == "https" || scheme == "http",
            URLPolicy.check(url, manifestIsFile: false, allowInsecureHTTP: r.allowInsecureHTTP) == .allowed
        else {
            throw MeteorError.field("meteorURL", "must be https: (http: only to loopback, or with `allowInsecureHTTP`)")
        }
        guard url.query == nil, url.fragment == nil else {
            throw MeteorError.field("meteorURL", "must not carry a query or fragment")
        }
        guard let platform = CompatPlatform(rawValue: r.compatPlatform ?? "ios") else {
            throw MeteorError.field("compatPlatform", "must be ios or android")
        }
        guard let embedded = r.embedded else {
            throw MeteorError.field("embedded", "is required for a Meteor root (the bundle shipped in the shell)")
        }
        let path = RootLayout(root: embedded).root
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue else {
            throw MeteorError.field(.embeddedInvalid, "embedded", "\(embedded): no such folder")
        }
        // `@meteorjs/capacitor` leaves program.json out of a build with `hcp: "none"`: such
        // a seed cannot take hot code push, and the fix is the app's setting, not ours.
        if !FileManager.default.fileExists(atPath: path + "/program.json"), FileManager.default.fileExists(atPath: path + "/index.html") {
            throw MeteorError.field(.embeddedInvalid, "embedded", "\(embedded): \(Self.noHotCodePush)")
        }
        let bundle: AssetBundle
        let runtime: RuntimeConfig
        do {
            bundle = try AssetBundle.load(directory: path, platform: platform, parent: nil)
            runtime = try bundle.runtimeConfig()
        } catch let error as MeteorError {
            throw MeteorError.field(.embeddedInvalid, "embedded", "\(embedded): \(error.message)")
        }
        guard let appId = runtime.appId, !appId.isEmpty else {
            throw MeteorError.field(.embeddedInvalid, "embedded", "\(embedded): index.html's runtime config has no appId")
        }
        guard let rootURL = runtime.rootURL else {
            throw MeteorError.field(.embeddedInvalid, "embedded", "\(embedded): index.html's runtime config has no ROOT_URL")
        }
        for asset in bundle.manifest.assets where !asset.isSourceMap {
            guard FileManager.default.fileExists(atPath: bundle.file(of: asset)) else {
                throw MeteorError.field(.embeddedInvalid, "embedded", "\(embedded): \(asset.filePath) (for \(asset.urlPath)) is missing")
            }
        }
        guard let shell = Version(r.shellVersion ?? "0.0.0") else {
            throw MeteorError.field("shellVersion", "'\(r.shellVersion ?? "")' is not a SemVer 2.0 version (e.g. 1.4.0)")
        }
        if let problem = r.deviceSettings.fieldProblem(allowInsecureHTTP: r.allowInsecureHTTP) {
            throw MeteorError.field(problem.field, problem.problem)
        }
        let config = try DeviceConfig(
            app: appId, channelKind: .meteor,
            settings: MeteorSettings(meteorRootURL: url.absoluteString, compatPlatform: platform.rawValue),
            shellVersion: shell, embeddedPath: path,
            deviceSettings: r.deviceSettings, allowInsecureHTTP: r.allowInsecureHTTP)
        var state = DeviceState()
        state.lastSeenEmbeddedVersion = bundle.version
        state.meteor = MeteorMemory(
            appId: appId, rootURL: rootURL,
            cordovaCompatibilityVersion: bundle.manifest.cordovaCompatibilityVersion)
        return (config, state)
    }
}
