import ClientShim
import ClientUpdater
import Foundation

/// A scripted ``ControlHandler``: records calls, returns a fixed status, lets tests push events.
final class FakeControlHandler: ControlHandler, @unchecked Sendable {
    // Everything mutable is guarded by `lock`.
    private let lock = NSLock()
    private var _calls: [String] = []
    private var _status: ControlStatus
    private var continuations: [AsyncStream<ControlEvent>.Continuation] = []
    var switchError: UpdaterError?

    init(status: ControlStatus = ControlStatus(current: "v1")) { _status = status }

    var calls: [String] { lock.withLock { _calls } }
    var subscribers: Int { lock.withLock { continuations.count } }

    /// What `status` (and the other calls) return from now on.
    func setStatus(_ status: ControlStatus) { lock.withLock { _status = status } }

    func push(_ event: ControlEvent) {
        for continuation in lock.withLock({ continuations }) { continuation.yield(event) }
    }

    private func record(_ name: String) -> ControlStatus {
        lock.withLock {
            _calls.append(name)
            return _status
        }
    }

    func startupDidComplete() async throws -> ControlStatus {
        var status = record("startupDidComplete")
        status.lastKnownGood = status.current
        return status
    }
    func checkForUpdates() async throws -> ControlStatus { record("checkForUpdates") }
    func switchToPendingVersion() async throws -> ControlStatus {
        let status = record("switchToPendingVersion")
        if let switchError { throw switchError }
        return status
    }
    func status() async throws -> ControlStatus { record("status") }
    func events() async -> AsyncStream<ControlEvent> {
        let (stream, continuation) = AsyncStream<ControlEvent>.makeStream()
        lock.withLock { continuations.append(continuation) }
        return stream
    }
}
