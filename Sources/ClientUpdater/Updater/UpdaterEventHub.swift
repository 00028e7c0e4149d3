import Foundation
import Synchronization

/// The subscribers of one ``Updater``'s event stream.
///
/// Events are yielded synchronously from whatever context reports them (the actor, a
/// channel's download callback, a note from an installer), under one lock: every
/// subscriber sees every event in the order it was reported, with no task in between.
final class UpdaterEventHub: Sendable {
    private let subscribers = Mutex<[UUID: AsyncStream<UpdaterEvent>.Continuation]>([:])

    /// A new stream of every event from now on.
    func subscribe(bufferingPolicy: AsyncStream<UpdaterEvent>.Continuation.BufferingPolicy) -> AsyncStream<UpdaterEvent> {
        let (stream, continuation) = AsyncStream<UpdaterEvent>.makeStream(bufferingPolicy: bufferingPolicy)
        let id = UUID()
        subscribers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in self?.remove(id) }
        return stream
    }

    /// Hands `event` to every subscriber, in the caller's context.
    func emit(_ event: UpdaterEvent) {
        subscribers.withLock { subscribers in
            for continuation in subscribers.values { continuation.yield(event) }
        }
    }

    /// Ends every stream (after the events already yielded are read).
    func finishAll() {
        // Finished outside the lock: `finish` runs `onTermination`, which takes it.
        let ended = subscribers.withLock { subscribers in
            defer { subscribers = [:] }
            return Array(subscribers.values)
        }
        for continuation in ended { continuation.finish() }
    }

    private func remove(_ id: UUID) {
        _ = subscribers.withLock { $0.removeValue(forKey: id) }
    }
}
