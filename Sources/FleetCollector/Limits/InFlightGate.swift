import Synchronization

/// At most `limit` batches read or stored at once: the rest get 503 with `Retry-After`, so
/// memory stays bounded (each holds at most two batch-sized buffers).
public final class InFlightGate: Sendable {
    let limit: Int
    private let count = Mutex(0)

    /// A gate of `limit` places.
    public init(limit: Int) { self.limit = max(1, limit) }

    /// Takes a place; `false` when all are taken.
    public func enter() -> Bool {
        count.withLock { n in
            guard n < limit else { return false }
            n += 1
            return true
        }
    }

    /// Gives a place back.
    public func leave() { count.withLock { $0 -= 1 } }
}
