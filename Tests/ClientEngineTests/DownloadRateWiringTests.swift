import ClientEngine
import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import DeviceSetup
import Foundation
import Synchronization
import TestSupport
import Testing

/// The device's `downloadRate` reaches the transport on the archive's request only: the
/// engine opened on a root builds the cap from the root's settings.
@Suite struct DownloadRateWiringTests {
    /// A real transport that notes, per path, the cap each request carried.
    final class CapRecorder: HeadFirstTransport {
        let inner = DefaultTransport(settings: HTTPTransportSettings())
        private let seen = Mutex<[(String, Int64?)]>([])
        var requests: [(path: String, cap: Int64?)] { seen.withLock { $0.map { (path: $0.0, cap: $0.1) } } }

        func get(
            _ request: TransportRequest, head: @Sendable (TransportResponse) throws -> Void,
            sink: @Sendable (UnsafeRawBufferPointer) throws -> Void
        ) async throws -> TransportResponse {
            seen.withLock { $0.append((request.url.path, request.rateLimiter?.rate?.bytesPerSecond)) }
            return try await inner.get(request, head: head, sink: sink)
        }
    }

    @Test func theArchiveIsCappedAndTheManifestIsNot() async throws {
        let device = try DeviceFixture()
        try device.publish("1.0.0")
        device.config.downloadRate = "10GB/s"  // the cap is carried, and slows nothing here
        try device.config.save(device.layout)
        let transport = CapRecorder()
        let engine = try DeviceEngine.open(device.layout, options: .init(transport: transport, logger: .quiet))
        let report = try await engine.updater.install()
        #expect(report.result == .installed, "\(report.message)")
        let requests = transport.requests
        #expect(requests.contains { $0.path == "/stable/v1.0.0.tar.gz" && $0.cap == 10_000_000_000 }, "\(requests)")
        #expect(requests.contains { $0.path == "/stable/manifest.json" })
        #expect(requests.filter { $0.path != "/stable/v1.0.0.tar.gz" }.allSatisfy { $0.cap == nil }, "\(requests)")
    }

    @Test func noSettingNoCap() async throws {
        let device = try DeviceFixture()
        try device.publish("1.0.0")
        let transport = CapRecorder()
        let engine = try DeviceEngine.open(device.layout, options: .init(transport: transport, logger: .quiet))
        let report = try await engine.updater.install()
        #expect(report.result == .installed, "\(report.message)")
        #expect(transport.requests.contains { $0.path == "/stable/v1.0.0.tar.gz" })
        #expect(transport.requests.allSatisfy { $0.cap == nil })
    }

    /// `clientctl download set --download-rate` under a running `serve`: the engine opened
    /// before the change takes the new cap at its next download.
    @Test func aCapSetWhileRunningAppliesToTheNextDownload() async throws {
        let device = try DeviceFixture()
        try device.publish("1.0.0")
        let transport = CapRecorder()
        let engine = try DeviceEngine.open(device.layout, options: .init(transport: transport, logger: .quiet))
        #expect(try await engine.updater.install().result == .installed)
        #expect(transport.requests.allSatisfy { $0.cap == nil })

        var changed = try DeviceConfig.load(device.layout)
        changed.downloadRate = "10GB/s"
        try changed.save(device.layout)
        try device.publish("1.1.0")
        let report = try await engine.updater.install()
        #expect(report.result == .installed && report.version == "1.1.0", "\(report.message)")
        #expect(transport.requests.contains { $0.path == "/stable/v1.1.0.tar.gz" && $0.cap == 10_000_000_000 }, "\(transport.requests)")
    }
}
