import ClientUpdater
import Foundation
import SignedManifest

/// The step before a new manifest is verified (TUF specification §5.3): walk the channel's roots from
/// the one the device trusts, `root/<N+1>.json` beside `manifest.json`, until the server
/// has no next one, storing each that verifies; then refuse to go on with an expired root.
struct TrustRefresh {
    let store: TrustStore
    let downloader: Downloader
    let manifestURL: URL
    let now: Date

    /// Walks the roots only when the held one has expired (a check that reads no new
    /// manifest needs no newer root), so an expired root is refused or recovered from.
    func runIfExpired() async throws {
        if try store.current().isExpired(at: now) { _ = try await run() }
    }

    /// The root to verify manifests with.
    /// - Throws: ``SignedManifestError`` `.untrustedRoot` for a refused next root (nothing
    ///   stored for it), `.rootExpired` when the newest trusted root has expired.
    func run() async throws -> TrustRoot {
        var trusted = try store.current()
        for _ in 0..<RootChain.maxSteps {
            guard let url = URL(string: "root/\(trusted.version + 1).json", relativeTo: manifestURL)?.absoluteURL else { break }
            let fetched: Downloader.SmallFetch
            do {
                fetched = try await downloader.fetchSmall(url, cap: TrustRoot.maxBytes)
            } catch let error as UpdaterError where error.httpStatus == 404 || error.httpStatus == 410 {
                break  // no newer root: the one the device has is current
            }
            guard case .fetched(let body, _) = fetched else { break }
            trusted = try RootChain.verifyNext(body, after: trusted, source: url.absoluteString).get()
            try store.save(trusted)
        }
        if let expired = RootChain.expiryProblem(trusted, now: now, source: "trust root \(trusted.version)") { throw expired }
        return trusted
    }
}
