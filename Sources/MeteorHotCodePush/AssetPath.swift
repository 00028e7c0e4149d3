/// Validation of the path-like fields of a Meteor manifest (`url`, `path`, `sourceMap`,
/// `sourceMapUrl`). Nothing from the network becomes a file name unless it passes here:
/// every accepted value resolves inside the bundle folder.
enum AssetPath {
    /// The URL path of a manifest `url`: the part before `?` (the original's `(/[^?]+).*`),
    /// or `nil` when it is not a safe absolute URL path.
    static func urlPath(fromURL url: String) -> String? {
        let path = url.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        guard path.hasPrefix("/"), path.count > 1, !path.contains("#") else { return nil }
        guard let relative = safeRelative(String(path.dropFirst())) else { return nil }
        // A URL path is also a file name in the serving folder: check its decoded form too.
        guard let decoded = relative.removingPercentEncoding, safeRelative(decoded) != nil else { return nil }
        return "/" + relative
    }

    /// The prefix a web.cordova manifest puts before its URL paths.
    static let cordovaPrefix = "/__cordova/"

    /// `urlPath` without a leading `/__cordova` segment: the one spelling of a URL path
    /// that a Cordova build (`/__cordova/x`), `@meteorjs/capacitor` (`/x`, its
    /// `normalizeWebProgramAssetUrls`) and a Meteor 3 server (which answers both) share.
    /// Content is matched under this spelling (docs/meteor.md#the-seed-as-a-donor).
    static func contentKey(_ urlPath: String) -> String {
        guard urlPath.hasPrefix(cordovaPrefix), urlPath.count > cordovaPrefix.count else { return urlPath }
        return "/" + urlPath.dropFirst(cordovaPrefix.count)
    }

    /// A manifest `path` (file inside the bundle folder), or `nil` when unsafe.
    static func filePath(_ path: String) -> String? {
        safeRelative(path)
    }

    /// `path` when it is a relative path whose every component is a plain name:
    /// not empty, not `.` or `..`, no NUL, backslash or control characters, each at
    /// most 255 bytes, at most 1024 bytes and 64 components in all.
    static func safeRelative(_ path: String) -> String? {
        guard !path.isEmpty, path.utf8.count <= 1024, !path.hasPrefix("/") else { return nil }
        let components = path.split(separator: "/", omittingEmptySubsequences: false)
        guard components.count <= 64 else { return nil }
        for component in components {
            guard !component.isEmpty, component != ".", component != "..", component.utf8.count <= 255 else { return nil }
            guard component.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F && $0 != 0x5C }) else { return nil }
        }
        return path
    }
}
