import Foundation

/// The `__meteor_runtime_config__` a Meteor server embeds in index.html, reduced to the
/// fields the hot-code-push checks use.
public struct RuntimeConfig: Sendable, Equatable {
    /// `ROOT_URL`, if present and a string.
    public var rootURL: String?
    /// `appId`, if present and a string.
    public var appId: String?
    /// `autoupdateVersionCordova` (servers stopped emitting it in 2018).
    public var autoupdateVersionCordova: String?

    public init(rootURL: String? = nil, appId: String? = nil, autoupdateVersionCordova: String? = nil) {
        self.rootURL = rootURL
        self.appId = appId
        self.autoupdateVersionCordova = autoupdateVersionCordova
    }

    /// Extracts the runtime config the way the plugin does: the regex
    /// `__meteor_runtime_config__ = JSON.parse\(decodeURIComponent\("([^"]*)"\)\)`, then
    /// percent-decoding, then JSON.
    /// - Throws: ``MeteorError`` `.runtimeConfig` "Couldn't load runtime config from index file".
    public static func extract(fromIndexHTML html: String) throws -> RuntimeConfig {
        let failure = MeteorError(.runtimeConfig, "Couldn't load runtime config from index file")
        let marker = "__meteor_runtime_config__ = JSON.parse(decodeURIComponent(\""
        guard let start = html.range(of: marker) else { throw failure }
        let rest = html[start.upperBound...]
        guard let quote = rest.firstIndex(of: "\""), rest[quote...].hasPrefix("\"))") else { throw failure }
        guard let decoded = String(rest[..<quote]).removingPercentEncoding,
              let object = try? JSONSerialization.jsonObject(with: Data(decoded.utf8)),
              let dict = object as? [String: Any]
        else { throw failure }
        return RuntimeConfig(rootURL: dict["ROOT_URL"] as? String, appId: dict["appId"] as? String,
                             autoupdateVersionCordova: dict["autoupdateVersionCordova"] as? String)
    }

    /// Reads and extracts the runtime config of an index.html file.
    public static func load(indexFile path: String) throws -> RuntimeConfig {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw MeteorError(.runtimeConfig, "Couldn't load runtime config from index file: cannot read \(path)")
        }
        return try extract(fromIndexHTML: String(decoding: data, as: UTF8.self))
    }

    /// A reason a downloaded index page is refused.
    public enum Problem: Sendable, Equatable {
        /// `autoupdateVersionCordova` names another version than the manifest.
        case versionMismatch(expected: String, actual: String)
        /// No `ROOT_URL`.
        case missingRootURL
        /// `ROOT_URL` would move from a real host to localhost.
        case rootURLChangesToLocalhost
        /// No `appId`.
        case missingAppId
        /// `appId` differs from the current bundle's.
        case appIdMismatch(rootURL: String)

        /// The original plugin's message.
        public var message: String {
            switch self {
            case .versionMismatch(let expected, let actual):
                return "Version mismatch for index page, expected: \(expected), actual: \(actual)"
            case .missingRootURL:
                return "Could not find ROOT_URL in downloaded asset bundle"
            case .rootURLChangesToLocalhost:
                return "ROOT_URL in downloaded asset bundle would change current ROOT_URL to localhost. Make sure ROOT_URL has been configured correctly on the server."
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
    public func problem(expectedVersion: String, currentRootURL: String?, currentAppId: String?) -> Problem? {
        if let actual = autoupdateVersionCordova, actual != expectedVersion {
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
