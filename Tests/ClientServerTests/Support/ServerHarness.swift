import ClientServer
import ClientUpdater
import Foundation
import Logging
import ServingCore
import TestSupport

/// Runs a ``ClientServer`` on 127.0.0.1 with a system-chosen port for one test.
enum ServerHarness {
    static func withServer<T: Sendable>(_ server: ClientServer, _ body: @Sendable (Int) async throws -> T) async throws -> T {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let task = Task { try await server.run { port in continuation.yield(port) } }
        defer { task.cancel() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else { throw LoopbackHTTP.Failure(description: "server did not start") }
        return try await body(port)
    }

    static func configuration(www: String? = nil, csp: String? = nil, fileLimit: Int = 1 << 20) -> ServerConfiguration {
        ServerConfiguration(port: 0, contentSecurityPolicy: csp, wwwDirectory: www, memoryCacheFileLimit: fileLimit)
    }

    static var quietLogger: Logger {
        var logger = Logger(label: "test.serve")
        logger.logLevel = .critical
        return logger
    }
}
