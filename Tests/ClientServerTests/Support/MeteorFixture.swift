import ClientUpdater
import Foundation
import MeteorHotCodePush

/// The reference Meteor fixtures in `<package root>/../shared/fixtures/meteor`.
enum MeteorFixture {
    /// `…/shared/fixtures/meteor/bundled_www`, or nil when the shared folder is absent.
    static var bundledWWW: String? {
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let path = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/fixtures/meteor/bundled_www").path
        return FileManager.default.fileExists(atPath: path + "/application/program.json") ? path : nil
    }

    static let skipMessage = "shared Meteor fixtures not found at <package root>/../shared/fixtures/meteor; skipping"

    /// The served assets of the embedded bundle in `www/application`, as the Meteor channel
    /// describes them (client entries by URL path, their source maps, index.html at `/`).
    static func embeddedAssets(www: String, layout: RootLayout) throws -> (id: String, assets: [ServedAsset]) {
        guard let rootURL = URL(string: "http://localhost:3000/") else { throw CocoaError(.fileReadInvalidFileName) }
        let channel = MeteorChannel(
            layout: layout, rootURL: rootURL, platform: .ios,
            embeddedPath: www + "/application", transport: NoNetwork())
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
