import AuthenticatedTimeClient
import Foundation
import TestSupport
import Testing

@testable import AuthenticatedTime

/// Against real Roughtime servers from outside the project: `roughly` 0.3.0 from PyPI
/// (RoughlyServer). What of its behaviour each test relies on is said at the test; what it
/// shows overall is that our requests are what an RFC 10049 server accepts, and its answers
/// (version 1 chosen from our VER list; CERT signed over "Roughtime v1 delegation
/// signature\0"; SREP over "Roughtime v1 response signature\0"; the Merkle leaf the whole
/// request packet) verify with our code.
@Suite struct RoughtimeInteropTests {
    /// One query: roughly answers a 1024-byte version-1 request within its size (it drops
    /// answers larger than the request), with its configured radius and its clock, which here
    /// is ours.
    @Test func oneQueryVerifiesAgainstTheRealServer() async throws {
        let scratch = try TemporaryDirectory("roughtime")
        let roughly = try await RoughlyServer(scratch: scratch.path, radius: 2)
        defer { roughly.stop() }
        let before = Date()
        let answer = try await RoughtimeClient.query(roughly.server, timeout: .seconds(20))
        let after = Date()
        #expect(answer.time.radius == 2)
        // roughly stamps int(time.time()): the true time of the answer is in [MIDP, MIDP + 1).
        #expect(Double(answer.time.midpoint) >= before.timeIntervalSince1970.rounded(.down))
        #expect(Double(answer.time.midpoint) <= after.timeIntervalSince1970)
        #expect(answer.bytesSent == 1024 && answer.bytesReceived > 0 && answer.bytesReceived <= 1024)
    }

    /// Three honest servers agree; a fourth, a real server under `faketime` five years
    /// ahead (its delegation is made and checked on its own clock, so it verifies), is named
    /// and outvoted.
    @Test func threeHonestServersAgreeAndALiarIsOutvoted() async throws {
        let scratch = try TemporaryDirectory("roughtime")
        async let first = RoughlyServer(scratch: scratch.path)
        async let second = RoughlyServer(scratch: scratch.path)
        async let third = RoughlyServer(scratch: scratch.path)
        async let fourth = RoughlyServer(scratch: scratch.path, offset: "+5y")
        let honest = try await [first, second, third]
        let liar = try await fourth
        defer { for server in honest + [liar] { server.stop() } }

        // The interval is of the moment the answers were in: somewhere between the two readings
        // around each query, however long a loaded machine makes it.
        var before = Date()
        let agreed = try await RoughtimeQuorum.query(honest.map(\.server), quorum: 3, timeout: .seconds(20))
        var after = Date()
        #expect(agreed.agreeing == honest.map { "\($0.server)" })
        #expect(agreed.outvoted.isEmpty && agreed.failed.isEmpty)
        #expect(agreed.earliest <= after && before <= agreed.latest + 1)
        #expect(agreed.latest.timeIntervalSince(agreed.earliest) <= 8)

        before = Date()
        let outvoting = try await RoughtimeQuorum.query(honest.map(\.server) + [liar.server], quorum: 3, timeout: .seconds(20))
        after = Date()
        #expect(outvoting.agreeing == honest.map { "\($0.server)" })
        let year = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC") ?? .current, from: after).year ?? 0
        #expect(outvoting.outvoted.count == 1)
        #expect(outvoting.outvoted.first?.hasPrefix("time server \(liar.server) says \(year + 5)-") == true, "\(outvoting.outvoted)")
        #expect(outvoting.outvoted.first?.hasSuffix(", ± 3 s: outvoted by 3 of 4") == true)
        #expect(outvoting.earliest <= after && before <= outvoting.latest + 1)
    }

    /// A quorum that cannot be met fails naming each server and why: one honest, one liar,
    /// one that never answers (a real server stopped with SIGSTOP: its socket still takes
    /// the request). The silent one alone times out in bounded time.
    @Test func aQuorumThatCannotBeMetFailsNamingWhy() async throws {
        let scratch = try TemporaryDirectory("roughtime")
        async let first = RoughlyServer(scratch: scratch.path)
        async let second = RoughlyServer(scratch: scratch.path, offset: "+5y")
        async let third = RoughlyServer(scratch: scratch.path)
        let (honest, liar, silent) = try await (first, second, third)
        defer { for server in [honest, liar, silent] { server.stop() } }
        silent.pause()

        let clock = ContinuousClock()
        let start = clock.now
        let timedOut = await #expect(throws: AuthenticatedTimeClientError.self) {
            try await RoughtimeClient.query(silent.server, timeout: .milliseconds(500))
        }
        #expect(timedOut?.code == .timedOut)
        #expect(clock.now - start < .seconds(10))

        let error = await #expect(throws: AuthenticatedTimeError.self) {
            try await RoughtimeQuorum.query([honest.server, liar.server, silent.server], quorum: 2, timeout: .seconds(10))
        }
        #expect(error?.code == .noQuorum)
        let message = error?.message ?? ""
        #expect(message.hasPrefix("authenticated time: no 2 verified answers overlap, the quorum is 2 of 3: "), "\(message)")
        #expect(message.contains("\(honest.server) says "))
        #expect(message.contains("\(liar.server) says "))
        #expect(message.contains("\(silent.server): no valid answer within 10.0 seconds"), "\(message)")
    }
}
