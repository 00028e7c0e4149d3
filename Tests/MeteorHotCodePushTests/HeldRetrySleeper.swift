import ClientUpdater
import ClientUpdaterHTTP
import Foundation
import Synchronization
import TestSupport

/// A channel's retry backoff under the test's control: every retry reports itself on
/// ``retries`` (which ends at ``checkEnded()``) and the first one waits until
/// ``release()``; the later ones pass at once.
/// So a test sees the exact moment a failed attempt is about to be retried, and decides
/// what the next attempt meets, without sleeping.
final class HeldRetrySleeper: Sleeper {
    /// One element per retry the channel begins (before it waits).
    let retries: AsyncStream<Void>
    private let reported: AsyncStream<Void>.Continuation
    private let gate = AsyncGate(limit: 1)

    /// Holds the gate, so the first retry waits for ``release()``.
    init() async throws {
        (retries, reported) = AsyncStream.makeStream()
        try await gate.enter()
    }

    func sleep(for duration: Duration) async throws {
        reported.yield()
        try await gate.enter()
        gate.leave()
    }

    /// Lets the held retry (and every later one) go on.
    func release() { gate.leave() }

    /// Ends ``retries``: the check is over (call it when the check returns or throws).
    func checkEnded() { reported.finish() }
}

/// The production transport, connecting directly (no proxy from the environment, so a
/// closed loopback port is refused rather than answered by a proxy), recording how each
/// failed request failed.
final class FailureRecordingTransport: HeadFirstTransport {
    private let inner = DefaultTransport(settings: HTTPTransportSettings())
    private let recorded = Mutex<[String]>([])

    /// How the failed requests failed so far: a ``TransportFailure``'s description, or
    /// the error's when it carries none.
    var failures: [String] { recorded.withLock { $0 } }

    func get(
        _ request: TransportRequest, head: @Sendable (TransportResponse) throws -> Void,
        sink: @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> TransportResponse {
        do { return try await inner.get(request, head: head, sink: sink) } catch {
            let failure = (error as? any TransportFailing)?.transportFailure.map { "\($0)" } ?? "\(error)"
            recorded.withLock { $0.append(failure) }
            throw error
        }
    }
}

/// The production transport, recording the path of every request it is asked for.
final class PathRecordingTransport: HeadFirstTransport {
    /// The paths asked for, shared by the transports a harness makes.
    final class Log: Sendable {
        private let recorded = Mutex<[String]>([])
        var paths: Set<String> { Set(recorded.withLock { $0 }) }
        func append(_ path: String) { recorded.withLock { $0.append(path) } }
        func clear() { recorded.withLock { $0.removeAll() } }
    }

    private let inner = DefaultTransport(settings: HTTPTransportSettings())
    private let log: Log

    init(_ log: Log) { self.log = log }

    func get(
        _ request: TransportRequest, head: @Sendable (TransportResponse) throws -> Void,
        sink: @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> TransportResponse {
        // The path as sent, undecoded and with its trailing slash, as the server logs it.
        log.append(URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? request.url.path)
        return try await inner.get(request, head: head, sink: sink)
    }
}
