import ClientFoundation
import FleetReports
import Foundation
import Hummingbird
import NIOCore
import Synchronization

/// Reads a batch's body before anything else is spent on it (docs/fleet-reports.md#the-collector):
/// at most ``maxBytes`` as sent, all of it within ``limit``, and no slower than
/// ``minBytesPerSecond`` on average once ``grace`` has passed, so a body trickled a
/// byte at a time is cut within seconds, not at the time limit. A watchdog checks the pace
/// twice a second whether or not bytes arrive. A body cut for its time or pace ends its
/// connection without an answer: a device retries it later as after a network failure,
/// where a 4xx would count toward dropping the batch. The body
/// is read on the request's own task (no task of its own: a burst of requests is not
/// delayed by scheduling).
struct BodyReader: Sendable {
    /// The most bytes as sent.
    var maxBytes = ReportBatch.maxBytes
    /// The time limit of the whole body.
    var limit: Duration
    /// The slowest average pace allowed after ``grace`` (0: none).
    var minBytesPerSecond: Int
    /// The time a body has before its pace counts.
    var grace: Duration = .seconds(5)

    /// What became of a body.
    enum Outcome: Sendable, Equatable {
        case body([UInt8])
        case tooLarge
        /// Not all of it in time, or too slow: the message names which.
        case tooSlow(String)
        case failed(String)
    }

    /// Reads `body` to its end, or until a limit cuts it: the pace is checked as each
    /// chunk arrives, and by a watchdog on `channel`'s event loop between chunks; either
    /// closes the connection of a body that falls behind (the read then ends).
    func read(_ body: RequestBody, channel: (any Channel)?) async -> Outcome {
        let received = Received()
        let start = ContinuousClock.now
        let watchdog = channel.map { channel in
            channel.eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(500), delay: .milliseconds(500)) { task in
                guard let cut = verdict(received: received.count.load(ordering: .relaxed), after: ContinuousClock.now - start) else { return }
                received.cut.withLock { $0 = $0 ?? cut }
                task.cancel()
                channel.close(promise: nil)
            }
        }
        defer { watchdog?.cancel() }
        var bytes: [UInt8] = []
        do {
            for try await chunk in body {
                guard bytes.count + chunk.readableBytes <= maxBytes else { return .tooLarge }
                bytes.append(contentsOf: chunk.readableBytesView)
                received.count.store(bytes.count, ordering: .relaxed)
                if let cut = received.cut.withLock({ $0 }) ?? verdict(received: bytes.count, after: ContinuousClock.now - start) {
                    channel?.close(promise: nil)
                    return cut
                }
            }
        } catch {
            return received.cut.withLock { $0 } ?? .failed("the body could not be read: \(error)")
        }
        return received.cut.withLock { $0 } ?? .body(bytes)
    }

    /// The bytes read so far, shared with the watchdog.
    final class Received: Sendable {
        let count = Atomic<Int>(0)
        /// The watchdog's verdict, once it cut the body.
        let cut = Mutex<Outcome?>(nil)
    }

    /// `.tooSlow` when `received` bytes after `elapsed` is past a limit, else nil.
    func verdict(received: Int, after elapsed: Duration) -> Outcome? {
        if elapsed > limit { return .tooSlow("the body took more than \(Int(limit.inSeconds)) s to arrive") }
        if minBytesPerSecond > 0, elapsed > grace, Double(received) < Double(minBytesPerSecond) * (elapsed - grace).inSeconds {
            return .tooSlow(
                "the body arrived at less than \(minBytesPerSecond) bytes a second (\(received) bytes in \(Int(elapsed.inSeconds)) s)")
        }
        return nil
    }
}
