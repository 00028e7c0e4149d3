import Foundation

/// The one rule for the names of served files, shared by `publish` (`SourceTree`),
/// extraction (`EntryRule`) and the `Organizer`, so a release that publishes and
/// installs can always be organized and served.
///
/// The organizer maps a URL path to a file in `serving/<id>/` by percent-decoding it and
/// refusing paths that could escape the folder or name no file. A file of an archive is
/// served at its own relative path, so a name is acceptable only when that URL path maps
/// back to exactly the same file: `what?.js` (`?` starts a query), `%2e%2e` (decodes to
/// `..`), `%3F`, `%5C`, `%00` or `a%2Fb` (decodes to `a/b`) are refused.
public enum ServedPathRule {
    /// The file a URL path is stored at, relative to the serving folder: `/` and paths
    /// ending in `/` get `index.html`. Nil for paths that could escape the folder or
    /// name no file (`..`, `.`, empty segments, NUL, backslash, `?`, no leading `/`),
    /// after percent-decoding.
    public static func relativeFile(forURLPath urlPath: String) -> String? {
        let path = decoded(urlPath)
        guard path.hasPrefix("/"), !path.contains("\0"), !path.contains("\\"), !path.contains("?") else { return nil }
        var segments = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if segments.last == "" { segments[segments.count - 1] = "index.html" }
        guard !segments.isEmpty, segments.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." && $0.utf8.count <= 255 }) else { return nil }
        return segments.joined(separator: "/")
    }

    /// Why a file stored at `relativePath` (components joined by `/`, no leading `/`)
    /// cannot be served under its own name; nil when it can.
    public static func problem(withStoredPath relativePath: String) -> String? {
        if relativePath.contains("?") { return "'?' in a file name cannot be served (it starts a URL query)" }
        if relativeFile(forURLPath: "/" + relativePath) == relativePath { return nil }
        if decoded(relativePath) != relativePath {
            return "percent escape in a file name (e.g. %2e, %2F): the server decodes it, so the file could not be served under its name"
        }
        return "the name cannot be served as a URL path"
    }

    /// The percent-decoded form of a URL path (as the server looks it up).
    public static func decoded(_ urlPath: String) -> String {
        guard urlPath.contains("%") else { return urlPath }
        return urlPath.removingPercentEncoding ?? urlPath
    }
}
