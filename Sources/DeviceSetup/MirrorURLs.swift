import Foundation

/// The rules of a signed-archive device's site mirrors (`init --mirror`, `channel set
/// --mirror`; docs/site-mirror.md#devices), checked at `init`, when they change and each
/// time `config.json` is read.
package enum MirrorURLs {
    /// The most mirrors a device takes.
    package static let maxCount = 8

    /// Why `mirrors` cannot be the site mirrors of the manifest at `manifestURL`, or nil.
    ///
    /// A mirror is `https:`, or `http:` to any host without `allowInsecureHTTP`: whatever it
    /// serves is verified as if the origin had served it, and the manifest, trust roots and
    /// restriction come from the origin while it answers (docs/threat-model.md#site-mirrors).
    /// Each names the same file as the manifest URL (its last path segment: the mirror's
    /// address of that manifest), has no query or fragment, and is given once. A manifest
    /// read from a `file:` URL takes no mirror.
    package static func problem(_ mirrors: [String], manifestURL: URL) -> String? {
        if mirrors.isEmpty { return nil }
        if mirrors.count > maxCount { return "mirrors: \(mirrors.count) given, at most \(maxCount)" }
        if manifestURL.isFileURL { return "mirrors: a manifest read from a file: URL takes no mirror" }
        var seen: Set<String> = []
        for text in mirrors {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
                url.host?.isEmpty == false
            else { return "mirrors: '\(text)' is not an absolute https: or http: URL with a host" }
            guard url.query == nil, url.fragment == nil else { return "mirrors: '\(text)' has a query or a fragment" }
            guard url.lastPathComponent == manifestURL.lastPathComponent else {
                return "mirrors: '\(text)' does not name \(manifestURL.lastPathComponent): give the mirror's address of the manifest"
            }
            guard seen.insert(url.absoluteString).inserted else { return "mirrors: '\(text)' is given twice" }
        }
        return nil
    }
}
