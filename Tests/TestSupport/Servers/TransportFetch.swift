import ClientUpdater
import Foundation
import Synchronization

/// Collects a transport body in memory (tests only).
public final class BodyCollector: Sendable {
    private let storage = Mutex(Data())
    public init() {}
    public var data: Data { storage.withLock { $0 } }
    public func append(_ chunk: UnsafeRawBufferPointer) { storage.withLock { $0.append(contentsOf: chunk) } }
}

extension Transport {
    /// GET into memory (tests only): the response head and the whole body.
    public func fetchAll(
        _ url: URL, headers: [String: String] = [:], idleTimeout: Duration = .seconds(5), timeLimit: Duration? = nil
    ) async throws -> (TransportResponse, Data) {
        let body = BodyCollector()
        let request = TransportRequest(url: url, headers: headers, idleTimeout: idleTimeout, timeLimit: timeLimit)
        let response = try await get(request) { body.append($0) }
        return (response, body.data)
    }
}

/// Deterministic pseudo-random bytes (so failures reproduce).
public func deterministicBytes(_ count: Int, seed: UInt64) -> Data {
    var state = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
    var out = [UInt8](repeating: 0, count: count)
    for i in 0..<count {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        out[i] = UInt8(truncatingIfNeeded: state >> 33)
    }
    return Data(out)
}
