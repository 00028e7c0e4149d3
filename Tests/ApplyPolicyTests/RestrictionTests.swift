import ApplyPolicy
import Foundation
import Testing

@Suite("ApplyPolicy.restricted(by:)")
struct RestrictionTests {
    func policy(_ mode: ApplyMode, deadline: String? = nil, grace: Int = 3_600, idle: Int? = nil) throws -> ApplyPolicy {
        try ApplyPolicy(mode: mode, idleSeconds: idle, deadline: try deadline.map(at), graceSeconds: grace)
    }

    @Test("a restriction that waits longer is the effective policy")
    func allowed() throws {
        let release = try policy(.idle, deadline: "2026-12-01T00:00:00Z", grace: 3_600, idle: 300)
        let cases = [
            try policy(.window, deadline: "2026-12-02T00:00:00Z", grace: 7_200, idle: 300),
            try policy(.nextStart),
            try policy(.idle, deadline: "2026-12-01T00:00:00Z", grace: 3_600, idle: 600),
            // Past the deadline it waits for the release's quiet time (its own 60 s default
            // would be shorter than the release's 300: refused, shorterQuietPastTheDeadline).
            try policy(.nextNavigation, deadline: "2026-12-01T00:00:00Z", idle: 300),
        ]
        for restriction in cases {
            #expect(try release.restricted(by: restriction) == restriction)
        }
    }

    @Test("now may restrict now; no deadline may restrict no deadline")
    func sameAsRelease() throws {
        let release = try policy(.now)
        #expect(try release.restricted(by: release) == release)
        #expect(try release.restricted(by: try policy(.idle, idle: 60)) == (try policy(.idle, idle: 60)))
    }

    @Test("mode now is refused unless the release is now")
    func hurryingMode() throws {
        let error = expectRefusal(.notAllowedByRestriction, naming: "'now'") {
            _ = try (try policy(.window)).restricted(by: try policy(.now))
        }
        #expect(
            error?.message == "rollout restriction mode 'now' would hurry a release whose mode is 'window';"
                + " a restriction may only make devices wait longer (use the release's mode or another mode than now)"
        )
    }

    @Test("an earlier deadline is refused")
    func earlierDeadline() throws {
        let release = try policy(.idle, deadline: "2026-12-01T00:00:00Z", idle: 300)
        let error = expectRefusal(.notAllowedByRestriction, naming: "2026-11-30T23:59:59Z") {
            _ = try release.restricted(by: try policy(.idle, deadline: "2026-11-30T23:59:59Z", idle: 300))
        }
        #expect(error?.message.contains("earlier than the release's 2026-12-01T00:00:00Z") == true)
    }

    @Test("adding a deadline to a release without one is refused")
    func addedDeadline() throws {
        let error = expectRefusal(.notAllowedByRestriction, naming: "2027-01-01T00:00:00Z") {
            _ = try (try policy(.nextStart)).restricted(by: try policy(.nextStart, deadline: "2027-01-01T00:00:00Z"))
        }
        #expect(error?.message.contains("adds a deadline to a release that has none") == true)
    }

    @Test("a shorter grace is refused, with or without deadline")
    func shorterGrace() throws {
        let release = try policy(.window, deadline: "2026-12-01T00:00:00Z", grace: 3_600)
        let error = expectRefusal(.notAllowedByRestriction, naming: "grace 30m") {
            _ = try release.restricted(by: try policy(.window, deadline: "2026-12-05T00:00:00Z", grace: 1_800))
        }
        #expect(
            error?.message == "rollout restriction grace 30m is shorter than the release's 1h;"
                + " a restriction may only make devices wait longer (use a grace of at least 1h)"
        )
        expectRefusal(.notAllowedByRestriction, naming: "grace 0s") {
            _ = try (try policy(.nextStart)).restricted(by: try policy(.nextStart, grace: 0))
        }
    }

    @Test("dropping the release's deadline is allowed (devices wait longer)")
    func droppedDeadline() throws {
        let release = try policy(.now, deadline: "2026-12-01T00:00:00Z")
        let restriction = try policy(.window)
        #expect(try release.restricted(by: restriction) == restriction)
    }

    @Test("a more eager mode is refused; modes rank now, idle, window, next-navigation, next-start")
    func eagerMode() throws {
        let error = expectRefusal(.notAllowedByRestriction, naming: "'idle'") {
            _ = try (try policy(.nextStart)).restricted(by: try policy(.idle, idle: 60))
        }
        #expect(
            error?.message == "rollout restriction mode 'idle' would hurry a release whose mode is 'next-start';"
                + " a restriction may only make devices wait longer (modes from eager to patient: now, idle, window,"
                + " next-navigation, next-start)"
        )
        for (release, restriction) in [(ApplyMode.window, ApplyMode.idle), (.nextNavigation, .window), (.nextStart, .nextNavigation)] {
            _ = expectRefusal(.notAllowedByRestriction, naming: "'\(restriction.rawValue)'") {
                _ = try (try policy(release)).restricted(by: try policy(restriction, idle: restriction == .idle ? 60 : nil))
            }
        }
        #expect(try (try policy(.window)).restricted(by: try policy(.nextStart)) == (try policy(.nextStart)))
    }

    @Test("a shorter idle time is refused; a longer one is the effective policy")
    func shorterIdle() throws {
        let release = try policy(.idle, idle: 300)
        let error = expectRefusal(.notAllowedByRestriction, naming: "5m") {
            _ = try release.restricted(by: try policy(.idle, idle: 60))
        }
        #expect(
            error?.message == "rollout restriction idle time 1m is shorter than the release's 5m;"
                + " a restriction may only make devices wait longer (use at least the release's)")
        #expect(try release.restricted(by: try policy(.idle, idle: 900)) == (try policy(.idle, idle: 900)))
    }

    /// Past a deadline every mode waits for the next idle moment, so the quiet time is
    /// compared whenever both policies wait for one: a `window` restriction with a
    /// one-second idle time hurried an `idle` release with an hour of quiet past its deadline.
    @Test("a shorter quiet time is refused past a deadline whatever the restriction's mode")
    func shorterQuietPastTheDeadline() throws {
        let release = try policy(.idle, deadline: "2026-12-01T00:00:00Z", grace: 3_600, idle: 3_600)
        for mode in [ApplyMode.window, .nextNavigation, .nextStart] {
            let error = expectRefusal(.notAllowedByRestriction, naming: "1h") {
                _ = try release.restricted(by: try policy(mode, deadline: "2026-12-01T00:00:00Z", grace: 3_600, idle: 1))
            }
            #expect(error?.message.hasPrefix("rollout restriction idle time 1s is shorter than the release's 1h;") == true, "\(mode)")
        }
        // A window release with a deadline waits for its quiet time past it too.
        let window = try policy(.window, deadline: "2026-12-01T00:00:00Z", idle: 600)
        _ = expectRefusal(.notAllowedByRestriction, naming: "10m") {
            _ = try window.restricted(by: try policy(.nextStart, deadline: "2026-12-01T00:00:00Z", idle: 5))
        }
        // Dropping the deadline leaves no quiet time to wait for: allowed, as before.
        #expect(try release.restricted(by: try policy(.window, idle: 1)) == (try policy(.window, idle: 1)))
        // A release that never waits for quiet (no deadline, not idle) leaves the idle time free.
        #expect(try (try policy(.window)).restricted(by: try policy(.nextStart, idle: 1)) == (try policy(.nextStart, idle: 1)))
    }
}
