import ApplyPolicy
import Foundation
import Testing

@Suite("ApplyPolicy.make (release side)")
struct ApplyPolicyMakeTests {
    let released: Date

    init() throws {
        released = try at("2026-11-29T12:00:00Z")
    }

    @Test("defaults: no deadline, grace 1h, no idle seconds")
    func defaults() throws {
        let policy = try ApplyPolicy.make(mode: "next-start", idleSeconds: nil, deadline: nil, grace: nil, releasedAt: released)
        #expect(policy == ApplyPolicy.nextStart)
        #expect(policy.mode == .nextStart)
        #expect(policy.deadline == nil)
        #expect(policy.graceSeconds == 3_600)
        #expect(policy.idleSeconds == nil)
        #expect(policy.effectiveIdleSeconds == 60)
        #expect(policy.graceExpiry == nil)
        #expect(policy.unknownMode == nil)
    }

    @Test(
        "deadline as a duration after the release",
        arguments: [
            ("48h", "2026-12-01T12:00:00Z"), ("90m", "2026-11-29T13:30:00Z"), ("2d", "2026-12-01T12:00:00Z"),
            ("3600s", "2026-11-29T13:00:00Z"), ("1d12h", "2026-12-01T00:00:00Z"), ("3600", "2026-11-29T13:00:00Z"),
        ]
    )
    func durationDeadline(text: String, expected: String) throws {
        let policy = try ApplyPolicy.make(mode: "idle", idleSeconds: 300, deadline: text, grace: "30m", releasedAt: released)
        #expect(policy.deadline == (try at(expected)))
        #expect(policy.graceSeconds == 1_800)
        #expect(policy.graceExpiry == (try at(expected)).addingTimeInterval(1_800))
        #expect(policy.idleSeconds == 300)
    }

    @Test(
        "deadline as an absolute RFC 3339 time with a zone",
        arguments: [
            ("2026-12-01T00:00:00Z", "2026-12-01T00:00:00Z"), ("2026-12-01T01:00:00+01:00", "2026-12-01T00:00:00Z"),
            ("2026-11-30T19:00:00-05:00", "2026-12-01T00:00:00Z"), ("2026-12-01t00:00:00z", "2026-12-01T00:00:00Z"),
            ("2026-11-29T12:00:01Z", "2026-11-29T12:00:01Z"), ("2026-12-01T05:30:00+05:30", "2026-12-01T00:00:00Z"),
        ]
    )
    func absoluteDeadline(text: String, expected: String) throws {
        let policy = try ApplyPolicy.make(mode: "window", idleSeconds: nil, deadline: text, grace: nil, releasedAt: released)
        #expect(policy.deadline == (try at(expected)))
    }

    @Test("a deadline duration from a fractional release time is rounded up to a whole second")
    func roundedUp() throws {
        let fractional = released.addingTimeInterval(0.25)
        let policy = try ApplyPolicy.make(mode: "now", idleSeconds: nil, deadline: "1h", grace: nil, releasedAt: fractional)
        #expect(policy.deadline == (try at("2026-11-29T13:00:01Z")))
    }

    @Test(
        "a deadline at or before the release is refused",
        arguments: ["2026-11-29T12:00:00Z", "2026-11-29T11:59:59Z", "2026-01-01T00:00:00Z", "2026-11-29T13:00:00+01:00", "0s", "0"]
    )
    func pastDeadline(text: String) {
        let error = expectRefusal(.invalidDeadline, naming: "apply deadline '\(text)'") {
            _ = try ApplyPolicy.make(mode: "now", idleSeconds: nil, deadline: text, grace: nil, releasedAt: released)
        }
        #expect(error?.message.contains("is not after the release time 2026-11-29T12:00:00Z") == true)
    }

    @Test("exact message for a past deadline")
    func pastDeadlineMessage() {
        let error = expectRefusal(.invalidDeadline, naming: "'2026-01-01T00:00:00Z'") {
            _ = try ApplyPolicy.make(mode: "now", idleSeconds: nil, deadline: "2026-01-01T00:00:00Z", grace: nil, releasedAt: released)
        }
        #expect(
            error?.message == "apply deadline '2026-01-01T00:00:00Z' is not after the release time 2026-11-29T12:00:00Z"
                + " (give a later time or a duration such as 48h)"
        )
    }

    @Test(
        "malformed deadlines are refused as deadlines",
        arguments: [
            ("2026-12-01T00:00:00", "has no zone"), ("2026-12-01", "is not an RFC 3339 time"), ("2026-12-01 00:00:00Z", "is not an RFC 3339"),
            ("2026-12-01T00:00:00.5Z", "fractional seconds"), ("2026-02-30T00:00:00Z", "not a valid date"), ("2026-12-01T24:00:00Z", "not a valid"),
            ("2026-12-01T00:00:60Z", "has second 60"), ("2026-12-01T00:00:00+1:00", "is not an RFC 3339"), ("tomorrow", "unknown unit 't'"),
            ("400d", "longer than 365d"), ("-1h", "is negative"), ("", "is empty"), ("12:00", "is not an RFC 3339"),
            ("2026-12-01T00:00:00+24:00", "is not an RFC 3339"),
        ]
    )
    func malformedDeadline(text: String, reason: String) {
        let error = expectRefusal(.invalidDeadline, naming: "apply deadline '\(text)'") {
            _ = try ApplyPolicy.make(mode: "now", idleSeconds: nil, deadline: text, grace: nil, releasedAt: released)
        }
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
    }

    @Test("idle needs idle seconds")
    func idleNeedsSeconds() {
        let error = expectRefusal(.invalidMode, naming: "'idle'") {
            _ = try ApplyPolicy.make(mode: "idle", idleSeconds: nil, deadline: nil, grace: nil, releasedAt: released)
        }
        #expect(error?.message == "apply mode 'idle' needs idle seconds (1 to 86400, e.g. 300)")
    }

    @Test("idle seconds out of range", arguments: [0, -1, 86_401])
    func idleOutOfRange(seconds: Int) {
        expectRefusal(.invalidDuration, naming: "apply idle seconds \(seconds) ") {
            _ = try ApplyPolicy.make(mode: "idle", idleSeconds: seconds, deadline: nil, grace: nil, releasedAt: released)
        }
    }

    @Test("idle seconds at the range ends", arguments: [1, 86_400])
    func idleRangeEnds(seconds: Int) throws {
        #expect(try ApplyPolicy.make(mode: "idle", idleSeconds: seconds, deadline: nil, grace: nil, releasedAt: released).idleSeconds == seconds)
    }

    @Test("idle seconds with another mode is kept (used past the deadline)")
    func idleSecondsWithOtherMode() throws {
        let policy = try ApplyPolicy.make(mode: "window", idleSeconds: 120, deadline: "48h", grace: nil, releasedAt: released)
        #expect(policy.mode == .window)
        #expect(policy.idleSeconds == 120)
        #expect(policy.effectiveIdleSeconds == 120)
    }

    @Test("grace forms and limits")
    func grace() throws {
        #expect(try ApplyPolicy.make(mode: "now", idleSeconds: nil, deadline: "1h", grace: "0", releasedAt: released).graceSeconds == 0)
        #expect(try ApplyPolicy.make(mode: "now", idleSeconds: nil, deadline: "1h", grace: "7d", releasedAt: released).graceSeconds == 604_800)
        #expect(try ApplyPolicy.make(mode: "now", idleSeconds: nil, deadline: "1h", grace: "1d12h", releasedAt: released).graceSeconds == 129_600)
        let tooLong = expectRefusal(.invalidDuration, naming: "apply grace '7d1s'") {
            _ = try ApplyPolicy.make(mode: "now", idleSeconds: nil, deadline: "1h", grace: "7d1s", releasedAt: released)
        }
        #expect(tooLong?.message == "apply grace '7d1s' is longer than 7d (use 0s to 7d, e.g. 1h)")
        expectRefusal(.invalidDuration, naming: "apply grace '1w'") {
            _ = try ApplyPolicy.make(mode: "now", idleSeconds: nil, deadline: "1h", grace: "1w", releasedAt: released)
        }
    }

    @Test("an unknown mode is refused at publish")
    func unknownModeAtPublish() {
        expectRefusal(.invalidMode, naming: "apply mode 'asap'") {
            _ = try ApplyPolicy.make(mode: "asap", idleSeconds: nil, deadline: nil, grace: nil, releasedAt: released)
        }
    }

    @Test("the programmatic initializer validates and rounds the deadline up")
    func initializer() throws {
        let policy = try ApplyPolicy(mode: .now, deadline: try at("2026-12-01T00:00:00Z").addingTimeInterval(0.001))
        #expect(policy.deadline == (try at("2026-12-01T00:00:01Z")))
        expectRefusal(.invalidDuration, naming: "apply grace seconds 604801 ") { _ = try ApplyPolicy(mode: .now, graceSeconds: 604_801) }
        expectRefusal(.invalidDuration, naming: "apply grace seconds -1 ") { _ = try ApplyPolicy(mode: .now, graceSeconds: -1) }
        expectRefusal(.invalidMode, naming: "'idle'") { _ = try ApplyPolicy(mode: .idle) }
        expectRefusal(.invalidDeadline, naming: "apply deadline") {
            _ = try ApplyPolicy(mode: .now, deadline: Date(timeIntervalSince1970: 1e15))
        }
    }
}
