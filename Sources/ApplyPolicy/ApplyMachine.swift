import ClientFoundation
import Foundation

/// When a host switches to its staged version, as a pure state machine beside the decision
/// it carries out (docs/apply-policies.md#the-hosts-the-apply-driver), in the style of
/// AsyncHTTPClient's connection state machines: an explicit ``State``, events in with the two
/// clocks read once by the executor, actions out, every one of them to be carried out in
/// order. Nothing here reads a clock, a file or the updater; ClientEngine's `ApplyDriver` is
/// its thin executor.
///
/// Exactly one switch is in flight: the event that starts one moves the machine to
/// ``State/switching(version:trigger:)``, and until its outcome comes back every other
/// decision, navigation or page's call only joins it (``Action/joinSwitch``), so a timer, a
/// navigation, a check and a page arriving at once switch once and report once.
///
/// Durations (the host's start, the last input, each lease's end, the wait after a failed
/// switch) are kept on the monotonic clock and placed on the wall clock only for the
/// decision, so a wall clock that jumps (by seconds or by years, either way) never shortens
/// or lengthens them. Timers go out as durations (``Action/wake(after:)``), the status as
/// facts (``ApplyStatusFacts``).
package struct ApplyMachine: Sendable {
    /// The two clocks, read once for an event.
    package struct Clocks: Sendable, Equatable {
        /// The device's time (the wall clock, never below the floor: docs/device-time.md).
        package var wall: Date
        /// Time on the monotonic clock since any fixed origin.
        package var monotonic: Duration

        package init(wall: Date, monotonic: Duration) {
            self.wall = wall
            self.monotonic = monotonic
        }
    }

    /// Where the switch of the staged version is.
    package enum State: Sendable, Equatable {
        /// Nothing is staged.
        case idle
        /// A version is staged; its policy has it wait (or no decision was made yet).
        case waiting(StagedSwitch)
        /// `serve`: the policy allows the switch; a page's shim, a navigation or the next
        /// start makes it (`trigger`: the policy's reason).
        case allowed(StagedSwitch, trigger: String)
        /// One switch is in flight (`version` nil: a page's reload with nothing known to be
        /// staged); its outcome comes back as an event.
        case switching(version: String?, trigger: String?)
        /// The last switch to this version failed: no new try before `until` (monotonic).
        case retrying(StagedSwitch, until: Duration)
    }

    /// What happened.
    package enum Event: Sendable, Equatable {
        /// The staged version and its policy, read and verified (nil: nothing staged).
        case staged(StagedSwitch?)
        /// The user did something: idle time starts again.
        case input
        /// A page holds the switch back for `duration` (zero releases it).
        case hold(lease: String, duration: Duration)
        /// The leases whose ids start with `prefix` end (all when empty).
        case release(prefix: String)
        /// A check started or ended downloading.
        case downloadStarted, downloadEnded
        /// Decide now (a timer fired, the host woke the driver); `navigation`: the page
        /// navigates, so a version waiting for a navigation switches too.
        case decide(navigation: Bool)
        /// A page asks to switch (`serve`'s shim, or a page's own `switchToPendingVersion()`).
        case pageAsks
        /// The switch in flight was made (`version`: what it switched to, when known).
        case switched(version: String?)
        /// It failed, saying why.
        case switchFailed(version: String?, message: String)
        /// It found the root changed under it (another process switched, or nothing is
        /// pending any more): nothing failed, decide again on what the root says now.
        case switchSuperseded
        /// The updater refused a page's switch (the page was served another version than
        /// the one running, or nothing is pending any more): nothing changed, the machine
        /// is where it was before the call.
        case pageRefused
        /// `serve`: a page puts a version on screen, not the host.
        case switchThroughPages
    }

    /// What the executor does, in order: every action of an answer is carried out.
    package enum Action: Sendable, Equatable {
        /// Switch to `version` (a trial); `reload`: the host reloads (false when a
        /// navigation under way loads it). Its outcome comes back as an event.
        case switchTo(version: String, trigger: String, reload: Bool)
        /// A page's switch: to `version` for the policy's `trigger` when the policy allows
        /// one, else the page's own reload (`version` and `trigger` nil), which switches to
        /// whatever is pending. Its outcome comes back as an event.
        case switchForPage(version: String?, trigger: String?)
        /// A switch is in flight: wait for its outcome and answer with it.
        case joinSwitch
        /// Write `apply-status.json` with these facts.
        case writeStatus(ApplyStatusFacts)
        /// Remove `apply-status.json`.
        case removeStatus
        /// Decide again after this long on the monotonic clock at the latest (nil: only
        /// when woken, and at least every ``maxSleep``).
        case wake(after: Duration?)
    }

    /// The longest lease a page may hold at once (it may renew).
    package static let maxLease: Duration = .seconds(600)
    /// The most leases held at once (pages of one host).
    package static let maxLeases = 64

    /// How long a lease asked for `requested` holds: at most ``maxLease``, zero (a release)
    /// for a negative request. The one rule; a host reads it to say when a lease ends.
    package static func leaseLength(_ requested: Duration) -> Duration {
        min(max(requested, .zero), maxLease)
    }

    /// The longest wait between two decisions.
    package static let maxSleep: Duration = .seconds(30)
    /// After a switch that failed, the wait before trying again.
    package static let retryAfterFailure: Duration = .seconds(60)
    /// The two clocks disagreeing by more than this between decisions is a jump of the wall clock.
    package static let jumpTolerance: Duration = .seconds(2)
    /// How long (monotonic) the status keeps saying that the wall clock jumped.
    package static let jumpShownFor: Duration = .seconds(86_400)
    /// How long a status that changed only in its times is not written again.
    package static let statusQuiet: Duration = .seconds(10)

    /// Where the switch is now.
    package private(set) var state: State = .idle
    private let windows: [MaintenanceWindow]
    /// True when the host puts a new version on screen itself (the shell).
    private var switchesInPlace = true
    /// The staged version as last read, also while a switch is in flight.
    private var staged: StagedSwitch?
    private let hostStarted: Duration
    private var lastInput: Duration?
    /// Each lease's end.
    private var leases: [String: Duration] = [:]
    /// Checks downloading now, whoever started them.
    package private(set) var downloads = 0
    private var switched: Set<String> = []
    /// Where the machine was before a page's switch, for ``Event/pageRefused``.
    private var beforePage: State?
    /// The status last written, and when.
    private var written: (facts: ApplyStatusFacts, at: Duration)?
    /// The two clocks at the last decision, and the last jump of the wall clock seen.
    private var lastReading: Clocks?
    private var jump: (by: Duration, at: Date, seen: Duration)?
    /// Decisions made so far.
    package private(set) var decisions = 0
    /// The last decision's answer (nil: nothing staged).
    package private(set) var lastDecision: ApplyDecision?

    /// A machine for a host that started at `started` (monotonic), with the device's windows.
    package init(windows: [MaintenanceWindow], started: Duration) {
        self.windows = windows
        self.hostStarted = started
    }

    /// The staged version a page may switch to now; none while a check downloads.
    package var allowedSwitch: String? {
        guard downloads == 0, case .allowed(let staged, _) = state else { return nil }
        return staged.version
    }
    /// The trigger of the switch allowed now.
    package var allowedTrigger: String? {
        guard downloads == 0, case .allowed(_, let trigger) = state else { return nil }
        return trigger
    }
    /// Leases held (expired ones go at the next decision).
    package var leaseCount: Int { leases.count }
    /// True when a navigation now switches or joins a switch: the staged version waits for
    /// one, its switch is allowed now, or a switch is in flight.
    package var waitsForNavigation: Bool {
        switch state {
        case .switching, .allowed: return true
        case .idle, .retrying: return false
        case .waiting: return lastDecision == .wait(.nextNavigation) || lastDecision?.isSwitch == true
        }
    }
    /// True while a switch is in flight.
    package var isSwitching: Bool {
        if case .switching = state { return true }
        return false
    }

    /// Handles one event at `clocks`: the actions to carry out, in order.
    package mutating func handle(_ event: Event, at clocks: Clocks) -> [Action] {
        let m = clocks.monotonic
        switch event {
        case .staged(let value):
            staged = value
            switch state {
            case .switching: break  // the switch's outcome decides what comes next
            case .idle, .waiting, .allowed, .retrying:
                if let value {
                    if case .retrying(let old, let until) = state, old.version == value.version {
                        state = .retrying(value, until: until)
                    } else {
                        state = .waiting(value)
                    }
                } else {
                    state = .idle
                }
            }
            return []
        case .input:
            lastInput = m
            return []
        case .hold(let lease, let duration):
            let held = Self.leaseLength(duration)
            leases[lease] = held > .zero ? m + held : nil
            // Bounded whatever a page posts: past the cap the lease ending first goes.
            while leases.count > Self.maxLeases, let first = leases.min(by: { $0.value < $1.value })?.key { leases[first] = nil }
            return []
        case .release(let prefix):
            leases = prefix.isEmpty ? [:] : leases.filter { !$0.key.hasPrefix(prefix) }
            return []
        case .downloadStarted:
            // A switch allowed before the download is not allowed during it.
            downloads += 1
            if case .allowed(let staged, _) = state { state = .waiting(staged) }
            return []
        case .downloadEnded:
            downloads = max(0, downloads - 1)
            return []
        case .switchThroughPages:
            switchesInPlace = false
            return []
        case .decide(let navigation):
            return decide(navigation: navigation, at: clocks)
        case .pageAsks:
            return pageAsks()
        case .switched(let version):
            guard case .switching = state else { return [] }
            if let version { switched.insert(version) }
            state = .idle
            staged = nil  // no longer pending: the executor reads the root again
            written = nil
            return [.removeStatus, .wake(after: nil)]
        case .switchFailed(let version, let message):
            guard case .switching = state else { return [] }
            guard let staged, version == nil || staged.version == version else {
                state = .idle
                return [.wake(after: .zero)]
            }
            let until = m + Self.retryAfterFailure
            state = .retrying(staged, until: until)
            let retryAt = clocks.wall.addingTimeInterval(Self.retryAfterFailure.inSeconds)
            let facts = ApplyStatusFacts(
                version: staged.version, said: .switchFailed(retryAt: retryAt, message: message), policy: staged.policy.summary,
                decidedAt: clocks.wall, nextDecision: retryAt, clockNote: clockNote)
            return status(facts, at: m) + [.wake(after: Self.retryAfterFailure)]
        case .switchSuperseded:
            guard case .switching = state else { return [] }
            state = staged.map { .waiting($0) } ?? .idle
            written = nil
            return [.wake(after: .zero)]
        case .pageRefused:
            guard case .switching = state else { return [] }
            state = beforePage ?? staged.map { .waiting($0) } ?? .idle
            beforePage = nil
            return []
        }
    }

    /// A page asks to switch: joins the switch in flight, takes the switch the policy
    /// allows, or (nothing allowed) reloads as the page asked.
    private mutating func pageAsks() -> [Action] {
        beforePage = state
        switch state {
        case .switching:
            return [.joinSwitch]
        case .allowed(let staged, let trigger) where downloads == 0:
            state = .switching(version: staged.version, trigger: trigger)
            return [.switchForPage(version: staged.version, trigger: trigger)]
        case .idle, .waiting, .allowed, .retrying:
            state = .switching(version: nil, trigger: nil)
            return [.switchForPage(version: nil, trigger: nil)]
        }
    }

    private mutating func decide(navigation: Bool, at clocks: Clocks) -> [Action] {
        if case .switching = state {
            // One switch at a time: a navigation waits for the one in flight, a timer or a
            // check's wake-up is answered by its outcome.
            return navigation ? [.joinSwitch] : []
        }
        decisions += 1
        let (t, m) = (clocks.wall, clocks.monotonic)
        noteReading(clocks)
        guard let staged else {
            let hadStatus = written != nil
            written = nil
            lastDecision = nil
            state = .idle
            return (hadStatus ? [.removeStatus] : []) + [.wake(after: nil)]
        }
        leases = leases.filter { $0.value > m }
        let input = input(staged, at: clocks)
        let decision = ApplyDecision.decide(input, now: t)
        let next = ApplyDecision.nextWake(input, now: t)
        let sleep = next.map { Duration.wallClock(from: t, to: $0) }
        lastDecision = decision
        if case .retrying(_, let until) = state, until > m {
            guard decision.isSwitch || (decision == .wait(.nextNavigation) && navigation) else {
                return status(facts(staged, .decision(decision), at: t, next: next), at: m) + [.wake(after: sleep)]
            }
            return [.wake(after: until - m)]
        }
        let trigger: String
        switch decision {
        case .switchNow(let why):
            trigger = why.rawValue
            if !navigation, !switchesInPlace {
                state = .allowed(staged, trigger: why.rawValue)
                let facts = facts(staged, .allowedForPages(trigger: why.description), at: t, next: next)
                return status(facts, at: m) + [.wake(after: sleep ?? Self.maxSleep)]
            }
        case .wait(.nextNavigation) where navigation:
            trigger = "navigation"
        default:
            state = .waiting(staged)
            return status(facts(staged, .decision(decision), at: t, next: next), at: m) + [.wake(after: sleep)]
        }
        state = .switching(version: staged.version, trigger: trigger)
        return [.switchTo(version: staged.version, trigger: trigger, reload: !navigation)]
    }

    /// The input of a decision about `staged`: the host's start, the last input and the
    /// leases' ends, kept on the monotonic clock, are placed on the wall clock as seen now,
    /// so their durations are the monotonic clock's whatever the wall clock did meanwhile.
    private func input(_ staged: StagedSwitch, at clocks: Clocks) -> ApplyInput {
        let (t, m) = (clocks.wall, clocks.monotonic)
        let onWall = { (d: Duration) in t.addingTimeInterval((d - m).inSeconds) }
        return ApplyInput(
            policy: staged.policy, stagedAt: staged.since ?? t, hostStartedAt: onWall(hostStarted), windows: windows,
            lastInput: lastInput.map(onWall), leaseUntil: leases.values.max().map(onWall), trialRunning: staged.trialRunning,
            downloading: downloads > 0, alreadySwitched: switched.contains(staged.version))
    }

    private func facts(_ staged: StagedSwitch, _ said: ApplyStatusFacts.Said, at t: Date, next: Date?) -> ApplyStatusFacts {
        ApplyStatusFacts(
            version: staged.version, said: said, policy: staged.policy.summary, decidedAt: t, nextDecision: next, clockNote: clockNote)
    }

    /// A wall clock that moved more or less than the monotonic one since the last decision jumped.
    private mutating func noteReading(_ clocks: Clocks) {
        if let last = lastReading {
            let wall = Duration.wallClock(from: last.wall, to: clocks.wall)
            let drift = wall - (clocks.monotonic - last.monotonic)
            if drift > Self.jumpTolerance || drift < .zero - Self.jumpTolerance { jump = (drift, clocks.wall, clocks.monotonic) }
        }
        lastReading = clocks
        if let seen = jump?.seen, clocks.monotonic - seen > Self.jumpShownFor { jump = nil }
    }

    /// The last jump of the wall clock, if one was seen lately.
    package var clockNote: ApplyStatusFacts.ClockJump? {
        jump.map { ApplyStatusFacts.ClockJump(by: $0.by, at: $0.at) }
    }

    /// The status when it changed (at most every ``statusQuiet`` while only its times move).
    private mutating func status(_ facts: ApplyStatusFacts, at m: Duration) -> [Action] {
        if let written, written.facts.line == facts.line || written.facts.sameKind(as: facts) && m - written.at < Self.statusQuiet {
            return []
        }
        written = (facts, m)
        return [.writeStatus(facts)]
    }

}

extension ApplyDecision {
    /// True for `.switchNow`.
    package var isSwitch: Bool {
        if case .switchNow = self { return true }
        return false
    }
}
