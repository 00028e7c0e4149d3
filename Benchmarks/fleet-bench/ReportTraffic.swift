import ClientUpdater
import Foundation
import Synchronization

/// Requests and bytes of report delivery, per phase of the simulation.
struct TrafficCount: Sendable {
    var requests = 0
    /// Request line, headers, body, and the answer's status line, headers and body.
    var bytes = 0
    var bodyBytes = 0
}

/// Counts what the devices' report senders put on the wire, per phase (set by the driver
/// between windows of checks, never while devices run).
final class ReportTraffic: Sendable {
    private struct State {
        var phase = "warm-up"
        var counts: [String: TrafficCount] = [:]
    }
    private let state = Mutex(State())

    var phase: String {
        get { state.withLock { $0.phase } }
        set { state.withLock { $0.phase = newValue } }
    }

    func record(request: Int, body: Int, answer: Int) {
        state.withLock { s in
            s.counts[s.phase, default: TrafficCount()].requests += 1
            s.counts[s.phase, default: TrafficCount()].bytes += request + body + answer
            s.counts[s.phase, default: TrafficCount()].bodyBytes += body
        }
    }

    var counts: [String: TrafficCount] { state.withLock { $0.counts } }
}

/// The devices' transport for reports: the library's own (`DefaultTransport`), counting the
/// bytes of each exchange as HTTP/1.1 carries them (what the test of a quiet day counts:
/// the request line, the headers sent, `Host` and `Content-Length`, the body; the status
/// line, the answer's headers and body).
struct CountingTransport: Transport {
    let inner: any Transport
    let traffic: ReportTraffic

    func get(_ request: TransportRequest, sink: @Sendable (UnsafeRawBufferPointer) throws -> Void) async throws -> TransportResponse {
        try await inner.get(request, sink: sink)
    }

    func get(
        _ request: TransportRequest, head: @Sendable (TransportResponse) throws -> Void, sink: @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> TransportResponse {
        try await inner.get(request, head: head, sink: sink)
    }

    func exchange(_ request: TransportExchange) async throws -> TransportReply {
        let reply = try await inner.exchange(request)
        let host = request.url.host.map { h in request.url.port.map { "\(h):\($0)" } ?? h } ?? ""
        var head = "\(request.method) \(request.url.path) HTTP/1.1\r\nHost: \(host)\r\n"
        head += request.headers.map { "\($0.key): \($0.value)\r\n" }.joined()
        head += "Content-Length: \(request.body.count)\r\n\r\n"
        let answer = "HTTP/1.1 \(reply.status) OK\r\n" + reply.headers.map { "\($0.key): \($0.value)\r\n" }.joined() + "\r\n"
        traffic.record(request: head.utf8.count, body: request.body.count, answer: answer.utf8.count + reply.body.count)
        return reply
    }
}
