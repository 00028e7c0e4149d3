import ApplyPolicy
import ClientUpdater
import Foundation

/// The apply driver's rules as a pure state machine (docs/apply-policies.md#the-hosts-the-apply-driver),
/// in the style of AsyncHTTPClient's connection state machines: events come in with the two
/// clocks read once by the executor, actions come out (switch, set one timer, write or remove
/// the status), and nothing here reads a clock, a file or the updater. ``ApplyDriver`` is
/// its thin executor.
///
/// Durations — the host's start, the last input, each lease's end, the wait after a failed
/// switch — are kept on the monotonic clock and placed on the wall clock only for the
/// decision, so a wall clock that jumps (by seconds or by years, either way) never shortens
/// or lengthens them. The staged version and its verified policy come in once, as
/// ``Event/staged(_:)``, when the executor sees the root change; each decision uses them.
package struct ApplyMachine: Sendable {
    /// The two clocks, read once for an event.
    package struct Clocks: Sendable, Equatable {
        /// The device's time (the wall clock, never below the floor: docs/device-time.md).
        package var wall: Date
        /// Time since any fixed origin on the monotonic clock.
        package var monotonic: Duration

        package init(wall: Date, monotonic: Duration) {
            self.wall = wall
            self.monotonic = monotonic
        }
    }

    /// What happened.
    package enum Event: Sendable, Equatable {
        /// The staged version and its policy, read and verified (nil: nothing staged).
        case staged(StagedSwitch?)
        /// The user did something: idle time starts again.
        case input
        /// A page holds the switch back for `seconds` (0 or less releases it).
        case hold(lease: String, seconds: Double)
        /// The leases whose ids start with `prefix` end (all when empty).
        case release(prefix: String)
        /// A check started or ended downloading.
        case downloadStarted, downloadEnded
        /// Decide now (the timer fired, the host woke the driver); `navigation`: the page
        /// navigates, so a version waiting for a navigation switches too.
        case decide(navigation: Bool)
        /// The switch the last ``Action/switchTo(version:trigger:reload:)`` asked for was made.
        case switched(version: String)
        /// It failed, saying why.
        case switchFailed(version: String, message: String)
        /// A page switched (`serve`): to the version the policy allowed, if it did.
        case pageSwitched(allowed: String?)
        /// `serve`: a page puts a version on screen, not the host.
        case switchThroughPages
    }

    /// What the executor does, in order.
    package enum Action: Sendable, Equatable {
        /// Switch to `version` (a trial); `reload`: the host reloads (false when a
        /// navigation under way loads it). Its outcome comes back as an event.
        case switchTo(version: String, trigger: String, reload: Bool)
        /// Write `apply-status.json`.
        case writeStatus(version: String, line: String, policy: String, decidedAt: Date, nextDecision: Date?)
        /// Remove `apply-status.json`.
        case removeStatus
        /// Decide again at the latest at this time (nil: only when woken).
        case wakeAt(Date?)
    }

    /// The longest lease a page may hold at once (it may renew).
    package static let maxLeaseSeconds: Double = 600
    /// The most leases held at once (pages of one host).
    package static let maxLeases = 64
    /// The longest wait between two decisions.
    package static let maxSleep: TimeInterval = 30
    /// After a switch that failed, the wait before trying again.
    package static let retryAfterFailure: TimeInterval = 60
    /// The two clocks disagreeing by more than this between decisions is a jump of the wall clock.
    package static let jumpTolerance: TimeInterval = 2
    /// How long (monotonic) the status keeps saying that the wall clock jumped.
    package static let jumpShownFor: Duration = .seconds(86_400)

    private let windows: [MaintenanceWindow]
    /// True when the host puts a new version on screen itself (the shell).
    private var switchesInPlace = true
    private var staged: StagedSwitch?
    private var hostStarted: Duration
    private var lastInput: Duration?
    /// Each lease's end.
    private var leases: [String: Duration] = [:]
    /// Checks downloading now, whoever started them.
    private(set) var downloads = 0
    private var switched: Set<String> = []
    private var failedUntil: Duration?
    private var written: (line: String, at: Duration)?
    /// The two clocks at the last decision, and the last jump of the wall clock seen.
    private var lastReading: Clocks?
    private var jump: (seconds: TimeInterval, at: Date, seen: Duration)?
    /// `serve`: the staged version the policy lets a page switch to now, and why.
    private var allowed: (version: String, trigger: String)?
    /// Decisions made so far.
    private(set) var decisions = 0
    /// The last decision's answer (nil: nothing staged).
    private(set) var lastDecision: ApplyDecision?
    /// True when the last decision would let a navigation switch.
    private(set) var waitsForNavigation = false

    /// A machine for a host that started at `started` (monotonic), with the device's windows.
    package init(windows: [MaintenanceWindow], started: Duration) {
        self.windows = windows
        self.hostStarted = started
    }

    /// The staged version a page may switch to now; none while a check downloads.
    package var allowedSwitch: String? { downloads > 0 ? nil : allowed?.version }
    /// The trigger of the switch allowed now.
    package var allowedTrigger: String? { allowedSwitch == nil ? nil : allowed?.trigger }
    /// Leases held (expired ones go at the next decision).
    package var leaseCount: Int { leases.count }

    /// Handles one event at `clocks`: the actions to carry out, in order.
    package mutating func handle(_ event: Event, at clocks: Clocks) -> [Action] {
        let m = clocks.monotonic
        switch event {
        case .staged(let value):
            staged = value
            return []
        case .input:
            lastInput = m
            return []
        case .hold(let lease, let seconds):
            let held = min(max(seconds.isFinite ? seconds : 0, 0), Self.maxLeaseSeconds)
            leases[lease] = held > 0 ? m + .milliseconds(Int64(held * 1000)) : nil
            // Bounded whatever a page posts: past the cap the lease ending first goes.
            while leases.count > Self.maxLeases, let first = leases.min(by: { $0.value < $1.value })?.key { leases[first] = nil }
            return []
        case .release(let prefix):
            leases = prefix.isEmpty ? [:] : leases.filter { !$0.key.hasPrefix(prefix) }
            return []
        case .downloadStarted:
            // A switch allowed before the download is not allowed during it.
            downloads += 1
            allowed = nil
            return []
        case .downloadEnded:
            downloads = max(0, downloads - 1)
            return []
        case .switchThroughPages:
            switchesInPlace = false
            return []
        case .decide(let navigation):
            return decide(navigation: navigation, at: clocks)
        case .switched(let version):
            switched.insert(version)
            failedUntil = nil
            written = nil
            waitsForNavigation = false
            return [.removeStatus, .wakeAt(nil)]
        case .switchFailed(let version, let message):
            failedUntil = m + .seconds(Self.retryAfterFailure)
            let retry = clocks.wall.addingTimeInterval(Self.retryAfterFailure)
            let line = "the switch failed, trying again at \(RFC3339Time.string(from: retry)): \(message)"
            return status(version: version, line, at: clocks, wake: retry) + [.wakeAt(retry)]
        case .pageSwitched(let version):
            if let version { switched.insert(version) }
            allowed = nil
            written = nil
            waitsForNavigation = false
            return [.removeStatus]
        }
    }

    private mutating func decide(navigation: Bool, at clocks: Clocks) -> [Action] {
        decisions += 1
        let (t, m) = (clocks.wall, clocks.monotonic)
        noteReading(clocks)
        guard let staged else {
            let hadStatus = written != nil
            written = nil
            waitsForNavigation = false
            lastDecision = nil
            allowed = nil
            return (hadStatus ? [.removeStatus] : []) + [.wakeAt(nil)]
        }
        leases = leases.filter { $0.value > m }
        let input = input(staged, at: clocks)
        let decision = ApplyDecision.decide(input, now: t)
        let wake = ApplyDecision.nextWake(input, now: t)
        lastDecision = decision
        waitsForNavigation = decision == .wait(.nextNavigation) || decision.isSwitch
        allowed = nil
        let trigger: String
        switch decision {
        case .switchNow(let why):
            trigger = why.rawValue
            if !navigation, !switchesInPlace {
                allowed = (staged.version, why.rawValue)
                let line = "switch allowed (\(why)): waiting for a page's shim to switch, a navigation or the next start"
                return status(version: staged.version, line, at: clocks, wake: wake)
                    + [.wakeAt(wake ?? t.addingTimeInterval(Self.maxSleep))]
            }
        case .wait(.nextNavigation) where navigation:
            trigger = "navigation"
        default:
            return status(version: staged.version, decision.description, at: clocks, wake: wake) + [.wakeAt(wake)]
        }
        if let until = failedUntil, until > m {
            return [.wakeAt(t.addingTimeInterval(Self.seconds(until - m)))]
        }
        return [.switchTo(version: staged.version, trigger: trigger, reload: !navigation)]
    }

    /// The input of a decision about `staged`: the host's start, the last input and the
    /// leases' ends, kept on the monotonic clock, are placed on the wall clock as seen now,
    /// so their durations are the monotonic clock's whatever the wall clock did meanwhile.
    private func input(_ staged: StagedSwitch, at clocks: Clocks) -> ApplyInput {
        let (t, m) = (clocks.wall, clocks.monotonic)
        let onWall = { (d: Duration) in t.addingTimeInterval(Self.seconds(d - m)) }
        return ApplyInput(
            policy: staged.policy, stagedAt: staged.since ?? t, hostStartedAt: onWall(hostStarted), windows: windows,
            lastInput: lastInput.map(onWall), leaseUntil: leases.values.max().map(onWall), trialRunning: staged.trialRunning,
            downloading: downloads > 0, alreadySwitched: switched.contains(staged.version))
    }

    /// A wall clock that moved more or less than the monotonic one since the last decision jumped.
    private mutating func noteReading(_ clocks: Clocks) {
        if let last = lastReading {
            let drift = clocks.wall.timeIntervalSince(last.wall) - Self.seconds(clocks.monotonic - last.monotonic)
            if abs(drift) > Self.jumpTolerance { jump = (drift, clocks.wall, clocks.monotonic) }
        }
        lastReading = clocks
        if let seen = jump?.seen, clocks.monotonic - seen > Self.jumpShownFor { jump = nil }
    }

    /// What the status says of the last jump of the wall clock, if one was seen lately.
    package var clockNote: String? {
        jump.map { jump in
            "the wall clock jumped by \(Self.signed(jump.seconds)) at \(RFC3339Time.string(from: jump.at)); "
                + "idle time, leases and retries go by the monotonic clock"
        }
    }

    /// The status line when it changed (at most every 10 s while only its times move).
    private mutating func status(version: String, _ decided: String, at clocks: Clocks, wake: Date?) -> [Action] {
        let line = clockNote.map { decided + "; " + $0 } ?? decided
        if let written, written.line == line || Self.sameKind(written.line, line) && clocks.monotonic - written.at < .seconds(10) {
            return []
        }
        written = (line, clocks.monotonic)
        return [
            .writeStatus(
                version: version, line: line, policy: staged?.policy.summary ?? "", decidedAt: clocks.wall, nextDecision: wake)
        ]
    }

    /// Two lines that differ only in their times (`… (at 2026-…)`).
    private static func sameKind(_ a: String, _ b: String) -> Bool {
        a.prefix { $0 != "(" } == b.prefix { $0 != "(" }
    }

    /// `+1d 2h`, `−30s`: a jump's size.
    static func signed(_ seconds: TimeInterval) -> String {
        (seconds < 0 ? "−" : "+") + DurationText.render(seconds: Int(abs(seconds).rounded()))
    }

    /// A duration in seconds.
    static func seconds(_ d: Duration) -> TimeInterval {
        let (s, a) = d.components
        return TimeInterval(s) + TimeInterval(a) / 1e18
    }
}

extension ApplyDecision {
    /// True for `.switchNow`.
    var isSwitch: Bool {
        if case .switchNow = self { return true }
        return false
    }
}
