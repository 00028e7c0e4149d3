import Foundation
import Synchronization

/// Counts open event streams and refuses new ones past a limit, so pages that open and
/// drop streams cannot grow the server without bound.
package final class StreamGate: Sendable {
    /// Streams open now.
    private let count = Mutex(0)
    /// Most streams open at once.
    package let limit: Int

    package init(limit: Int) { self.limit = limit }

    /// Streams open now.
    package var openStreams: Int { count.withLock { $0 } }

    /// A ticket for one more stream, or nil at the limit.
    func open() -> Ticket? {
        let admitted = count.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
        return admitted ? Ticket(gate: self) : nil
    }

    fileprivate func release() { count.withLock { $0 -= 1 } }

    /// One open stream; `close()` gives its place back (once).
    final class Ticket: Sendable {
        private let gate: StreamGate
        private let closed = Mutex(false)
        fileprivate init(gate: StreamGate) { self.gate = gate }
        func close() {
            let first = closed.withLock { closed in
                defer { closed = true }
                return !closed
            }
            if first { gate.release() }
        }
    }
}
