import Foundation

/// Runs file-system and CPU-heavy work (hashing trees, applying a patch, unpacking) on a
/// thread of its own instead of Swift concurrency's cooperative pool, which has one thread
/// per core: blocking it for seconds would stall `serve`'s request handling on a 2-core
/// device (docs/delta-updates.md#on-the-device).
public enum BlockingWork {
    /// Runs `work` on a new thread and returns its result (or rethrows its error).
    public static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
        }
    }
}
