import Foundation

/// Runs blocking work (a socket read with a timeout, a wait for a child) on a thread of its
/// own and suspends the calling task until it is done.
///
/// Swift Testing runs the suite's tests on the cooperative pool, one thread per core; a test
/// that blocks one of them for seconds starves the in-process servers and timers of every
/// test beside it.
public func offload<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}
