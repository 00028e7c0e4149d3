import ClientFoundation
import ClientUpdater
import DeviceSetup
import Foundation

extension DeviceConfig.ChannelKind {
    /// Channel 2: Meteor hot code push from a Meteor server.
    package static let meteor = Self(rawValue: "meteor")
}

/// The Meteor channel's keys of `config.json`.
package struct MeteorSettings: ChannelSettings {
    /// The server's `ROOT_URL`.
    package var meteorRootURL: String
    /// `ios` or `android`: which `cordovaCompatibilityVersions` entry to compare (default ios).
    package var compatPlatform: String?

    package init(meteorRootURL: String, compatPlatform: String? = nil) {
        self.meteorRootURL = meteorRootURL
        self.compatPlatform = compatPlatform
    }

    /// The platform to compare; nil when `compatPlatform` names no platform.
    package var platform: CompatPlatform? { CompatPlatform(rawValue: compatPlatform ?? CompatPlatform.ios.rawValue) }

    /// The URL rules of ``URLPolicy`` (https:, or http: to loopback or with the opt-in),
    /// and a known platform.
    package func problem(in config: DeviceConfig) -> String? {
        guard let url = URL(string: meteorRootURL), url.scheme != nil else { return "meteorRootURL is missing or not an absolute URL" }
        guard ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
            return "meteorRootURL: \(meteorRootURL) must be https: (or http: to loopback)"
        }
        if case .refused(let why) = URLPolicy.check(url, manifestIsFile: false, allowInsecureHTTP: config.allowInsecureHTTP) {
            return "meteorRootURL: \(why)"
        }
        if platform == nil { return "compatPlatform '\(compatPlatform ?? "")' is not ios or android" }
        if config.embeddedPath == nil { return "embeddedPath is missing: a Meteor root serves its embedded bundle first" }
        return nil
    }
}

/// What the Meteor channel remembers in `state.json` (the plugin's `WebAppConfiguration`).
package struct MeteorMemory: Codable, Sendable, Equatable {
    package var appId: String?
    package var rootURL: String?
    package var cordovaCompatibilityVersion: String?
    package var lastDownloadedVersion: String?
    /// The version ``versionNote`` is about.
    package var noteVersion: String?
    /// Why ``noteVersion`` was taken although it is the seed's own build under another
    /// version (`SeedAgreement`); `status` shows it while that version is pending or current.
    package var versionNote: String?
    package init(
        appId: String? = nil, rootURL: String? = nil, cordovaCompatibilityVersion: String? = nil,
        lastDownloadedVersion: String? = nil
    ) {
        self.appId = appId
        self.rootURL = rootURL
        self.cordovaCompatibilityVersion = cordovaCompatibilityVersion
        self.lastDownloadedVersion = lastDownloadedVersion
    }
}

/// The Meteor section of `state.json`: one `meteor` object.
struct MeteorStateSection: Codable {
    var meteor: MeteorMemory?
}

extension DeviceState {
    /// The Meteor channel's memory of this state (`nil` before `init` recorded it).
    package var meteor: MeteorMemory? {
        get { memory(MeteorStateSection.self)?.meteor }
        set { setMemory(MeteorStateSection(meteor: newValue)) }
    }
}
