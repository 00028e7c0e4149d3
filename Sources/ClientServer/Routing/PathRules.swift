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

    /// True when the path contains a run of 40 hex digits (a Meteor content hash).
    static func containsSHA1Hex(_ path: String) -> Bool {
        var run = 0
        for c in path.utf8 {
            if (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46) {
                run += 1
                if run >= 40 { return true }
            } else {
                run = 0
            }
        }
        return false
    }

    /// True when the file name carries a build hash: a `-` or `.` separated part of 8 to
    /// 64 letters/digits/`_` mixing letters and digits (`index-B2x9Kq1z.js`,
    /// `main.3f62a1b9.css`), not counting the extension.
    static func hasHashedName(_ path: String) -> Bool {
        guard let name = path.split(separator: "/").last else { return false }
        var parts = name.split(whereSeparator: { $0 == "-" || $0 == "." })
        if name.contains(".") { parts = parts.dropLast() }
        return parts.dropFirst().contains { part in
            guard part.utf8.count >= 8, part.utf8.count <= 64 else { return false }
            var digits = false, letters = false
            for c in part.utf8 {
                if c >= 0x30 && c <= 0x39 { digits = true }
                else if (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) { letters = true }
                else if c != 0x5F { return false }
            }
            return digits && letters
        }
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
