internal import COpenSSL
import ClientFoundation
import ClientUpdater
import Foundation

/// Which Meteor server generation a generated app imitates.
public enum MeteorShape: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Meteor 1.4.2.1 up to 3.x (read from meteor/meteor release-3.1.0): manifest `hash` =
    /// SHA-1 over salt "2", the input hash and the SRI (`tools/isobuild/bundler.js`
    /// `File#hash()`, `File._salt()`, `File#sri()`), `/__cordova` URLs for web.cordova,
    /// `public/` files listed twice (with and without the prefix, same `path`, `sri: null`),
    /// a production bundle `<hash>.js` with its `.stats.json`, runtime config with
    /// `autoupdate.versions["web.cordova"]` (`packages/autoupdate/autoupdate_server.js`).
    case current
    /// The original plugin's fixtures' era: manifest `hash` = SHA-1 of the bytes, per-file
    /// URLs with a `?<hash>` cache buster, `autoupdateVersionCordova` in the runtime config.
    case legacy

    public var description: String { rawValue }
}

/// The logical content of one version of a generated Cordova app: what a developer
/// changed, independent of how a server of a given ``MeteorShape`` lays it out.
public struct MeteorAppContent: Sendable {
    /// The manifest (and runtime config) version.
    public var version: String
    /// Client JavaScript sources by name (`packages/meteor.js`, `app/template.mobileapp.js`).
    public var scripts: [(name: String, source: String)]
    /// The app's CSS.
    public var css: String
    /// `public/` files by serve path without the leading slash (`some-file`).
    public var publicFiles: [(name: String, bytes: Data)]
    /// `Meteor.settings.public` (changes the version, and only index.html and the manifest).
    public var publicSettings: String = "{}"
    /// Runtime config fields; `nil` leaves a field out.
    public var rootURL: String? = "http://localhost:3000/"
    public var appId: String? = "1generatedappid7q"
    /// The version the runtime config names; defaults to ``version`` (differs in a rolling deploy).
    public var pageVersion: String?
    /// `cordovaCompatibilityVersions`; `nil` leaves it out.
    public var compatibility: (ios: String, android: String)? = (MeteorAppGenerator.compatIOS, MeteorAppGenerator.compatAndroid)

    public init(
        version: String, scripts: [(name: String, source: String)], css: String,
        publicFiles: [(name: String, bytes: Data)]
    ) {
        self.version = version
        self.scripts = scripts
        self.css = css
        self.publicFiles = publicFiles
    }
}

/// One file a server serves for a version.
public struct MeteorServedFile: Sendable, Equatable {
    /// The manifest `url` path (without query), e.g. `/__cordova/abc.js` or `/some-file`.
    public var urlPath: String
    /// The manifest `path` (where the file lives inside a bundle).
    public var path: String
    public var bytes: Data
    /// The manifest `hash`; `nil` for source maps.
    public var hash: String?
    /// The manifest `type` (`js`, `css`, `json`, `asset`); `map` for source maps.
    public var type: String
}

/// A version rendered in one shape: the manifest bytes, index.html, and every served file.
public struct MeteorRenderedVersion: Sendable {
    public var shape: MeteorShape
    public var version: String
    public var manifest: Data
    public var indexHTML: Data
    public var files: [MeteorServedFile]

    /// The served file at `urlPath`.
    public func file(at urlPath: String) -> MeteorServedFile? { files.first { $0.urlPath == urlPath } }
    /// URL paths of the JavaScript files the page loads (`<script src>`), in order.
    public var scriptURLPaths: [String] { files.filter { $0.type == "js" }.map(\.urlPath) }
}

/// Hashes as Meteor's bundler computes them (tools/isobuild/bundler.js, tools/fs/watch.ts).
public enum MeteorHashing {
    /// watch.ts `sha512`: base64 SHA-512 (the SRI value).
    public static func sri(_ data: Data) -> String {
        var out = [UInt8](repeating: 0, count: 64)
        var length: UInt32 = 0
        _ = data.withUnsafeBytes { EVP_Digest($0.baseAddress, $0.count, &out, &length, EVP_sha512(), nil) }
        return Data(out.prefix(Int(length))).base64EncodedString()
    }

    /// bundler.js `File#hash()`: SHA-1 hex over "2" (`File._salt()`), the input hash when
    /// there is one, and the SRI unless the file skips it (`public/` assets).
    public static func fileHash(inputHash: String?, sri: String?) -> String {
        let d = Digest(.sha1)
        d.update(Data("2".utf8))
        if let inputHash { d.update(Data(inputHash.utf8)) }
        if let sri { d.update(Data(sri.utf8)) }
        return d.finalizeHex()
    }

    /// A content SHA-1 (the legacy manifest hash, and the input hash of a resource).
    public static func sha1(_ data: Data) -> String { Digest.hex(.sha1, of: data) }
}
