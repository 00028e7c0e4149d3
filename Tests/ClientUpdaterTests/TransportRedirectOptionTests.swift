import ClientUpdaterHTTP
import Foundation
import TestSupport
import Testing

@testable import ClientUpdater

/// `TransportRequest.followsRedirects` (issue 43): `false` returns a 3xx as it came and sends
/// nothing to its `Location`, headers included; the default (what manifests and archives
/// use on devices) still follows.
@Suite struct TransportRedirectOptionTests {
    static func servers() throws -> (first: LoopbackHTTPServer, second: LoopbackHTTPServer) {
        let second = try LoopbackHTTPServer { _ in .text("the other port") }
        let target = second.url("/elsewhere").absoluteString
        let first = try LoopbackHTTPServer { _ in
            var answer = LoopbackResponse.status(302)
            answer.setHeader("Location", target)
            return answer
        }
        return (first, second)
    }

    @Test func notFollowingReturnsTheRedirectAndSendsNothingOn() async throws {
        let (first, second) = try Self.servers()
        let body = BodyCollector()
        let request = TransportRequest(url: first.url("/v1/fleet"), headers: ["Authorization": "Bearer secret"], followsRedirects: false)
        let response = try await DefaultTransport().get(request) { body.append($0) }
        #expect(response.status == 302)
        #expect(response[header: "location"] == second.url("/elsewhere").absoluteString)
        #expect(first.requests.count == 1 && first.requests.first?[header: "authorization"] == "Bearer secret")
        #expect(second.requests.isEmpty, "\(second.requests)")
    }

    @Test func byDefaultARedirectIsFollowedAsBefore() async throws {
        let (first, second) = try Self.servers()
        let body = BodyCollector()
        let response = try await DefaultTransport().get(TransportRequest(url: first.url("/manifest.json"))) { body.append($0) }
        #expect(response.status == 200)
        #expect(String(decoding: body.data, as: UTF8.self) == "the other port")
        #expect(second.requests.count == 1)
    }
}
