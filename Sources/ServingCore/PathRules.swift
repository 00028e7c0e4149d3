import Foundation

/// Small pure rules about URL paths used on the hot path.
enum PathRules {
    /// The extension of the last path segment (`js` for `/a/b.js`), nil when there is
    /// none or the name starts with a dot.
    static func fileExtension(_ path: some StringProtocol) -> Substring? {
        let full = Substring(path)
        let name = full.lastIndex(of: "/").map { full[full.index(after: $0)...] } ?? full
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let ext = name[name.index(after: dot)...]
        return ext.isEmpty ? nil : ext
    }

    /// Percent-decodes a request path; nil when it decodes to something that can name
    /// no served file (NUL, `.` or `..` segments).
    static func decodedPath(_ raw: String) -> String? {
        var path = raw
        if raw.utf8.contains(0x25) {
            guard let decoded = raw.removingPercentEncoding else { return nil }
            path = decoded
        }
        // NUL, encoded or raw (found by the request-head fuzz target): no file is named so.
        guard !path.utf8.contains(0) else { return nil }
        // Origin-form paths start with `/`; dot segments are refused wherever they stand
        // (`%2e%2e/x` has no `/.`: found by the request-head fuzz target).
        guard path.utf8.first == UInt8(ascii: "/") else { return nil }
        for segment in path.split(separator: "/") where segment == "." || segment == ".." { return nil }
        return path
    }
}
