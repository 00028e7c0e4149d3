import ClientFoundation
import ClientShim
import ClientUpdater
import Foundation
import Logging
import ServingCore
import ShellLoopback
import Synchronization
import TestSupport
import Testing

/// The native shell's loopback origin (docs/native-shell.md#origins-app-or-loopback-http)
/// over a real socket: the one-time launch token becomes the run's cookie, nothing
/// without that cookie is answered (403), `Host` is still checked first (421), there are
/// no control endpoints, and every page's version reaches the shell before its response.
@Suite struct ShellOriginServerTests {
    /// Versions of the pages answered, in order.
    final class Pages: Sendable {
        let served = Mutex<[String]>([])
    }

    func withServer(_ body: @Sendable (ShellOriginServer, Int, Pages) async throws -> Void) async throws {
        let root = try ArchiveRoot.standard()
        defer { withExtendedLifetime(root) {} }
        let configuration = ServerConfiguration(port: 0)
        let core = try ServingCore(wwwDirectory: nil, contentSecurityPolicy: nil, logger: Self.quietLogger)
        core.version = try ServedVersion.load(
            directory: root.serving("1.0.0"), memoryCacheFileLimit: configuration.memoryCacheFileLimit,
            memoryCacheTotalLimit: configuration.memoryCacheTotalLimit)
        let pages = Pages()
        let server = ShellOriginServer(
            core: core, configuration: configuration, waitForVersion: {},
            onPage: { version in pages.served.withLock { $0.append(version) } }, logger: Self.quietLogger)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let task = Task { try await server.run { port in continuation.yield(port) } }
        defer { task.cancel() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else { throw LoopbackHTTP.Failure(description: "server did not start") }
        try await body(server, port, pages)
    }

    static var quietLogger: Logger {
        var logger = Logger(label: "test.shell-origin")
        logger.logLevel = .critical
        return logger
    }

    /// The `name=value` of a `Set-Cookie` answer.
    static func cookie(_ response: HTTPResult) -> String {
        String(response["set-cookie"]?.split(separator: ";").first ?? "")
    }

    @Test func theLaunchTokenIsExchangedOnceForTheCookie() async throws {
        try await withServer { server, port, pages in
            let token = server.secret.mintToken()
            let launch = try await LoopbackHTTP.request(port: port, "/?\(LaunchSecret.name)=\(token)")
            #expect(launch.status == 303 && launch["location"] == "/", "\(launch.status) \(launch.headers)")
            let setCookie = try #require(launch["set-cookie"])
            #expect(setCookie.hasPrefix(LaunchSecret.name + "=") && setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict"))
            #expect(setCookie.contains("Path=/") && !setCookie.contains("Max-Age") && !setCookie.contains("Expires"), "a session cookie")
            #expect(launch["cache-control"] == "no-store")
            #expect(!setCookie.contains(token), "the cookie is not the token")

            let again = try await LoopbackHTTP.request(port: port, "/?\(LaunchSecret.name)=\(token)")
            #expect(again.status == 403 && again.text.contains("used or has expired"), "a token is spent by its first use")
            for guess in ["0", String(repeating: "0", count: 64), token.uppercased(), ""] {
                let refused = try await LoopbackHTTP.request(port: port, "/?\(LaunchSecret.name)=\(guess)")
                #expect(refused.status == 403, "\(guess)")
            }

            let cookie = Self.cookie(launch)
            let page = try await LoopbackHTTP.request(port: port, "/", headers: ["Cookie": "other=1; " + cookie])
            #expect(page.status == 200 && page.text.contains(Shim.marker))
            let etag = try #require(page["etag"])
            let notModified = try await LoopbackHTTP.request(port: port, "/settings", headers: ["Cookie": cookie, "If-None-Match": etag])
            #expect(notModified.status == 304)
            let script = try await LoopbackHTTP.request(port: port, "/style.css", headers: ["Cookie": cookie])
            #expect(script.status == 200 && script.text == "body{color:red}")
            #expect(pages.served.withLock { $0 } == ["1.0.0", "1.0.0"], "the page and its revalidation, not the stylesheet")
        }
    }

    @Test func nothingIsAnsweredWithoutTheCookie() async throws {
        try await withServer { server, port, pages in
            let launch = try await LoopbackHTTP.request(port: port, "/?\(LaunchSecret.name)=\(server.secret.mintToken())")
            let cookie = Self.cookie(launch)
            let wrong = LaunchSecret.name + "=" + String(repeating: "a", count: 64)
            for headers in [[:], ["Cookie": wrong], ["Cookie": cookie + "0"], ["Cookie": "x" + cookie]] {
                for target in ["/", "/style.css", "/settings", "/__clientctl/status", "/?other=1"] {
                    let refused = try await LoopbackHTTP.request(port: port, target, headers: headers)
                    #expect(refused.status == 403, "\(target) \(headers)")
                    #expect(refused.text.contains("only the clientctl-shell window"), "\(refused.text)")
                }
                let post = try await LoopbackHTTP.request(port: port, "/__clientctl/startup-complete", method: "POST", headers: headers)
                #expect(post.status == 403, "\(headers)")
            }
            #expect(pages.served.withLock { $0 }.isEmpty)
        }
    }

    @Test func theHostIsCheckedFirstAndThereAreNoControlEndpoints() async throws {
        try await withServer { server, port, _ in
            let cookie = Self.cookie(try await LoopbackHTTP.request(port: port, "/?\(LaunchSecret.name)=\(server.secret.mintToken())"))
            for host in ["evil.example:\(port)", "127.0.0.1:\(port + 1)", "127.0.0.1"] {
                let head = "GET / HTTP/1.1\r\nHost: \(host)\r\nCookie: \(cookie)\r\n"
                let refused = try await LoopbackHTTP.raw(port: port, head)
                #expect(refused.status == 421, "Host \(host)")
            }
            // A token is spent only by a request naming this listener.
            let token = server.secret.mintToken()
            let rebound = try await LoopbackHTTP.raw(port: port, "GET /?\(LaunchSecret.name)=\(token) HTTP/1.1\r\nHost: evil.example:\(port)\r\n")
            #expect(rebound.status == 421)
            let launch = try await LoopbackHTTP.raw(port: port, "GET /?\(LaunchSecret.name)=\(token) HTTP/1.1\r\nHost: localhost:\(port)\r\n")
            #expect(launch.status == 303)

            for endpoint in ["status", "events"] {
                let none = try await LoopbackHTTP.request(port: port, "/__clientctl/\(endpoint)", headers: ["Cookie": cookie])
                #expect(none.status == 404 && none.text.contains("message handler"), "\(endpoint): \(none.status)")
            }
            let post = try await LoopbackHTTP.request(
                port: port, "/__clientctl/startup-complete", method: "POST", headers: ["Cookie": cookie, "X-Clientctl-Shim": "1"])
            #expect(post.status == 404, "\(post.status)")
            let put = try await LoopbackHTTP.request(port: port, "/style.css", method: "PUT", headers: ["Cookie": cookie])
            #expect(put.status == 405)
        }
    }

    @Test func atMostEightTokensWaitAndEachOnce() {
        let secret = LaunchSecret()
        let tokens = (0..<9).map { _ in secret.mintToken() }
        #expect(Set(tokens).count == 9 && tokens.allSatisfy { $0.count == 64 })
        #expect(!secret.redeem(tokens[0]), "the oldest was dropped for the ninth")
        for token in tokens.dropFirst() { #expect(secret.redeem(token)) }
        for token in tokens { #expect(!secret.redeem(token)) }
    }
}
