import ClientUpdater
import Foundation

/// Which redirects ``HTTPTransport`` follows (curl `-L` with a safer rule).
///
/// - 301, 302, 303, 307 and 308 with a `Location` are followed, always as a GET (the
///   transport only sends GETs, so the method question of 301/302/303 does not arise).
/// - `Location` may be relative; it is resolved against the URL that answered.
/// - Only to `http:` or `https:`; never from `https:` down to `http:` (curl allows that;
///   a signed release would survive it, but the privacy of the request would not).
/// - At most `maxRedirects` hops; the request's own headers (`Range`, `If-None-Match`)
///   are sent again to the new URL, like curl.
package enum RedirectRule {
    /// Statuses that carry a `Location` to follow.
    package static let statuses: Set<Int> = [301, 302, 303, 307, 308]

    /// The next URL after `status` from `url` with `location`, or `nil` when the response
    /// is not a redirect to follow (it is then returned to the caller as is).
    /// - Parameter hop: the number of this redirect (1 for the first).
    /// - Throws: ``HTTPTransportError`` `.network` with `TransportFailure.redirect(_:)`.
    package static func next(from url: URL, status: Int, location: String?, hop: Int, maxRedirects: Int) throws -> URL? {
        guard statuses.contains(status), let location, !location.isEmpty else { return nil }
        guard hop <= maxRedirects else {
            throw HTTPTransportError.network(url, .redirect("more than \(maxRedirects) redirects"))
        }
        guard let target = URL(string: location, relativeTo: url)?.absoluteURL, target.host?.isEmpty == false else {
            throw HTTPTransportError.network(url, .redirect("Location '\(location)' is not a URL"))
        }
        let from = url.scheme?.lowercased()
        switch target.scheme?.lowercased() {
        case "https":
            return target
        case "http" where from == "http":
            return target
        case "http":
            throw HTTPTransportError.network(url, .redirect("\(target.absoluteString) would downgrade https: to http:"))
        default:
            throw HTTPTransportError.network(url, .redirect("\(target.absoluteString) is not an http: or https: URL"))
        }
    }
}
