import ClientFoundation
import Foundation

/// Where a device's fleet reports go (docs/fleet-reports.md#delivery): the collector's base
/// URL of the device's own `config.json` (`reportURL`, set by `init --report-url` or a
/// package's template). Nobody on the path can redirect reports: only the device's config
/// names the URL. No URL: nothing is recorded and nothing is sent.
package enum ReportDelivery {
    /// The longest report URL accepted.
    package static let maxURLBytes = 2048

    /// The collector's base URL, or `nil` when the config names none it may use: the one
    /// rule that turns reports on, for the journal (what is recorded) and the sender (what
    /// is sent) alike.
    package static func reportURL(config: DeviceConfig) -> URL? {
        guard let url = config.reportURL, DeviceConfig.reportURLProblem(url, allowInsecureHTTP: config.allowInsecureHTTP) == nil else {
            return nil
        }
        return URL(string: url)
    }
}

extension DeviceConfig {
    /// Why `url` cannot be a collector's base URL, or nil: `https:`, or `http:` to loopback
    /// (other hosts with `allowInsecureHTTP`), the rules of `URLPolicy` for a channel's URLs;
    /// no user or password, query or fragment (it is a base the device appends `v1/reports` to).
    package static func reportURLProblem(_ url: String, allowInsecureHTTP: Bool) -> String? {
        guard url.utf8.count <= ReportDelivery.maxURLBytes else {
            return "is \(url.utf8.count) bytes, more than \(ReportDelivery.maxURLBytes)"
        }
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased() else { return "'\(url)' is not a URL" }
        guard scheme == "http" || scheme == "https" else {
            return "'\(url)' must be an https: or http: URL (a collector's base URL, e.g. https://reports.example.com/)"
        }
        if case .refused(let why) = URLPolicy.check(parsed, manifestIsFile: false, allowInsecureHTTP: allowInsecureHTTP) {
            return why
        }
        if parsed.user != nil || parsed.password != nil { return "'\(url)' must not carry a user or password" }
        if parsed.query != nil || parsed.fragment != nil { return "'\(url)' must not have a query or fragment" }
        return nil
    }
}
