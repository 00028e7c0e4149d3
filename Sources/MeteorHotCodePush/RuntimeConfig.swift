import ClientFoundation
import ClientUpdater
import Foundation

/// The `__meteor_runtime_config__` a Meteor server embeds in index.html, reduced to the
/// fields the hot-code-push checks use.
package struct RuntimeConfig: Sendable, Equatable {
    /// `ROOT_URL`, if present and a string.
    package var rootURL: String?
    /// `appId`, if present and a string.
    package var appId: String?
    /// `autoupdateVersionCordova` (servers stopped emitting it in 2018).
    package var autoupdateVersionCordova: String?
    /// `autoupdate.versions["web.cordova"].version`, where current servers put the version
    /// (`packages/autoupdate/autoupdate_server.js`); it equals the manifest's `version`.
    package var webCordovaVersion: String?

    package init(
        rootURL: String? = nil, appId: String? = nil, autoupdateVersionCordova: String? = nil,
        webCordovaVersion: String? = nil
    ) {
        self.rootURL = rootURL
        self.appId = appId
        self.autoupdateVersionCordova = autoupdateVersionCordova
        self.webCordovaVersion = webCordovaVersion
    }

    /// The version this index page belongs to: `autoupdate.versions["web.cordova"].version`,
    /// else the legacy `autoupdateVersionCordova`, else unknown.
    package var pageVersion: String? { webCordovaVersion ?? autoupdateVersionCordova }

    /// Extracts the runtime config the way the plugin does: the regex
    /// `__meteor_runtime_config__ = JSON.parse\(decodeURIComponent\("([^"]*)"\)\)`, then
    /// percent-decoding, then JSON.
    /// - Throws: ``MeteorError`` `.runtimeConfig` "Couldn't load runtime config from index file".
    package static func extract(fromIndexHTML html: String) throws -> RuntimeConfig {
        guard let dict = object(fromIndexHTML: html) else {
            throw MeteorError(.runtimeConfig, "Couldn't load runtime config from index file")
        }
        let versions = (dict["autoupdate"] as? [String: Any])?["versions"] as? [String: Any]
        let cordova = (versions?["web.cordova"] as? [String: Any])?["version"] as? String
        return RuntimeConfig(
            rootURL: dict["ROOT_URL"] as? String, appId: dict["appId"] as? String,
            autoupdateVersionCordova: dict["autoupdateVersionCordova"] as? String,
            webCordovaVersion: cordova)
    }

    /// The whole runtime config object of an index page, found as ``extract(fromIndexHTML:)``
    /// finds it; `nil` when there is none.
    static func object(fromIndexHTML html: String) -> [String: Any]? {
        let marker = "__meteor_runtime_config__ = JSON.parse(decodeURIComponent(\""
        guard let start = html.range(of: marker) else { return nil }
        let rest = html[start.upperBound...]
        guard let quote = rest.firstIndex(of: "\""), rest[quote...].hasPrefix("\"))") else { return nil }
        guard let decoded = String(rest[..<quote]).removingPercentEncoding,
            let object = try? JSONSerialization.jsonObject(with: Data(decoded.utf8))
        else { return nil }
        return object as? [String: Any]
    }

    /// Reads and extracts the runtime config of an index.html file.
    package static func load(indexFile path: String) throws -> RuntimeConfig {
        let read: Data?
        do {
            read = try BoundedFile.read(path, cap: Organizer.maxPageBytes, code: MeteorError.Code.runtimeConfig)
        } catch {
            throw MeteorError(.runtimeConfig, "Couldn't load runtime config from index file: \(error.message)", underlying: error)
        }
        guard let data = read else {
            throw MeteorError(.runtimeConfig, "Couldn't load runtime config from index file: cannot read \(path)")
        }
        return try extract(fromIndexHTML: String(decoding: data, as: UTF8.self))
    }

    /// A reason a downloaded index page is refused.
    package enum Problem: Sendable, Equatable {
        /// The page's version (``pageVersion``) is another than the manifest's: the server
        /// is between two versions (a rolling deploy, a stale cache). Temporary.
        case versionMismatch(expected: String, actual: String)
        /// No `ROOT_URL`.
        case missingRootURL
        /// `ROOT_URL` would move from a real host to localhost.
        case rootURLChangesToLocalhost
        /// No `appId`.
        case missingAppId
        /// `appId` differs from the current bundle's.
        case appIdMismatch(rootURL: String)

        /// The error a check throws: `.versionMismatch` (temporary, exit 75) for a version
        /// mismatch, `.runtimeConfig` (rejected, exit 65) for the rest.
        package var error: MeteorError {
            if case .versionMismatch = self { return MeteorError(.versionMismatch, message) }
            return MeteorError(.runtimeConfig, message)
        }

        /// The original plugin's message.
        package var message: String {
            switch self {
            case .versionMismatch(let expected, let actual):
                return
                    "Version mismatch for index page, expected: \(expected), actual: \(actual) (the server is between two versions; nothing was staged, the next check tries again)"
            case .missingRootURL:
                return "Could not find ROOT_URL in downloaded asset bundle"
            case .rootURLChangesToLocalhost:
                return
                    "ROOT_URL in downloaded asset bundle would change current ROOT_URL to localhost. Make sure ROOT_URL has been configured correctly on the server."
            case .missingAppId:
                return "Could not find appId in downloaded asset bundle"
            case .appIdMismatch(let rootURL):
                return "appId in downloaded asset bundle does not match current appId. Make sure the server at \(rootURL) is serving the right app."
            }
        }
    }

    /// The checks of the plugin's `verifyRuntimeConfig`, in its order; `nil` = acceptable.
    /// - Parameters:
    ///   - expectedVersion: the manifest version this index page came with.
    ///   - currentRootURL: ROOT_URL of the bundle currently in use.
    ///   - currentAppId: appId of the bundle currently in use.
    package func problem(expectedVersion: String, currentRootURL: String?, currentAppId: String?) -> Problem? {
        if let actual = pageVersion, actual != expectedVersion {
            return .versionMismatch(expected: expectedVersion, actual: actual)
        }
        guard let rootURL else { return .missingRootURL }
        let currentHost = currentRootURL.flatMap { URL(string: $0)?.host }
        if currentHost != "localhost", URL(string: rootURL)?.host == "localhost" {
            return .rootURLChangesToLocalhost
        }
        guard let appId else { return .missingAppId }
        if appId != currentAppId { return .appIdMismatch(rootURL: rootURL) }
        return nil
    }
}
