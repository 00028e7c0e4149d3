import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import Foundation
import MeteorHotCodePush
import TestSupport
import Testing

/// A Meteor update's assets are downloads: they go under the device's rate cap; the
/// manifest does not.
@Suite struct MeteorRateCapTests {
    @Test func assetsAreCappedAndTheManifestIsNot() async throws {
        let (h, _) = try MeteorHarness.generated(.current)
        let http = try #require(h.http)
        let clock = VirtualClock()
        // A burst far below the assets' size, so the cap waits during the update.
        let limiter = RateLimiter(rate: ByteRate(bytesPerSecond: 100_000), clock: MonotonicClock(clock), burst: 100)
        let channel = MeteorChannel(
            layout: h.layout, rootURL: http.baseURL, platform: .ios, embeddedPath: h.embeddedPath,
            transport: DefaultTransport(settings: HTTPTransportSettings()),
            options: MeteorChannel.Options(maxConnections: 3, retry: h.retry, logger: .quiet, rateLimiter: limiter))
        h.server.serve("version2")
        http.clearLog()
        _ = try await Updater(layout: h.layout, config: h.config, channel: channel, logger: .quiet).install(lockWait: .seconds(5))
        #expect(h.state.pending == "version2")

        let log = try await http.settledLog()
        let manifest = log.filter { $0.request.path == "/__cordova/manifest.json" }
        let assets = log.filter { $0.request.path != "/__cordova/manifest.json" && $0.status == 200 }
        #expect(!manifest.isEmpty && !assets.isEmpty)
        let assetBytes = assets.reduce(Int64(0)) { $0 + $1.bodyBytesSent }
        // The server counts the bytes it wrote: the index page is streamed chunked, so its
        // count includes the chunk framing (a few bytes per 512-byte chunk), which is not body.
        let framing = Int64(64)
        let capped = limiter.accounting.bytes
        #expect(
            capped <= assetBytes && capped >= assetBytes - framing,
            "every asset byte and no manifest byte went under the cap: \(capped) of \(log.map { ($0.request.path, $0.status ?? 0, $0.bodyBytesSent) })"
        )
        #expect(limiter.accounting.waited > .zero)
    }
}
