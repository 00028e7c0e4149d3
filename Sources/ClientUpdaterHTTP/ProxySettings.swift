import ClientUpdater
import Foundation

/// A proxy server: where to connect and how to talk to it.
public struct ProxyEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// How the proxy is spoken to.
    public enum Kind: String, Sendable, Hashable {
        /// An HTTP proxy (`http://`): `CONNECT` tunnels to the origin.
        case http
        /// A SOCKS5 proxy (`socks5://`, `socks5h://`).
        case socks5
    }

    public var kind: Kind
    public var host: String
    public var port: Int
    /// `user:password` from the proxy URL, sent as `Proxy-Authorization: Basic`.
    public var credentials: String?

    public init(kind: Kind = .http, host: String, port: Int, credentials: String? = nil) {
        self.kind = kind
        self.host = host
        self.port = port
        self.credentials = credentials
    }

    /// Parses a proxy the way curl reads `-x` and `*_proxy`: `host`, `host:port` or
    /// `scheme://[user:password@]host[:port]`; the port defaults to 1080 like curl's.
    /// `https://` proxies (TLS to the proxy itself) are not supported.
    ///
    /// - Throws: ``HTTPTransportError`` `.configInvalid` naming `source` and the problem.
    public init(parsing text: String, source: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let withScheme = trimmed.contains("://") ? trimmed : "http://" + trimmed
        guard let parts = URLComponents(string: withScheme), let host = parts.host, !host.isEmpty else {
            throw HTTPTransportError(.configInvalid, "\(source): '\(text)' is not a proxy URL (use http://host:port)")
        }
        switch parts.scheme?.lowercased() {
        case "http": kind = .http
        case "socks5", "socks5h": kind = .socks5
        default:
            throw HTTPTransportError(.configInvalid, "\(source): proxy scheme '\(parts.scheme ?? "")' is not supported (use http:// or socks5://)")
        }
        self.host = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        port = parts.port ?? 1080
        if let user = parts.user {
            credentials = (user.removingPercentEncoding ?? user) + ":" + ((parts.password?.removingPercentEncoding) ?? "")
        }
    }

    /// `http://host:port` (never the credentials).
    public var description: String { "\(kind.rawValue)://\(address)" }

    /// `host:port` (`[v6]:port`), never the credentials: how messages name the proxy.
    public var address: String { host.contains(":") && !host.hasPrefix("[") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// Which proxy a request goes through, decided like curl does from the `*_proxy`
/// environment variables (or an explicit proxy such as `config.json`'s `proxy`) and
/// `NO_PROXY`.
///
/// - `http:` URLs use `http_proxy` (then `HTTP_PROXY`), `https:` URLs use `https_proxy`
///   (then `HTTPS_PROXY`); both fall back to `all_proxy`/`ALL_PROXY`. Lowercase wins, as
///   in curl. An explicit proxy replaces all of these (curl's `-x`).
/// - `no_proxy` (then `NO_PROXY`): comma- or space-separated entries. `*` alone disables
///   proxies; a host name matches itself and every name under it (`example.com` and
///   `.example.com` both match `a.example.com`); an IP address matches itself; an entry
///   with `:port` matches only that port. Loopback is not exempt unless listed (curl).
public struct ProxySettings: Sendable, Hashable {
    public var httpProxy: ProxyEndpoint?
    public var httpsProxy: ProxyEndpoint?
    /// The parsed `NO_PROXY` entries.
    public var noProxy: [NoProxyEntry]

    public init(httpProxy: ProxyEndpoint? = nil, httpsProxy: ProxyEndpoint? = nil, noProxy: [NoProxyEntry] = []) {
        self.httpProxy = httpProxy
        self.httpsProxy = httpsProxy
        self.noProxy = noProxy
    }

    /// No proxy at all.
    public static let direct = ProxySettings()

    /// Reads the environment; `explicit` (e.g. `config.json`'s `proxy`) replaces the
    /// `*_proxy` variables but `NO_PROXY` still applies, as with `curl -x`.
    /// - Throws: ``HTTPTransportError`` `.configInvalid` for a proxy value that cannot be parsed.
    public init(environment: [String: String], explicit: String? = nil) throws {
        func value(_ names: String...) -> (String, String)? {
            for name in names { if let v = environment[name], !v.isEmpty { return (name, v) } }
            return nil
        }
        func endpoint(_ found: (String, String)?) throws -> ProxyEndpoint? {
            guard let (name, text) = found else { return nil }
            return try ProxyEndpoint(parsing: text, source: name)
        }
        if let explicit, !explicit.isEmpty {
            let proxy = try ProxyEndpoint(parsing: explicit, source: "config.json proxy")
            httpProxy = proxy
            httpsProxy = proxy
        } else {
            let all = value("all_proxy", "ALL_PROXY")
            httpProxy = try endpoint(value("http_proxy", "HTTP_PROXY") ?? all)
            httpsProxy = try endpoint(value("https_proxy", "HTTPS_PROXY") ?? all)
        }
        noProxy = NoProxyEntry.parse(value("no_proxy", "NO_PROXY")?.1 ?? "")
    }

    /// The proxy for `url`, or `nil` to connect directly.
    public func proxy(for url: URL) -> ProxyEndpoint? {
        let scheme = url.scheme?.lowercased()
        guard let chosen = scheme == "https" ? httpsProxy : scheme == "http" ? httpProxy : nil,
            let host = url.host
        else { return nil }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return noProxy.contains { $0.matches(host: host, port: port) } ? nil : chosen
    }
}

/// One `NO_PROXY` entry.
public struct NoProxyEntry: Sendable, Hashable {
    /// Lowercased host or domain without a leading dot; `*` for everything.
    public var host: String
    public var port: Int?

    public init(host: String, port: Int? = nil) {
        self.host = host
        self.port = port
    }

    /// Splits a `NO_PROXY` value at commas and spaces.
    public static func parse(_ text: String) -> [NoProxyEntry] {
        text.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }).compactMap { raw in
            var item = raw.lowercased()
            var port: Int?
            if item.hasPrefix("[") {  // [::1]:8080
                if let close = item.firstIndex(of: "]") {
                    let rest = item[item.index(after: close)...]
                    if rest.hasPrefix(":") { port = Int(rest.dropFirst()) }
                    item = String(item[item.index(after: item.startIndex)..<close])
                }
            } else if item.filter({ $0 == ":" }).count == 1, let colon = item.lastIndex(of: ":") {
                port = Int(item[item.index(after: colon)...])
                item = String(item[..<colon])
            }
            while item.hasPrefix(".") { item.removeFirst() }
            while item.hasSuffix(".") { item.removeLast() }
            return item.isEmpty ? nil : NoProxyEntry(host: item, port: port)
        }
    }

    /// Whether a request to `host:port` bypasses the proxy because of this entry.
    public func matches(host requestHost: String, port requestPort: Int) -> Bool {
        if host == "*" { return true }
        if let port, port != requestPort { return false }
        var name = requestHost.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        while name.hasSuffix(".") { name.removeLast() }
        return name == host || name.hasSuffix("." + host)
    }
}
