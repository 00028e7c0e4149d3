import ClientServer
import ClientShim
import ClientUpdater
import Foundation
import Hummingbird
import HummingbirdTesting
import ServingCore
import Testing

/// The router's method table, Host check and shim-header check, driven through
/// HummingbirdTesting's `.router` client (no socket: these are routing decisions; the
/// real-socket tests beside this file cover bytes on the wire). HummingbirdTesting sends
/// `Host: localhost`, which a server configured on port 80 accepts.
@Suite struct RouterTableTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var method: HTTPRequest.Method
        var path: String
        var shimHeader = false
        var status: HTTPResponse.Status
        var allow: String? = nil
        var body: String
        var testDescription: String { "\(method.rawValue) \(path)" }
    }

    static let cases: [Case] = [
        .init(
            method: .get, path: "/__clientctl/check", status: .methodNotAllowed, allow: "POST",
            body: #"{"error":"/__clientctl/check accepts POST only"}"#),
        .init(method: .post, path: "/__clientctl/status", shimHeader: true, status: .methodNotAllowed, allow: "GET", body: "accepts GET only"),
        .init(method: .delete, path: "/__clientctl/events", status: .methodNotAllowed, allow: "GET", body: "accepts GET only"),
        .init(method: .get, path: "/__clientctl/nope", status: .notFound, body: #"{"error":"no control endpoint /__clientctl/nope"}"#),
        .init(method: .post, path: "/__clientctl/check", status: .forbidden, body: "needs the X-Clientctl-Shim: 1 header"),
        .init(method: .post, path: "/app.js", status: .methodNotAllowed, allow: "GET, HEAD", body: "only GET and HEAD are served\n"),
        .init(method: .init("PROPFIND")!, path: "/", status: .methodNotAllowed, allow: "GET, HEAD", body: "only GET and HEAD are served\n"),
        .init(method: .get, path: "/__clientctl/status", status: .ok, body: #""current":"v1""#),
        // (A HEAD answer's body is dropped by the HTTP server, not the router.)
        .init(method: .head, path: "/__clientctl/status", status: .ok, body: #""current":"v1""#),
        .init(method: .post, path: "/__clientctl/check", shimHeader: true, status: .ok, body: #""current":"v1""#),
        .init(method: .get, path: "/index.html", status: .serviceUnavailable, body: "no client version is being served\n"),
    ]

    @Test(arguments: cases)
    func eachRequestGetsItsAnswerFromTheTable(_ c: Case) async throws {
        let handler = FakeControlHandler()
        let server = try ClientServer(configuration: ServerConfiguration(port: 80), control: handler)
        try await server.application().test(.router) { client in
            var headers = HTTPFields()
            if c.shimHeader { headers[ControlEndpointHeader.name] = "1" }
            try await client.execute(uri: c.path, method: c.method, headers: headers) { response in
                #expect(response.status == c.status)
                #expect(response.headers[.allow] == c.allow)
                // JSON answers are compared by their `error` value (the server escapes `/`).
                let body = String(buffer: response.body)
                let error = (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["error"] as? String
                #expect(body.contains(c.body) || error.map { c.body.contains($0) } == true, "\(body)")
            }
        }
    }

    @Test func aServerWithoutAnAgentAndAnotherHostAreRefused() async throws {
        let detached = try ClientServer(configuration: ServerConfiguration(port: 80))
        try await detached.application().test(.router) { client in
            var headers = HTTPFields()
            headers[ControlEndpointHeader.name] = "1"
            try await client.execute(uri: "/__clientctl/check", method: .post, headers: headers) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(String(buffer: response.body) == #"{"error":"no update agent is attached to this server"}"#)
            }
        }
        // Configured for 8080, the test client's `Host: localhost` names another server.
        let elsewhere = try ClientServer(configuration: ServerConfiguration(port: 8080), control: FakeControlHandler())
        try await elsewhere.application().test(.router) { client in
            try await client.execute(uri: "/__clientctl/status", method: .get) { response in
                #expect(response.status == .misdirectedRequest)
                #expect(String(buffer: response.body).contains("Host localhost is not this server"))
            }
        }
    }

    @Test func everyEndpointOfTheProtocolIsRouted() {
        #expect(
            ControlEndpoint.allCases.map(\.path) == [
                "/__clientctl/status", "/__clientctl/events", "/__clientctl/startup-complete", "/__clientctl/check",
                "/__clientctl/switch-to-pending", "/__clientctl/activity", "/__clientctl/hold", "/__clientctl/hold-downloads",
                "/__clientctl/channel", "/__clientctl/set-channel", "/__clientctl/problems",
            ])
    }
}

/// The shim header as the protocol table names it (what the shim sends).
enum ControlEndpointHeader {
    static let name = HTTPFields.Element.Name(ControlEndpoint.shimHeaderName) ?? .contentType
}
