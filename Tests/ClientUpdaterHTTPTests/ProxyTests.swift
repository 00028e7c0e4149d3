import ClientUpdater
import ClientUpdaterHTTP
import Foundation
import Synchronization
import TestSupport
import Testing

extension HTTPSuites {
    /// Proxy selection as curl does it (curl's docs: "ENVIRONMENT" in curl.1 — `http_proxy`
    /// lowercase first, `HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY` with `*`, domain suffixes
    /// with or without a leading dot, and `-x` overriding the variables) and requests
    /// through a real tinyproxy on 127.0.0.1.
    @Suite struct ProxyTests {
        func url(_ text: String) throws -> URL { try #require(URL(string: text)) }

        @Test func environmentVariablesPerScheme() throws {
            let env = [
                "HTTP_PROXY": "http://upper:1", "http_proxy": "http://lower:2", "HTTPS_PROXY": "secure:3128",
                "ALL_PROXY": "socks5://all:1080",
            ]
            let settings = try ProxySettings(environment: env)
            #expect(settings.proxy(for: try url("http://example.com/a"))?.host == "lower", "lowercase wins, as in curl")
            let https = try #require(settings.proxy(for: try url("https://example.com/a")))
            #expect(https.host == "secure" && https.port == 3128 && https.kind == .http)
            let onlyAll = try ProxySettings(environment: ["all_proxy": "socks5h://all"])
            #expect(onlyAll.proxy(for: try url("https://x.example/")) == ProxyEndpoint(kind: .socks5, host: "all", port: 1080))
            #expect(try ProxySettings(environment: [:]).proxy(for: try url("https://x.example/")) == nil)
            #expect(settings.proxy(for: try url("file:///tmp/x")) == nil)
        }

        @Test func explicitProxyReplacesTheEnvironmentButNotNoProxy() throws {
            let env = ["https_proxy": "http://env:1", "no_proxy": "internal.example"]
            let settings = try ProxySettings(environment: env, explicit: "http://user:p%40ss@config-proxy:8080")
            let chosen = try #require(settings.proxy(for: try url("https://cdn.example.com/m.json")))
            #expect(chosen.host == "config-proxy" && chosen.port == 8080 && chosen.credentials == "user:p@ss")
            #expect(chosen.description == "http://config-proxy:8080", "credentials never printed")
            #expect(settings.proxy(for: try url("http://cdn.example.com/m.json")) == chosen)
            #expect(settings.proxy(for: try url("https://a.internal.example/m.json")) == nil)
        }

        @Test func noProxyEntries() throws {
            let settings = try ProxySettings(environment: [
                "HTTPS_PROXY": "http://p:1", "HTTP_PROXY": "http://p:1",
                "NO_PROXY": ".corp.example, example.org 10.0.0.7,localhost:8080,[::1]:9000",
            ])
            for bypass in [
                "https://corp.example/", "https://a.b.corp.example/", "https://example.org/", "https://www.example.org/",
                "http://10.0.0.7/", "http://localhost:8080/", "http://[::1]:9000/",
            ] {
                #expect(settings.proxy(for: try url(bypass)) == nil, "\(bypass) bypasses the proxy")
            }
            for proxied in [
                "https://notcorp.example/", "https://example.org.evil/", "http://10.0.0.70/", "http://localhost/",
                "http://localhost:8081/", "http://[::1]/", "https://127.0.0.1/",
            ] {
                #expect(settings.proxy(for: try url(proxied)) != nil, "\(proxied) goes through the proxy")
            }
            let star = try ProxySettings(environment: ["https_proxy": "http://p:1", "no_proxy": "*"])
            #expect(star.proxy(for: try url("https://anything.example/")) == nil)
        }

        @Test func badProxyValuesAreConfigErrors() async throws {
            for bad in ["https://p:1", "ftp://p:1", "http://"] {
                let error = #expect(throws: HTTPTransportError.self) { try ProxySettings(environment: ["HTTPS_PROXY": bad]) }
                #expect(error?.code == .configInvalid)
                #expect(error?.message.hasPrefix("HTTPS_PROXY:") == true, "\(error?.message ?? "")")
            }
            // A non-throwing transport defers the problem to its first request.
            let settings = HTTPTransportSettings.fromEnvironment(["https_proxy": "gopher://x"])
            let error = await #expect(throws: HTTPTransportError.self) {
                try await HTTPTransport(settings: settings).fetchAll(try url("https://127.0.0.1:1/x"))
            }
            #expect(error?.code == .configInvalid)
        }

        /// `HTTP_PROXY` sends the request through tinyproxy (a `CONNECT` tunnel, which is how
        /// AsyncHTTPClient speaks to an HTTP proxy); `NO_PROXY` naming the host:port sends it
        /// directly.
        @Test func throughTinyproxyAndAroundIt() async throws {
            let work = try TemporaryDirectory("proxy")
            let proxy = try await offPool { try TinyProxy(in: work.path) }
            defer { proxy.stop() }
            let server = try LoopbackHTTPServer { request in .text("hello \(request.path)") }
            defer { server.stop() }
            let proxied = HTTPTransportSettings.fromEnvironment(["HTTP_PROXY": proxy.url])
            try await withTransport(proxied) { transport in
                let (response, body) = try await transport.fetchAll(server.url("/via"))
                #expect(response.status == 200 && body == Data("hello /via".utf8))
            }
            #expect(proxy.requests.contains("CONNECT 127.0.0.1:\(server.port) HTTP/1.1"), "\(proxy.requests)")
            #expect(server.requests.first?[header: "user-agent"] == HTTPTransportSettings.defaultUserAgent)

            let bypass = HTTPTransportSettings.fromEnvironment(["HTTP_PROXY": proxy.url, "NO_PROXY": "127.0.0.1:\(server.port)"])
            let seen = proxy.requests.count
            try await withTransport(bypass) { transport in
                let (_, body) = try await transport.fetchAll(server.url("/direct"))
                #expect(body == Data("hello /direct".utf8))
            }
            #expect(proxy.requests.count == seen, "NO_PROXY host:port bypassed the proxy")
            #expect(server.requests.map(\.path) == ["/via", "/direct"])
        }

        @Test func aDeadProxyIsNamedInTheError() async throws {
            let refusing = try LoopbackHTTPServer.refusingPort()
            let port = refusing.port
            let server = try LoopbackHTTPServer { _ in .text("never") }
            defer { server.stop() }
            let settings = HTTPTransportSettings.fromEnvironment(["http_proxy": "http://127.0.0.1:\(port)"])
            try await withTransport(settings) { transport in
                let error = await #expect(throws: HTTPTransportError.self) { try await transport.fetchAll(server.url("/x")) }
                guard case .proxy(let text) = error?.transportFailure else {
                    Issue.record("expected a proxy failure, got \(error?.message ?? "nothing")")
                    return
                }
                #expect(text.contains("127.0.0.1:\(port)"), "\(text)")
            }
            #expect(server.requests.isEmpty)
        }

        /// A proxy answering `407` (tinyproxy with `BasicAuth`) cannot succeed on a retry:
        /// one attempt, the proxy named by host:port and its status, no credentials shown.
        @Test func aProxyAnswering407FailsAtOnceNamingTheProxy() async throws {
            let work = try TemporaryDirectory("proxy-auth")
            let proxy = try await offPool { try TinyProxy(in: work.path, extraConfig: "BasicAuth alice s3cret") }
            defer { proxy.stop() }
            let server = try LoopbackHTTPServer { request in .text("hello \(request.path)") }
            defer { server.stop() }
            let address = "127.0.0.1:\(proxy.port)"
            // tinyproxy answers wrong credentials with 401, not 407: a loopback proxy that
            // answers every CONNECT with 407 stands in for one that refuses them.
            let faults = LoopbackFaults()
            faults.add(.status(407))
            let refusing = try LoopbackHTTPServer(handler: faults.wrap { _ in .text("never") })
            defer { refusing.stop() }
            for (proxyURL, named, says) in [
                (proxy.url, address, "it wants a user and password"),
                (
                    "http://alice:wrong-password@127.0.0.1:\(refusing.port)", "127.0.0.1:\(refusing.port)",
                    "it refused the user and password of the proxy URL"
                ),
            ] {
                let retries = Counter()
                try await withTransport(HTTPTransportSettings.fromEnvironment(["http_proxy": proxyURL])) { transport in
                    var downloader = Downloader(transport: transport, retry: RetryPolicy(maxAttempts: 5, initialDelay: .zero, maxDelay: .zero))
                    downloader.onRetry = { _, _, _ in retries.increment() }
                    let error = await #expect(throws: UpdaterError.self) { try await downloader.fetchSmall(server.url("/m.json"), cap: 1024) }
                    guard case .proxyRejected = error?.transportFailure else {
                        Issue.record("expected a proxy refusal, got \(error?.message ?? "nothing")")
                        return
                    }
                    let message = error?.message ?? ""
                    #expect(message.contains("the proxy \(named) answered 407 Proxy Authentication Required: \(says)"), "\(message)")
                    #expect(!message.contains("wrong-password") && !message.contains("alice"), "\(message)")
                    #expect(error?.isTransient == false)
                }
                #expect(retries.value == 0, "a 407 was retried")
            }
            #expect(server.requests.isEmpty)
            // The right credentials pass: the 407 came from the proxy's authentication.
            try await withTransport(HTTPTransportSettings.fromEnvironment(["http_proxy": "http://alice:s3cret@\(address)"])) { transport in
                let (response, _) = try await transport.fetchAll(server.url("/ok"))
                #expect(response.status == 200)
            }
        }

        /// A proxy that resets the connection (a loopback server that sends RST after
        /// reading the CONNECT) is named in the message.
        @Test func aProxyThatResetsTheConnectionIsNamed() async throws {
            let faults = LoopbackFaults()
            faults.add(.dropConnection)
            let resetting = try LoopbackHTTPServer(handler: faults.wrap { _ in .text("never") })
            defer { resetting.stop() }
            let server = try LoopbackHTTPServer { _ in .text("never") }
            defer { server.stop() }
            let settings = HTTPTransportSettings.fromEnvironment(["http_proxy": "http://u:p@127.0.0.1:\(resetting.port)"])
            try await withTransport(settings) { transport in
                let error = await #expect(throws: HTTPTransportError.self) { try await transport.fetchAll(server.url("/x")) }
                let message = error?.message ?? ""
                #expect(message.contains("proxy 127.0.0.1:\(resetting.port)"), "\(message)")
                #expect(message.contains("reset"), "\(message)")
                #expect(!message.contains("u:p@"), "\(message)")
            }
            #expect(server.requests.isEmpty)
        }
    }
}

/// Counts calls from any thread.
private final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
