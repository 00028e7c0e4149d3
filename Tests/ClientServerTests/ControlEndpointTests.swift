import ClientServer
import ClientShim
import ClientUpdater
import Foundation
import TestSupport
import Testing

@Suite struct ControlEndpointTests {
    let shim = ["X-Clientctl-Shim": "1"]

    func withServer(_ handler: FakeControlHandler?, heartbeat: Duration = .seconds(15), _ body: @Sendable (Int) async throws -> Void) async throws {
        var configuration = ServerHarness.configuration()
        configuration.eventHeartbeat = heartbeat
        let server = try ClientServer(configuration: configuration, control: handler, logger: ServerHarness.quietLogger)
        try await ServerHarness.withServer(server, body)
    }

    @Test func postsReachTheHandlerAndReturnStatus() async throws {
        let handler = FakeControlHandler(status: ControlStatus(current: "1.0.0", pending: "1.1.0", lastKnownGood: "0.9.0", inTrial: true))
        let headers = shim
        try await withServer(handler) { port in
            let status = try await LoopbackHTTP.request(port: port, "/__clientctl/status")
            #expect(status.status == 200 && status["content-type"] == "application/json" && status["cache-control"] == "no-store")
            #expect(
                try JSONDecoder().decode(ControlStatus.self, from: status.body)
                    == ControlStatus(current: "1.0.0", pending: "1.1.0", lastKnownGood: "0.9.0", inTrial: true))
            for (path, call) in [
                ("startup-complete", "startupDidComplete"), ("check", "checkForUpdates"), ("switch-to-pending", "switchToPendingVersion"),
            ] {
                let response = try await LoopbackHTTP.request(port: port, "/__clientctl/" + path, method: "POST", headers: headers)
                #expect(response.status == 200, "\(path)")
                #expect(handler.calls.last == call)
            }
            let ack = try await LoopbackHTTP.request(port: port, "/__clientctl/startup-complete", method: "POST", headers: headers)
            #expect(try JSONDecoder().decode(ControlStatus.self, from: ack.body).lastKnownGood == "1.0.0")
        }
    }

    /// `activity` and `hold` (docs/apply-policies.md#serve): a hold needs a lease id and a
    /// number of seconds, 0 or more; the answer names when the lease ends.
    @Test func activityAndLeases() async throws {
        let handler = FakeControlHandler()
        let headers = shim.merging(["Content-Type": "application/json"]) { a, _ in a }
        try await withServer(handler) { port in
            let activity = try await LoopbackHTTP.request(port: port, "/__clientctl/activity", method: "POST", headers: headers)
            #expect(activity.status == 200 && handler.calls.last == "activity")
            let held = try await LoopbackHTTP.request(
                port: port, "/__clientctl/hold", method: "POST", headers: headers, body: #"{"lease":"ab-12","seconds":120}"#)
            #expect(held.status == 200 && held.text == #"{"until":"2027-01-15T08:02:00Z"}"#, "\(held.text)")
            #expect(handler.calls.last == "hold lease 120")
            for (body, says) in [
                ("", "the body needs"), (#"{"lease":"a b","seconds":1}"#, "lease"),
                (#"{"lease":"a","seconds":-1}"#, "seconds"), (#"{"lease":"a","seconds":true}"#, "seconds"),
            ] {
                let refused = try await LoopbackHTTP.request(port: port, "/__clientctl/hold", method: "POST", headers: headers, body: body)
                #expect(refused.status == 400 && refused.text.contains(says), "\(body): \(refused.text)")
            }
            #expect(handler.calls.filter { $0.hasPrefix("hold") }.count == 1, "refused holds never reach the agent")
            let crossSite = try await LoopbackHTTP.request(port: port, "/__clientctl/hold", method: "POST")
            #expect(crossSite.status == 403)
        }
    }

    /// `channel` and `set-channel` (docs/targeting.md#choosing-a-channel): the choice as
    /// JSON; a refusal answers 4xx naming why (400 a bad name or body, 403 a channel the
    /// root does not list, or no shim header), 405 a GET of `set-channel`.
    @Test func channelRoutesReadAndChooseAndRefuseNamingWhy() async throws {
        let handler = FakeControlHandler()
        let headers = shim.merging(["Content-Type": "application/json"]) { a, _ in a }
        try await withServer(handler) { port in
            let read = try await LoopbackHTTP.request(port: port, "/__clientctl/channel")
            #expect(read.status == 200 && read["cache-control"] == "no-store")
            #expect(read.text == #"{"channel":"stable","choosable":["beta","stable"],"rootChannel":"stable"}"#, "\(read.text)")
            let set = try await LoopbackHTTP.request(
                port: port, "/__clientctl/set-channel", method: "POST", headers: headers, body: #"{"channel":"beta","version":"1.0.0"}"#)
            let chosen = try JSONDecoder().decode(ControlChannels.self, from: set.body)
            #expect(set.status == 200 && chosen.channel == "beta")
            #expect(handler.calls.last == "setChannel beta")
            for (body, status, says) in [
                (#"{"channel":"nightly"}"#, 403, "channel 'nightly' is not allowed by trust root 1"),
                (#"{"channel":"be ta"}"#, 400, "not a channel name"), ("{}", 400, "the body needs"),
                (#"{"channel":7}"#, 400, "must be a channel name"),
            ] {
                let refused = try await LoopbackHTTP.request(port: port, "/__clientctl/set-channel", method: "POST", headers: headers, body: body)
                #expect(refused.status == status && refused.text.contains(says), "\(body): \(refused.status) \(refused.text)")
            }
            let crossSite = try await LoopbackHTTP.request(port: port, "/__clientctl/set-channel", method: "POST", body: #"{"channel":"beta"}"#)
            #expect(crossSite.status == 403 && handler.calls.filter { $0.hasPrefix("setChannel") }.count == 3, "never reaches the agent")
            let get = try await LoopbackHTTP.request(port: port, "/__clientctl/set-channel")
            #expect(get.status == 405 && get["allow"] == "POST")
        }
    }

    @Test func refusals() async throws {
        let handler = FakeControlHandler()
        handler.switchError = UpdaterError(.notFound, "no pending version to switch to")
        let headers = shim
        try await withServer(handler) { port in
            let noHeader = try await LoopbackHTTP.request(port: port, "/__clientctl/switch-to-pending", method: "POST")
            #expect(noHeader.status == 403)
            #expect(!handler.calls.contains("switchToPendingVersion"), "a cross-site POST never reaches the updater")
            let failed = try await LoopbackHTTP.request(port: port, "/__clientctl/switch-to-pending", method: "POST", headers: headers)
            #expect(failed.status == 500)
            #expect(failed.text == #"{"error":"no pending version to switch to"}"#)
            let wrongMethod = try await LoopbackHTTP.request(port: port, "/__clientctl/check")
            #expect(wrongMethod.status == 405 && wrongMethod["allow"] == "POST")
            let unknown = try await LoopbackHTTP.request(port: port, "/__clientctl/nope")
            #expect(unknown.status == 404)
        }
        try await withServer(nil) { port in
            let response = try await LoopbackHTTP.request(port: port, "/__clientctl/status")
            #expect(response.status == 503)
        }
    }

    @Test func eventStreamDeliversEvents() async throws {
        let handler = FakeControlHandler(status: ControlStatus(current: "1.0.0", pending: "1.1.0"))
        try await withServer(handler, heartbeat: .milliseconds(200)) { port in
            let stream = try await EventStreamConnection(port: port)
            let opened = try await stream.waitFor("event: updateAvailable\ndata: {\"version\":\"1.1.0\"}\n\n")
            #expect(opened.contains("Content-Type: text/event-stream") || opened.lowercased().contains("content-type: text/event-stream"))
            try await handler.wait(for: "the event stream to subscribe to the handler") { _, subscribers in subscribers > 0 }
            handler.push(.error(message: "Hash mismatch for asset: /app.js"))
            _ = try await stream.waitFor("event: error\ndata: {\"message\":\"Hash mismatch for asset: /app.js\"}\n\n")
            handler.push(.updateAvailable(version: "1.2.0"))
            _ = try await stream.waitFor("data: {\"version\":\"1.2.0\"}")
            _ = try await stream.waitFor(": keep-alive")
        }
    }
}
