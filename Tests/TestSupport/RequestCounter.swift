import Foundation

/// A thread-safe counter for a stand-in server's script (requests or pages answered).
public final class RequestCounter: @unchecked Sendable {
    // @unchecked Sendable: `count` is guarded by `lock`.
    private let lock = NSLock()
    private var count = 0

    public init() {}

    /// Counts one more and returns the new count.
    public func next() -> Int {
        lock.withLock {
            count += 1
            return count
        }
    }

    /// The count so far.
    public var value: Int { lock.withLock { count } }
}
