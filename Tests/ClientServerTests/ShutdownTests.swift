import ClientServer
import ClientUpdater
import Foundation
import Logging
import ServiceLifecycle
import Testing

@Suite struct ShutdownTests {
    /// Graceful shutdown (what SIGTERM triggers in `runService`) ends open event streams
    /// and the server, instead of hanging on them.
    @Test func gracefulShutdownEndsEventStreams() async throws {
        let handler = FakeControlHandler()
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let server = try ClientServer(configuration: ServerHarness.configuration(), control: handler, logger: ServerHarness.quietLogger)
        let wrapper = PortReporting(server: server, report: { continuation.yield($0) })
        let group = ServiceGroup(configuration: .init(services: [wrapper], logger: ServerHarness.quietLogger))
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        let stream = try await EventStreamConnection(port: port)
        _ = try await stream.waitFor(": connected")
        await group.triggerGracefulShutdown()
        #expect(try await stream.waitForClose(), "the event stream was closed by the server")
        try await running.value
    }
}

/// Runs a server as a service and reports its port.
struct PortReporting: Service {
    let server: ClientServer
    let report: @Sendable (Int) -> Void
    func run() async throws { try await server.run { report($0) } }
}
