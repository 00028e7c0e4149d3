import ClientFoundation
import Foundation
import Synchronization

/// An instant of the simulation: its offset from the simulation's start.
struct SimInstant: InstantProtocol {
    var offset: Duration

    func advanced(by duration: Duration) -> SimInstant { SimInstant(offset: offset + duration) }
    func duration(to other: SimInstant) -> Duration { other.offset - offset }
    static func < (a: SimInstant, b: SimInstant) -> Bool { a.offset < b.offset }
}

/// The simulation's one monotonic clock. Time moves only when the simulation moves it: the
/// scheduler between device steps, and the simulated network while bytes travel (a chunk
/// takes its size over the link's rate, a trickle its pauses, a stall its timeout). A
/// sleeper is resumed once time reaches its deadline, in deadline order; cancelling a
/// sleeper resumes it at once with `CancellationError`.
final class SimClock: Clock, Sendable {
    private struct State {
        var now = SimInstant(offset: .zero)
        var sleepers: [Int: (deadline: SimInstant, continuation: CheckedContinuation<Void, any Error>)] = [:]
        /// Sleepers cancelled before they were registered.
        var cancelled: Set<Int> = []
        var next = 0
    }
    private let state = Mutex(State())

    var now: SimInstant { state.withLock { $0.now } }
    var minimumResolution: Duration { .nanoseconds(1) }

    func sleep(until deadline: SimInstant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state -> Int in
            state.next += 1
            return state.next
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Now { case resume, cancel, wait }
                let now = state.withLock { state -> Now in
                    if state.cancelled.remove(id) != nil { return .cancel }
                    if deadline <= state.now { return .resume }
                    state.sleepers[id] = (deadline, continuation)
                    return .wait
                }
                switch now {
                case .resume: continuation.resume()
                case .cancel: continuation.resume(throwing: CancellationError())
                case .wait: break
                }
            }
        } onCancel: {
            let waiting = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let sleeper = state.sleepers.removeValue(forKey: id) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return sleeper.continuation
            }
            waiting?.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward to `instant` (never back) and resumes the sleepers due.
    func advance(to instant: SimInstant) {
        let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            if instant > state.now { state.now = instant }
            let now = state.now
            let ready = state.sleepers.filter { $0.value.deadline <= now }.sorted { ($0.value.deadline, $0.key) < ($1.value.deadline, $1.key) }
            for (id, _) in ready { state.sleepers[id] = nil }
            return ready.map(\.value.continuation)
        }
        for continuation in due { continuation.resume() }
    }

    /// The sleepers waiting for time to move.
    var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// The earliest deadline a sleeper waits for, if any: where a discrete-event driver
    /// moves time next once every task waits.
    var nextDeadline: SimInstant? { state.withLock { $0.sleepers.values.map(\.deadline).min() } }

    /// Moves time forward by `duration`.
    func advance(by duration: Duration) { advance(to: now.advanced(by: duration)) }
}

/// SplitMix64: the generator every choice of a run draws from, so that a seed names the run.
struct SimRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool { Double(next() >> 11) / Double(1 << 53) < p }

    /// A generator for one named stream of choices (a request, a device), independent of how
    /// many choices other streams made: what a request meets does not depend on the order in
    /// which parallel requests reached the network.
    static func stream(_ seed: UInt64, _ parts: [String]) -> SimRandom {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325 ^ seed
        for part in parts {
            for byte in part.utf8 {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01B3
            }
            hash ^= 0xFF
            hash &*= 0x0000_0100_0000_01B3
        }
        var random = SimRandom(seed: hash)
        _ = random.next()
        return random
    }
}

/// A device's wall clock: the simulation's start, plus the device's monotonic time, plus a
/// skew that jumps (forward or back, by hours or days) at instants drawn from the seed, as a
/// clock set by hand or by a bad time server does. Durations the device measures run on its
/// monotonic clock (`SimClock`) and do not see the jumps.
final class SimWall: Sendable {
    let clock: SimClock
    let origin: Date
    /// The jumps, in order of their instants: from `at` on, the wall clock reads `skew` off.
    private let jumps = Mutex<[(at: SimInstant, skew: Duration)]>([])

    init(clock: SimClock, origin: Date) {
        self.clock = clock
        self.origin = origin
    }

    /// From `instant` on, the wall clock is `skew` off the simulation's time.
    func jump(at instant: SimInstant, to skew: Duration) {
        jumps.withLock { list in
            list.append((instant, skew))
            list.sort { $0.at < $1.at }
        }
    }

    /// The jumps: from each instant on, the skew.
    var schedule: [(at: SimInstant, skew: Duration)] { jumps.withLock { $0 } }

    /// The skew in force at `instant`.
    func skew(at instant: SimInstant) -> Duration {
        jumps.withLock { list in list.last { $0.at <= instant }?.skew ?? .zero }
    }

    /// The last jump at or before `instant`.
    func lastJump(atOrBefore instant: SimInstant) -> SimInstant? {
        jumps.withLock { list in list.last { $0.at <= instant }?.at }
    }

    /// What the wall clock reads at `instant`.
    func date(at instant: SimInstant) -> Date { origin.addingTimeInterval((instant.offset + skew(at: instant)).inSeconds) }

    /// What the wall clock reads now.
    var now: Date { date(at: clock.now) }
}
