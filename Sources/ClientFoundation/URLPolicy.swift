import Foundation

/// Which URLs a device may fetch from (docs/formats.md#archive-url-rule).
///
/// `https:` always; `http:` only to loopback hosts unless explicitly allowed; `file:`
/// only when the manifest itself was read from a file. Anything else is refused.
public enum URLPolicy {
    /// The outcome of checking one URL.
    public enum Status: Sendable, Equatable {
        case allowed
        case refused(String)
    }

    /// Checks `url` against the policy.
    /// - Parameters:
    ///   - url: the URL to check.
    ///   - manifestIsFile: the manifest was read from a `file:` URL.
    ///   - allowInsecureHTTP: the device's opt-in for `http:` to other hosts.
    public static func check(_ url: URL, manifestIsFile: Bool, allowInsecureHTTP: Bool) -> Status {
        switch url.scheme?.lowercased() {
        case "https":
            return url.host?.isEmpty == false ? .allowed : .refused("\(url.absoluteString) has no host")
        case "http":
            guard let host = url.host, !host.isEmpty else { return .refused("\(url.absoluteString) has no host") }
            if isLoopback(host) || allowInsecureHTTP { return .allowed }
            return .refused("\(url.absoluteString) uses http: to a non-loopback host (use https:, or `allowInsecureHTTP`)")
        case "file":
            return manifestIsFile ? .allowed : .refused("\(url.absoluteString) is a file: URL in a manifest fetched over the network")
        default:
            return .refused("\(url.absoluteString) has an unsupported scheme (https:, http: to loopback, or file:)")
        }
    }

    /// True for `localhost`, `127.0.0.0/8` and `::1`.
    public static func isLoopback(_ host: String) -> Bool {
        let h = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if h == "localhost" || h == "::1" { return true }
        let parts = h.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
