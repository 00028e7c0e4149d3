import ClientFoundation
import ClientUpdater
import Foundation
import NIOCore

/// The answer that sends a folder named without its slash to the slash form: `/about?q=1`
/// → `301`, `Location: /about/?q=1`, as nginx does (docs/serving.md#folder-indexes).
///
/// The `Location` is an absolute path, so it means the same under `http://127.0.0.1:PORT`
/// and `app://<appId>`. WebKitGTK does not follow a redirect from a custom URI scheme: it
/// shows the 301's body. So the body redirects too: a script that keeps the fragment
/// (`location.replace(target + location.hash)`), and a `<meta http-equiv="refresh">` for
/// when a policy stops the script (docs/native-shell.md#the-app-scheme). The body carries
/// its own Content-Security-Policy, which allows that one script and nothing else.
struct FolderRedirect: Sendable {
    /// The absolute path (and query) the folder's page answers at; only ASCII characters
    /// that need no escaping in a header, and none but `&` in HTML.
    let location: String

    /// - Parameters:
    ///   - folder: the decoded path of a folder that has an index.html (`/about`).
    ///   - query: the request's query string as it came, without `?`.
    /// - Returns: nil when no safe location can be made (a path that does not start with
    ///   exactly one `/`, which a browser would read as another host).
    init?(folder: String, query: String?) {
        guard folder.hasPrefix("/"), !folder.hasPrefix("//") else { return nil }
        var location = Self.percentEncoded(folder + "/", keeping: Self.pathCharacters)
        if let query, !query.isEmpty {
            location += "?" + Self.percentEncoded(query, keeping: Self.queryCharacters)
        }
        self.location = location
    }

    /// The redirect for a `GET` (with its page) or a `HEAD` (the same headers, no body).
    func answer(isHead: Bool, version: String) -> FileAnswer {
        let page = ByteBuffer(string: Self.page(location))
        let headers: [(name: String, value: String)] = [
            ("Location", location), ("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", FileResponder.noCache),
            ("Content-Security-Policy", Self.policy), ("Content-Length", String(page.readableBytes)),
        ]
        return FileAnswer(status: 301, headers: headers, body: isHead ? .none : .bytes(page), version: version)
    }

    /// The page a client that does not follow the `Location` shows: it goes there itself.
    static func page(_ location: String) -> String {
        let href = location.replacingOccurrences(of: "&", with: "&amp;")
        return """
            <!doctype html>
            <html><head><meta charset="utf-8"><meta http-equiv="refresh" content="0; url=\(href)"><title>Moved</title></head>
            <body><a id="to" href="\(href)">\(href)</a><script>\(script)</script></body></html>

            """
    }

    /// Runs after the refresh is scheduled and replaces it (so the fragment is kept); the
    /// same for every redirect, so ``policy`` can name it by its hash.
    static let script = "location.replace(document.getElementById(\"to\").href + location.hash);"

    /// The redirect page's Content-Security-Policy: its one script, nothing else.
    static let policy: String = {
        let hex = Digest.hex(.sha256, of: Data(script.utf8))
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return "default-src 'none'; script-src 'sha256-\(Data(bytes).base64EncodedString())'"
    }()

    /// RFC 3986 unreserved characters, `/` and the sub-delimiters that need no escaping in
    /// HTML or JavaScript (not `'` or `&`).
    static let pathCharacters = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/!$()*+,;=:@".utf8)
    /// The path's characters, plus what a query keeps as it came: `?`, `&` and escapes.
    static let queryCharacters = pathCharacters.union("?&%".utf8)

    static func percentEncoded(_ text: String, keeping allowed: Set<UInt8>) -> String {
        var out = ""
        for byte in text.utf8 {
            if allowed.contains(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return out
    }
}
