import Synchronization

/// The places a batch's work takes: while its body is read, one of its source address's
/// ``reads`` places (more: 429), so that slow bodies from one address hold nothing of other
/// devices; then, to decompress, decode and store it, one of `limit` places collector-wide
/// (more: 503 with `Retry-After`), so memory stays bounded (each holds at most two
/// batch-sized buffers).
public final class InFlightGate: Sendable {
    let limit: Int
    /// Bodies read at once from one source address.
    public let reads: AddressSlots
    /// The slowest average pace of a body once its first seconds have passed (bytes a second; 0: none).
    public let minBodyBytesPerSecond: Int
    private let count = Mutex(0)

    /// A gate of `limit` places, `readsPerAddress` bodies read at once per source address.
    public init(limit: Int, readsPerAddress: Int = 8, minBodyBytesPerSecond: Int = 1024) {
        self.limit = max(1, limit)
        reads = AddressSlots(limit: readsPerAddress)
        self.minBodyBytesPerSecond = max(0, minBodyBytesPerSecond)
    }

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
