import Foundation
import Synchronization

/// A thread-safe counter for a stand-in server's script (requests or pages answered).
public final class RequestCounter: Sendable {
    private let count = Mutex(0)

    public init() {}

    /// Counts one more and returns the new count.
    public func next() -> Int {
        count.withLock { count in
            count += 1
            return count
        }
    }

    /// The count so far.
    public var value: Int { count.withLock { $0 } }
}
