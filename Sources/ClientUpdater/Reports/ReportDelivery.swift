import Foundation

/// Where a device's fleet reports go (docs/fleet-reports.md#delivery): the collector's base
/// URL from the device's own `config.json` (`reportURL`, set by `init --report-url` or a
/// package's template), else the one the channel's signed manifest carries (`reports.url`),
/// which the channel records under `<root>/reports/` once it verified the signature. Nobody
/// on the path can redirect reports: only the device's config or a signed manifest names
/// the URL. No URL: nothing is sent and nothing is recorded.
package enum ReportDelivery {
    /// The longest report URL accepted.
    package static let maxURLBytes = 2048
    /// The file under the root that holds the signed manifest's `reports.url`.
    package static let manifestURLFile = "reports/manifest-report-url"

    /// The collector's base URL: `config.reportURL` when set, else `manifest` (the signed
    /// manifest's `reports.url`); `nil` when neither names a usable URL.
    package static func reportURL(config: DeviceConfig, manifest: String?) -> URL? {
        for candidate in [config.reportURL, manifest] {
            guard let candidate else { continue }
            guard DeviceConfig.reportURLProblem(candidate, allowInsecureHTTP: config.allowInsecureHTTP) == nil else { return nil }
            return URL(string: candidate)
        }
        return nil
    }

    /// The collector's base URL of the root at `layout`: ``reportURL(config:manifest:)``
    /// with the manifest URL the channel recorded (``recordedManifestURL(_:)``).
    package static func reportURL(config: DeviceConfig, layout: RootLayout) -> URL? {
        if config.reportURL != nil { return reportURL(config: config, manifest: nil) }
        return reportURL(config: config, manifest: recordedManifestURL(layout))
    }

    /// The `reports.url` of the last signed manifest the channel verified, if any.
    package static func recordedManifestURL(_ layout: RootLayout) -> String? {
        let path = layout.root + "/" + manifestURLFile
        guard let data = try? BoundedFile.read(path, cap: maxURLBytes + 1, code: UpdaterError.Code.io) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    /// Records (or, with `nil`, forgets) the `reports.url` of a signed manifest whose
    /// signature was verified; unchanged values are not rewritten.
    /// - Throws: ``UpdaterError`` `.io` when the file cannot be written.
    package static func recordManifestURL(_ url: String?, layout: RootLayout) throws {
        let path = layout.root + "/" + manifestURLFile
        guard recordedManifestURL(layout) != url else { return }
        guard let url else {
            if unlink(path) != 0, errno != ENOENT { throw UpdaterError.io("cannot remove", path: path, errno: errno) }
            return
        }
        try AtomicFile.makeDirectory(layout.root + "/reports")
        try AtomicFile.write(Data((url + "\n").utf8), to: path)
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
