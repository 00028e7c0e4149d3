import ClientFoundation
import ClientShim
import ClientUpdater
import Foundation
import TestSupport

/// A scripted ``ControlHandler``: records calls, returns a fixed status, lets tests push events.
final class FakeControlHandler: ControlHandler, Sendable {
    private struct State: Sendable {
        var calls: [String] = []
        var status: ControlStatus
        var continuations: [AsyncStream<ControlEvent>.Continuation] = []
        var switchError: UpdaterError?
    }
    private let state: Observed<State>

    init(status: ControlStatus = ControlStatus(current: "v1")) { state = Observed(State(status: status)) }

    var calls: [String] { state.value.calls }
    var subscribers: Int { state.value.continuations.count }

    /// Waits until `condition` holds for the calls so far and the event streams open,
    /// checked at each call and each subscription (no polling).
    func wait(for what: String, until condition: @escaping @Sendable (_ calls: [String], _ subscribers: Int) -> Bool) async throws {
        try await state.wait(for: what) { condition($0.calls, $0.continuations.count) }
    }
    /// What `switchToPendingVersion` throws, if anything.
    var switchError: UpdaterError? {
        get { state.value.switchError }
        set { state.update { $0.switchError = newValue } }
    }

    /// What `status` (and the other calls) return from now on.
    func setStatus(_ status: ControlStatus) { state.update { $0.status = status } }

    func push(_ event: ControlEvent) {
        for continuation in state.value.continuations { continuation.yield(event) }
    }

    private func record(_ name: String) -> ControlStatus {
        state.update { state in
            state.calls.append(name)
            return state.status
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
    func userActivity(version: String?) async { _ = record("activity") }
    /// Records `hold lease SECONDS`; the lease ends `duration` after 2027-01-15T08:00:00Z.
    func holdUpdate(lease: String, for duration: Duration, version: String?) async throws -> Date {
        _ = record("hold lease \(duration.components.seconds)")
        return Date(timeIntervalSince1970: 1_800_000_000 + duration.inSeconds)
    }
    /// The device follows stable and may choose beta; `setChannel` refuses any other
    /// name as the device does (kind `notPermitted`), and a name with a space (kind `usage`).
    func channels() async throws -> ControlChannels {
        _ = record("channels")
        return ControlChannels(channel: "stable", choosable: ["beta", "stable"], rootChannel: "stable")
    }
    func setChannel(_ name: String, version: String?) async throws -> ControlChannels {
        _ = record("setChannel \(name)")
        if name.contains(" ") { throw ChannelRefusal(message: "channel '\(name)': not a channel name", kind: .usage) }
        guard ["beta", "stable"].contains(name) else {
            throw ChannelRefusal(message: "channel '\(name)' is not allowed by trust root 1", kind: .notPermitted)
        }
        return ControlChannels(channel: name, choosable: ["beta", "stable"], rootChannel: "stable")
    }
    func events() async -> AsyncStream<ControlEvent> {
        let (stream, continuation) = AsyncStream<ControlEvent>.makeStream()
        state.update { $0.continuations.append(continuation) }
        return stream
    }
}

/// A refusal of `setChannel` of the kind the device's would be.
struct ChannelRefusal: ClientctlError {
    let message: String
    let kind: FailureKind
    var underlying: (any Error & Sendable)? { nil }
}
