@testable import ServingCore

/// The rest of what `serve` reads from a request head: the path (percent-decoding, dot
/// segments) and the conditional headers. Input: a selector byte, then the text.
/// - A decoded path never holds NUL or a `.`/`..` segment (it becomes a key into the
///   served files, and for `www` a path on disk).
/// - `If-None-Match` / `If-Range`: an entity tag always matches itself, quoted or weak,
///   alone or in a list, and `*` matches anything.
enum RequestHeadTarget: FuzzTarget {
    static let name = "request-head"

    static func run(_ data: [UInt8]) {
        guard let selector = data.first else { return }
        let text = String(decoding: data.dropFirst(), as: UTF8.self)
        if selector & 1 == 0 {
            guard let path = PathRules.decodedPath(text) else { return }
            guard !path.contains("\0") else { FuzzFinding.fail(name, "decoded path holds NUL") }
            for segment in path.split(separator: "/", omittingEmptySubsequences: false) where segment == "." || segment == ".." {
                FuzzFinding.fail(name, "decoded path \(path.debugDescription) holds a dot segment")
            }
            return
        }
        // The text is used as an entity tag's opaque part (no quote, no comma: as `serve` makes them).
        // Filtered by scalar: a comma followed by a combining mark is one `Character`, so a
        // `Character` filter let commas through (the harness's own finding, not serve's).
        var opaque = String.UnicodeScalarView()
        opaque.append(contentsOf: text.unicodeScalars.filter { $0 != "\"" && $0 != "," && !$0.properties.isWhitespace })
        let etag = "\"" + String(opaque) + "\""
        _ = FileResponder.matches(text, etag)
        _ = FileResponder.ifRangeAllows(text, etag: etag)
        guard FileResponder.matches(etag, etag), FileResponder.matches("W/" + etag, etag),
            FileResponder.matches("\"other\", " + etag, etag), FileResponder.matches("*", etag),
            FileResponder.ifRangeAllows(etag, etag: etag)
        else { FuzzFinding.fail(name, "entity tag \(etag.debugDescription) does not match itself") }
    }
}
