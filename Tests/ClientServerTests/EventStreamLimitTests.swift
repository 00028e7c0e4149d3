import ClientServer
import ClientUpdater
import Foundation
import TestSupport
import Testing

/// Issue 10 point 5: an event stream ends the moment its client leaves (not at the next
/// heartbeat), and open streams are capped.
@Suite struct EventStreamLimitTests {
    @Test func aClosedClientFreesItsStreamAtOnce() async throws {
        var configuration = ServerHarness.configuration()
        configuration.eventHeartbeat = .seconds(600)  // only the close can end these streams
        let server = try ClientServer(configuration: configuration, control: FakeControlHandler(), logger: ServerHarness.quietLogger)
        try await ServerHarness.withServer(server) { port in
            for _ in 0..<3 {
                var streams: [EventStreamConnection] = []
                // One at a time: each stream is open (": connected") before the next connects.
                for _ in 0..<20 {
                    let stream = try await EventStreamConnection(port: port)
                    _ = try await stream.waitFor(": connected")
                    streams.append(stream)
                }
                #expect(server.eventStreams.openStreams == 20)
                streams.removeAll()  // closes every socket
                try await Self.waitUntil { server.eventStreams.openStreams == 0 }
                #expect(server.eventStreams.openStreams == 0, "closed clients still hold streams")
            }
        }
    }

    @Test func streamsPastTheCapAreRefused() async throws {
        var configuration = ServerHarness.configuration()
        configuration.maxEventStreams = 4
        let server = try ClientServer(configuration: configuration, control: FakeControlHandler(), logger: ServerHarness.quietLogger)
        try await ServerHarness.withServer(server) { port in
            var streams: [EventStreamConnection] = []
            for _ in 0..<4 {
                let stream = try await EventStreamConnection(port: port)
                _ = try await stream.waitFor(": connected")
                streams.append(stream)
            }
            let refused = try await LoopbackHTTP.request(port: port, "/__clientctl/events")
            #expect(refused.status == 503 && refused.text.contains("too many open event streams"))
            streams.removeLast()
            try await Self.waitUntil { server.eventStreams.openStreams == 3 }
            let again = try await EventStreamConnection(port: port)
            _ = try await again.waitFor(": connected")
            #expect(server.eventStreams.openStreams == 4)
        }
    }

    /// Polls (up to 30 s, for a loaded machine) for a condition the server reaches on its
    /// own; throws naming the open streams when it is not reached.
    static func waitUntil(_ done: @Sendable () -> Bool) async throws {
        try await Poll.until("the server's count of open event streams") { done() }
    }
}
