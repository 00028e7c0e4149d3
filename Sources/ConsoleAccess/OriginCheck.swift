import ClientFoundation
import Foundation

/// Whether a POST comes from the console's own pages: the browser's `Origin` header (or,
/// when a browser sent none, the `Referer`'s origin) must be one of the console's origins.
///
/// An origin is `scheme://host:port` in lower case, the port left out when it is the
/// scheme's default (80 for http, 443 for https), an IPv6 host in brackets. `Origin: null`
/// (a sandboxed frame, a `file:` page, some redirects) is refused, and so is a POST with
/// neither header.
public struct OriginCheck: Sendable, Equatable {
    /// The origins allowed, normalized.
    public let origins: Set<String>

    /// Allows exactly `origins` (each a URL of which only scheme, host and port count, such
    /// as `https://console.example.com` or `http://127.0.0.1:8090/`).
    /// - Throws: ``ConsoleAccessError`` `.invalidArgument` naming a value that is not an
    ///   http or https URL with a host, or when `origins` is empty.
    public init(origins: [String]) throws(ConsoleAccessError) {
        var set = Set<String>()
        for text in origins {
            guard let origin = Self.origin(of: text) else {
                throw ConsoleAccessError(
                    .invalidArgument, "\(Quoting.quoted(text)) is not an http or https URL with a host (such as https://console.example.com)")
            }
            set.insert(origin)
        }
        guard !set.isEmpty else { throw ConsoleAccessError(.invalidArgument, "the console needs at least one origin") }
        self.origins = set
    }

    /// The origins of a console listening on `host`:`port` (`tls`: https), and of
    /// `publicURL` (`--public-url`) when given. A loopback host also allows the same port on
    /// `localhost`, `127.0.0.1` and `[::1]`, the names a browser on that machine may use.
    /// - Throws: ``ConsoleAccessError`` `.invalidArgument` when `publicURL` is not an http or
    ///   https URL, or when the console listens on every address (`0.0.0.0`, `::`) without
    ///   one: a browser's origin then names a host the console cannot know.
    public init(listeningOn host: String, port: Int, tls: Bool, publicURL: String? = nil) throws(ConsoleAccessError) {
        var list: [String] = []
        if let publicURL { list.append(publicURL) }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let scheme = tls ? "https" : "http"
        if ["0.0.0.0", "::", ""].contains(bare) {
            guard publicURL != nil else {
                throw ConsoleAccessError(
                    .invalidArgument,
                    "a console listening on every address (\(host.isEmpty ? "*" : host)) needs --public-url: the URL operators open it at")
            }
        } else if ["127.0.0.1", "::1", "localhost"].contains(bare.lowercased()) {
            list += ["localhost", "127.0.0.1", "[::1]"].map { "\(scheme)://\($0):\(port)" }
        } else {
            list.append("\(scheme)://\(bare.contains(":") ? "[\(bare)]" : bare):\(port)")
        }
        try self.init(origins: list)
    }

    /// Whether a POST with these headers may go on: `Origin` is one of ``origins``; or, with
    /// no `Origin`, the `Referer` is a URL of one of them. `Origin: null`, an origin not
    /// allowed (even with a good `Referer`), and neither header are refused.
    public func allows(originHeader: String?, refererHeader: String?) -> Bool {
        if let originHeader {
            let value = originHeader.trimmingCharacters(in: .whitespaces)
            // An Origin header is an origin alone: no path, no list of several.
            guard value != "null", let origin = Self.origin(of: value),
                let parts = URLComponents(string: value), parts.path.isEmpty, parts.query == nil, parts.fragment == nil
            else { return false }
            return origins.contains(origin)
        }
        guard let refererHeader, let origin = Self.origin(of: refererHeader.trimmingCharacters(in: .whitespaces)) else {
            return false
        }
        return origins.contains(origin)
    }

    /// The origin of `url` (`scheme://host[:port]`, normalized), or nil when it is not an
    /// absolute http or https URL with a host, or carries user information.
    public static func origin(of url: String) -> String? {
        guard url.utf8.count <= 2048, !url.contains(where: { $0.isWhitespace }),
            let components = URLComponents(string: url),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            components.user == nil, components.password == nil,
            let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        let defaultPort = scheme == "https" ? 443 : 80
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        guard let port = components.port else { return "\(scheme)://\(hostPart)" }
        guard (1...65535).contains(port) else { return nil }
        return port == defaultPort ? "\(scheme)://\(hostPart)" : "\(scheme)://\(hostPart):\(port)"
    }
}
