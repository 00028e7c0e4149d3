import Foundation

/// Counts open event streams and refuses new ones past a limit, so pages that open and
/// drop streams cannot grow the server without bound.
package final class StreamGate: @unchecked Sendable {
    // `open` is guarded by `lock`.
    private let lock = NSLock()
    private var count = 0
    /// Most streams open at once.
    package let limit: Int

    package init(limit: Int) { self.limit = limit }

    /// Streams open now.
    package var openStreams: Int { lock.withLock { count } }

    /// A ticket for one more stream, or nil at the limit.
    func open() -> Ticket? {
        lock.withLock {
            guard count < limit else { return nil }
            count += 1
            return Ticket(gate: self)
        }
    }

    fileprivate func release() { lock.withLock { count -= 1 } }

    /// One open stream; `close()` gives its place back (once).
    final class Ticket: @unchecked Sendable {
        // `closed` is guarded by the gate's lock semantics: close() is called once, from the stream's task.
        private let gate: StreamGate
        private var closed = false
        fileprivate init(gate: StreamGate) { self.gate = gate }
        func close() {
            guard !closed else { return }
            closed = true
            gate.release()
        }
    }
}
