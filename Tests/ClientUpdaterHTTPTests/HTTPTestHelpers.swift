import ClientUpdater
import ClientUpdaterHTTP
import Foundation
import TestSupport
import Testing

/// The transport suites run one test at a time: several have timeouts of a fraction of a
/// second, and others block a thread on purpose (a slow sink) or start servers.
@Suite(.serialized) enum HTTPSuites {}

/// Runs blocking work (openssl, starting nginx or tinyproxy) on a thread of its own, so
/// it does not hold one of the few threads of Swift's concurrency pool.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// A temporary folder with helpers to write files (transport tests).
final class HTTPScratch: Sendable {
    let folder: TemporaryDirectory
    var path: String { folder.path }
    init() throws { folder = try TemporaryDirectory("http-transport") }

    /// Writes `data` to `name` under the folder and returns its full path.
    @discardableResult
    func write(_ name: String, _ data: Data) throws -> String {
        let full = folder(name)
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: full))
        return full
    }
}

/// Deterministic pseudo-random bytes of these tests (seed 7 unless given).
func httpTestBytes(_ count: Int, seed: UInt64 = 7) -> Data { deterministicBytes(count, seed: seed) }

/// Runs `body` with a transport on a registry of its own, shut down afterwards (also on
/// failure), so connection counts and pools never mix between tests.
func withTransport<T>(
    _ settings: HTTPTransportSettings = HTTPTransportSettings(),
    _ body: (HTTPTransport) async throws -> T
) async throws -> T {
    let registry = HTTPClientRegistry()
    let transport = HTTPTransport(settings: settings, registry: registry)
    do {
        let result = try await body(transport)
        try await registry.shutdown()
        return result
    } catch {
        try? await registry.shutdown()
        throw error
    }
}

/// A file of `size` zero bytes (sparse: costs no disk).
func sparseFile(_ path: String, size: Int64) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw UpdaterError.io("cannot create", path: path, errno: errno) }
    defer { close(fd) }
    guard ftruncate(fd, off_t(size)) == 0 else { throw UpdaterError.io("cannot size", path: path, errno: errno) }
}
