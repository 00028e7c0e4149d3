import ClientUpdater
import Foundation
import MeteorHotCodePush

/// Helpers over a Meteor `bundled_www` folder (generated, or the reference set).
enum MeteorFixture {
    /// The served assets of the embedded bundle in `www/application`, as the Meteor channel
    /// describes them (client entries by URL path, their source maps, index.html at `/`).
    static func embeddedAssets(www: String, layout: RootLayout) throws -> (id: String, assets: [ServedAsset]) {
        guard let rootURL = URL(string: "http://localhost:3000/") else { throw CocoaError(.fileReadInvalidFileName) }
        let channel = MeteorChannel(
            layout: layout, rootURL: rootURL, platform: .ios,
            embeddedPath: www + "/application", transport: NoNetwork(), options: .init(logger: .quiet))
        guard let embedded = try channel.embeddedVersion() else { throw CocoaError(.fileReadNoSuchFile) }
        return (embedded.id, try channel.servedAssets(for: embedded))
    }
}

/// A transport for tests that must not touch the network.
struct NoNetwork: Transport {
    func get(_ request: TransportRequest, sink: @Sendable (UnsafeRawBufferPointer) throws -> Void) async throws -> TransportResponse {
        throw UpdaterError(.network, "no network in this test: \(request.url)")
    }
}
