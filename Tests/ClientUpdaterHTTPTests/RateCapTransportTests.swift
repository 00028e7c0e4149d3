import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import Foundation
import Synchronization
import TestSupport
import Testing

extension HTTPSuites {
    /// The download rate cap in ``HTTPTransport``: it waits between chunks without reading
    /// the socket, so the server is held back by TCP, not buffered in memory.
    @Suite struct RateCapTransportTests {
        /// While the cap waits (on a manual clock that does not move), the server gets no
        /// further ahead than the socket buffers allow, and the transfer is not a stall.
        @Test func theCapHoldsTheServerBackWhileItWaits() async throws {
            let bound = try KernelSocketBuffers.inFlightBound()
            let scratch = try HTTPScratch()
            let size: Int64 = max(128 << 20, 4 * bound)
            try sparseFile(scratch.folder("big.bin"), size: size)
            let server = try LoopbackHTTPServer { _ in
                var r = LoopbackResponse(status: 200, body: .file(path: scratch.folder("big.bin"), offset: 0, length: size))
                r.delivery.dripBytes = 256 * 1024  // the server reports its progress after every chunk
                r.delivery.dripInterval = 0
                return r
            }
            defer { server.stop() }
            let clock = ManualClock()
            let limiter = RateLimiter(rate: ByteRate(bytesPerSecond: 1024), clock: MonotonicClock(clock))
            let received = ReceivedBytes()
            try await withTransport { transport in
                // A short idle timeout: the cap's wait must not count as waiting for the server.
                let request = TransportRequest(url: server.url("/big.bin"), idleTimeout: .seconds(1), rateLimiter: limiter)
                let transfer = Task {
                    try await transport.get(request) { chunk in received.add(chunk.count) }
                }
                try await clock.waitForSleeper()
                // The server's sent count settles once the socket buffers are full (the kernel
                // tells no one: unchanged at five looks in a row).
                var last: Int64 = -1
                var still = 0
                try? await Poll.until("the server's sent count to settle", timeout: 4, every: .milliseconds(20)) {
                    let sent = server.log.first?.bodyBytesSent ?? 0
                    still = sent == last ? still + 1 : 0
                    last = sent
                    return still >= 5
                }
                let taken = received.total
                #expect(taken == limiter.accounting.bytes, "the sink got exactly what the cap counted")
                #expect(taken < 1 << 20, "the cap stopped reading after its burst (\(taken) bytes)")
                #expect(last - taken < bound, "server got \((last - taken) >> 20) MiB ahead of a capped reader (bound \(bound >> 20) MiB)")
                #expect(last < size)
                // Past the idle timeout, the transfer still waits on the cap: it did not fail
                // as stalled (that would have cancelled the wait).
                try await WorldTime.pass(.milliseconds(1500), "the transport's 1 s idle timeout, on the real clock, must pass")
                #expect(clock.sleeperCount == 1)
                transfer.cancel()
                await #expect(throws: CancellationError.self) { _ = try await transfer.value }
            }
        }
    }
}

/// Bytes a sink received.
private final class ReceivedBytes: Sendable {
    private let count = Mutex<Int64>(0)
    func add(_ bytes: Int) { count.withLock { $0 += Int64(bytes) } }
    var total: Int64 { count.withLock { $0 } }
}
