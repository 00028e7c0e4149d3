import ClientEngine
import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import DeviceSetup
import Foundation
import Synchronization
import TestSupport
import Testing

/// What a simulation gives `DeviceEngine.Options` reaches the root's parts: the downloader's
/// retries and what they wait on, its idle timeout, and the link the download policy reads.
@Suite struct DeviceEngineOptionsTests {
    /// A real transport whose archive answers `503` the first `failures` times; it notes the
    /// idle timeout of every request.
    final class FlakyArchive: HeadFirstTransport {
        let inner = DefaultTransport(settings: HTTPTransportSettings())
        private let state: Mutex<(failures: Int, idle: [Duration])>
        var idleTimeouts: [Duration] { state.withLock { $0.idle } }

        init(failures: Int) { state = Mutex((failures, [])) }

        func get(
            _ request: TransportRequest, head: @Sendable (TransportResponse) throws -> Void,
            sink: @Sendable (UnsafeRawBufferPointer) throws -> Void
        ) async throws -> TransportResponse {
            let fail = state.withLock { state -> Bool in
                state.idle.append(request.idleTimeout)
                guard request.url.path.hasSuffix(".tar.gz"), state.failures > 0 else { return false }
                state.failures -= 1
                return true
            }
            guard fail else { return try await inner.get(request, head: head, sink: sink) }
            let response = TransportResponse(status: 503, headers: ["content-length": "0"])
            try head(response)
            return response
        }
    }

    /// Notes each wait and returns at once: the downloader's time passes, nobody waits.
    final class NotedSleeper: Sleeper {
        private let waits = Mutex<[Duration]>([])
        var noted: [Duration] { waits.withLock { $0 } }
        func sleep(for duration: Duration) async throws { waits.withLock { $0.append(duration) } }
    }

    /// Ten- and twenty-minute backoffs that return at once: the engine's downloader waits on
    /// the given sleeper by the given policy (a `TaskSleeper` would hold the test for half an
    /// hour; the standard policy would wait other times), with the given idle timeout.
    @Test func theRetriesFollowTheGivenPolicyOnTheGivenSleeper() async throws {
        let device = try DeviceFixture()
        try device.publish("1.0.0")
        let transport = FlakyArchive(failures: 2)
        let sleeper = NotedSleeper()
        var options = DeviceEngine.Options(transport: transport, logger: .quiet)
        options.retry = RetryPolicy(maxAttempts: 3, initialDelay: .seconds(600), maxDelay: .seconds(1200), jitter: 0)
        options.sleeper = sleeper
        options.idleTimeout = .seconds(7)
        let engine = try DeviceEngine.open(device.layout, options: options)
        let report = try await engine.updater.install()
        #expect(report.result == .installed, "\(report.message)")
        #expect(sleeper.noted == [.seconds(600), .seconds(1200)])
        #expect(transport.idleTimeouts.contains(.seconds(7)), "\(transport.idleTimeouts)")
    }

    /// A root that never downloads on a metered link, opened with a link that says it is
    /// metered: the check defers, naming the given link (the root's own probe would read the
    /// machine's interfaces).
    @Test func theGivenLinkDecidesTheDownloadPolicy() async throws {
        let device = try DeviceFixture()
        try device.publish("1.0.0")
        device.config.metered = "never"
        try device.config.save(device.layout)
        var options = DeviceEngine.Options(logger: .quiet)
        options.linkProbe = FixedLinkProbe(LinkReading(metered: true, source: "the test's link"))
        let report = try await DeviceEngine.open(device.layout, options: options).updater.install()
        #expect(report.result == .deferred, "\(report.message)")
        #expect(report.message.contains("the test's link"), "\(report.message)")
    }
}
