import ClientUpdater
import Foundation
import Synchronization

/// A slow transport on demand: it serves through another transport, but the body of one
/// path stops half way until the test calls ``release()``. While it is held the download
/// is in progress for as long as the test needs, without sleeping and without a timed
/// assertion. Counts the requests of every path.
public final class HeldTransport: Transport, Sendable {
    private struct State {
        var requests: [String: Int] = [:]
        var released = false
        var holding = 0
        var finished = 0
        var releaseWaiters: [CheckedContinuation<Void, Never>] = []
        var holdWaiters: [CheckedContinuation<Void, Never>] = []
    }
    private let inner: any Transport
    private let heldPath: String
    private let state = Mutex(State())

    /// - Parameter heldPath: the URL path whose body is held (e.g. `/stable/v2.0.0.tar.gz`).
    public init(_ inner: any Transport, holding heldPath: String) {
        self.inner = inner
        self.heldPath = heldPath
    }

    /// How many GETs of `path` were made.
    public func requests(to path: String) -> Int { state.withLock { $0.requests[path] ?? 0 } }
    /// How many bodies of the held path were delivered to their end.
    public var finished: Int { state.withLock { $0.finished } }

    /// Returns once a body of the held path is held half way.
    public func waitUntilHolding() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.holding > 0 { return true }
                s.holdWaiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Lets every held body (and every later one) run to its end.
    public func release() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.released = true
            defer { s.releaseWaiters = [] }
            return s.releaseWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    public func get(_ request: TransportRequest, sink: @Sendable (UnsafeRawBufferPointer) throws -> Void) async throws -> TransportResponse {
        try await get(request, head: { _ in }, sink: sink)
    }

    public func get(
        _ request: TransportRequest, head: @Sendable (TransportResponse) throws -> Void,
        sink: @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> TransportResponse {
        let path = request.url.path
        state.withLock { $0.requests[path, default: 0] += 1 }
        let body = Mutex(Data())
        let response = try await inner.get(request) { chunk in body.withLock { $0.append(contentsOf: chunk) } }
        let data = body.withLock { $0 }
        try head(response)
        guard path == heldPath else {
            try data.withUnsafeBytes { try sink($0) }
            return response
        }
        let half = data.count / 2
        try data.prefix(half).withUnsafeBytes { try sink($0) }
        await hold()
        try data.dropFirst(half).withUnsafeBytes { try sink($0) }
        state.withLock { $0.finished += 1 }
        return response
    }

    private func hold() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (go, holders) = state.withLock { s -> (Bool, [CheckedContinuation<Void, Never>]) in
                s.holding += 1
                defer { s.holdWaiters = [] }
                if s.released { return (true, s.holdWaiters) }
                s.releaseWaiters.append(continuation)
                return (false, s.holdWaiters)
            }
            for holder in holders { holder.resume() }
            if go { continuation.resume() }
        }
        state.withLock { $0.holding -= 1 }
    }
}
