import Testing

@testable import ConsoleAccess

/// Login attempts throttled per name and per address, on clock readings advanced by hand:
/// the answers a console turns into 429 with Retry-After.
@Suite struct LoginThrottleTests {
    /// A wait as a Retry-After says it.
    static func seconds(_ wait: Duration?) -> Int? { wait.map(LoginThrottle.retryAfterSeconds) }

    /// Fails `name` from `address` as a console would: check, then report the failure.
    static func fail(_ throttle: LoginThrottle, _ name: String, _ address: String, at now: Duration) -> Duration? {
        if let wait = throttle.check(name: name, address: address, now: now) { return wait }
        throttle.failed(name: name, address: address, now: now)
        return nil
    }

    /// Five wrong passwords for a name, then one every 30 seconds; Retry-After says when.
    @Test func aNameGetsFiveTriesThenOneEvery30Seconds() throws {
        let throttle = LoginThrottle()
        for k in 0..<5 {
            #expect(Self.fail(throttle, "alice", "192.0.2.\(k)", at: .zero) == nil, "try \(k + 1)")
        }
        let wait = try #require(throttle.check(name: "alice", address: "192.0.2.9", now: .zero))
        #expect(wait == .seconds(30), "\(wait)")
        #expect(LoginThrottle.retryAfterSeconds(wait) == 30)
        #expect(Self.seconds(throttle.check(name: "alice", address: "192.0.2.9", now: .seconds(10))) == 20)
        #expect(throttle.check(name: "bob", address: "192.0.2.9", now: .seconds(10)) == nil, "another name may try")
        #expect(Self.fail(throttle, "alice", "192.0.2.9", at: .seconds(30)) == nil, "30 seconds on, one more")
        #expect(Self.seconds(throttle.check(name: "alice", address: "192.0.2.9", now: .seconds(30))) == 30)
    }

    /// Twenty tries from an address whatever the names, then one every 6 seconds; an IPv6
    /// address counts by its /64.
    @Test func anAddressGetsTwentyTriesThenOneEvery6Seconds() {
        let throttle = LoginThrottle()
        for k in 0..<20 {
            #expect(Self.fail(throttle, "user\(k)", "2001:db8:1:2::\(k)", at: .zero) == nil, "try \(k + 1)")
        }
        #expect(Self.seconds(throttle.check(name: "fresh", address: "2001:db8:1:2:ffff::1", now: .zero)) == 6, "same /64")
        #expect(Self.seconds(throttle.check(name: "fresh", address: "[2001:db8:1:2::99]", now: .seconds(3))) == 3)
        #expect(throttle.check(name: "fresh", address: "2001:db8:1:3::1", now: .zero) == nil, "another /64")
        #expect(throttle.check(name: "fresh2", address: "2001:db8:1:2::5", now: .seconds(6)) == nil)
    }

    /// The longer of the two waits is the answer.
    @Test func theLongerWaitWins() {
        let throttle = LoginThrottle(perName: .init(burst: 1, interval: .seconds(60)), perAddress: .init(burst: 1, interval: .seconds(5)))
        #expect(Self.fail(throttle, "alice", "198.51.100.1", at: .zero) == nil)
        #expect(Self.seconds(throttle.check(name: "alice", address: "198.51.100.1", now: .zero)) == 60)
        #expect(Self.seconds(throttle.check(name: "bob", address: "198.51.100.1", now: .zero)) == 5)
        #expect(Self.seconds(throttle.check(name: "alice", address: "198.51.100.2", now: .zero)) == 60)
    }

    /// Attempts sent at once are each counted when checked, before any password is judged:
    /// the sixth is refused although none has failed yet; failures reported after add nothing.
    @Test func concurrentAttemptsAreCountedWhenChecked() {
        let throttle = LoginThrottle()
        for _ in 0..<5 { #expect(throttle.check(name: "alice", address: "192.0.2.1", now: .zero) == nil) }
        #expect(throttle.check(name: "alice", address: "192.0.2.1", now: .zero) != nil)
        for _ in 0..<5 { throttle.failed(name: "alice", address: "192.0.2.1", now: .zero) }
        #expect(throttle.check(name: "alice", address: "192.0.2.1", now: .seconds(30)) == nil, "one every 30 s, not less")
    }

    /// A failure reported without a check still counts.
    @Test func aFailureNotCheckedStillCounts() {
        let throttle = LoginThrottle()
        for _ in 0..<5 { throttle.failed(name: "alice", address: "192.0.2.1", now: .zero) }
        #expect(Self.seconds(throttle.check(name: "alice", address: "192.0.2.1", now: .zero)) == 30)
    }

    /// The right password forgets the name's failures, not the address's.
    @Test func successForgetsTheNameOnly() {
        let throttle = LoginThrottle(perAddress: .init(burst: 5, interval: .seconds(6)))
        for _ in 0..<4 { _ = Self.fail(throttle, "alice", "192.0.2.1", at: .zero) }
        #expect(throttle.check(name: "alice", address: "192.0.2.1", now: .zero) == nil)
        throttle.succeeded(name: "alice", address: "192.0.2.1", now: .zero)
        #expect(throttle.check(name: "alice", address: "192.0.2.7", now: .zero) == nil, "alice's count starts again")
        #expect(Self.seconds(throttle.check(name: "bob", address: "192.0.2.1", now: .zero)) == 6, "the address spent its 5")
    }

    /// Memory is bounded: a flood of names from many addresses keeps at most `capacity` of
    /// each, and a name still throttled outlives names whose buckets are full again.
    @Test func memoryIsBounded() {
        let throttle = LoginThrottle(capacity: 100)
        for _ in 0..<5 { _ = Self.fail(throttle, "alice", "192.0.2.1", at: .zero) }
        for k in 0..<1000 {
            _ = Self.fail(throttle, "guess\(k)", "10.0.\(k / 250).\(k % 250)", at: .seconds(Int64(3600 + k)))
        }
        let remembered = throttle.remembered
        #expect(remembered.names <= 100 && remembered.addresses <= 100, "\(remembered)")
        #expect(remembered.names > 0)
    }

    @Test func retryAfterRoundsUpToWholeSeconds() {
        #expect(LoginThrottle.wholeMilliseconds(.nanoseconds(20_000_000_001)) == .seconds(20))
        #expect(LoginThrottle.wholeMilliseconds(.nanoseconds(20_000_002_000)) == .milliseconds(20_001))
        #expect(LoginThrottle.retryAfterSeconds(.milliseconds(1)) == 1)
        #expect(LoginThrottle.retryAfterSeconds(.milliseconds(5_001)) == 6)
        #expect(LoginThrottle.retryAfterSeconds(.seconds(30)) == 30)
        #expect(LoginThrottle.retryAfterSeconds(.zero) == 1)
    }

    @Test func addressesAreKeyedByHostOrSlash64() {
        #expect(LoginThrottle.addressKey("192.0.2.1") == "192.0.2.1")
        #expect(LoginThrottle.addressKey("::ffff:192.0.2.1") == "192.0.2.1")
        #expect(LoginThrottle.addressKey("2001:db8::1") == "2001:db8:0:0::/64")
        #expect(LoginThrottle.addressKey("[2001:db8::1]") == "2001:db8:0:0::/64")
        #expect(LoginThrottle.addressKey("fe80::1%eth0") == "fe80:0:0:0::/64")
        #expect(LoginThrottle.addressKey("not an address") == "not an address")
    }
}
