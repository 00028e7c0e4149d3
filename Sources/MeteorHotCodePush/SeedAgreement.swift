import ClientFoundation
import ClientUpdater
import Foundation

/// Whether a version the server advertises is the embedded seed's own build under another
/// version string (docs/meteor.md#versions-that-disagree-for-no-reason).
///
/// `@meteorjs/capacitor` fills the seed's `version*` fields with a hash over `{}` (or
/// `AUTOUPDATE_VERSION`), a Meteor 3 server with a hash over `{"PUBLIC_SETTINGS":…}`; so
/// the same build gets two versions and the device takes the server's as new. It then
/// costs the manifest and index.html only (the seed donates every file), and `status` says
/// why it was taken.
enum SeedAgreement {
    /// The note `status` shows when `downloaded` renames `seed`'s build: every file (URL
    /// path under either spelling, and hash), the compatibility version and what the page
    /// loads and carries agree. `nil` when anything differs.
    static func note(downloaded: AssetBundle, seed: AssetBundle) -> String? {
        guard downloaded.version != seed.version,
            downloaded.manifest.cordovaCompatibilityVersion == seed.manifest.cordovaCompatibilityVersion,
            contents(downloaded.manifest) == contents(seed.manifest),
            let page = Page(indexFile: downloaded.directory + "/index.html"),
            let seedPage = Page(indexFile: seed.directory + "/index.html"), page == seedPage
        else { return nil }
        return
            "version \(downloaded.version) is the embedded seed's build (\(seed.version)) under another version: its files, compatibility version and page agree, so only the manifest and index.html were fetched. Build the app and run the server with the same AUTOUPDATE_VERSION to give them one version (docs/guides/meteor.md)"
    }

    /// Every asset but the index page, as content: URL path without `/__cordova`, and hash.
    static func contents(_ manifest: AssetManifest) -> Set<String> {
        Set(manifest.assets.filter { !$0.isIndexPage }.map { $0.contentKey + " " + ($0.hash ?? "-") })
    }

    /// What of an index page a user sees: the scripts and stylesheets it loads (query
    /// dropped, `/__cordova` not), and its runtime config's appId, ROOT_URL (without a
    /// trailing slash) and `PUBLIC_SETTINGS` (`Meteor.settings.public`; none is `{}`).
    /// Version fields, `meteorRelease` and the `WebAppLocalServer` script the Capacitor build
    /// adds are not part of it.
    struct Page: Equatable {
        var references: [String]
        var appId: String?
        var rootURL: String?
        var publicSettings: String

        init?(indexFile path: String) {
            guard let data = try? BoundedFile.read(path, cap: Organizer.maxPageBytes, code: MeteorError.Code.runtimeConfig) else { return nil }
            let html = String(decoding: data, as: UTF8.self)
            guard let config = RuntimeConfig.object(fromIndexHTML: html) else { return nil }
            references = Self.references(html)
            appId = config["appId"] as? String
            rootURL = (config["ROOT_URL"] as? String).map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
            let settings = config["PUBLIC_SETTINGS"] ?? [String: Any]()
            guard let json = try? JSONSerialization.data(withJSONObject: settings, options: [.sortedKeys, .fragmentsAllowed]) else { return nil }
            publicSettings = String(decoding: json, as: UTF8.self)
        }

        /// Every `src="…"` and `href="…"` value, in order, as content keys.
        static func references(_ html: String) -> [String] {
            var out: [String] = []
            for attribute in [" src=\"", " href=\""] {
                for piece in html.components(separatedBy: attribute).dropFirst() {
                    let value = piece.prefix { $0 != "\"" }.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                    out.append(AssetPath.contentKey(String(value)))
                }
            }
            return out
        }
    }
}
