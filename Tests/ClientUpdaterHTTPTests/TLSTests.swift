import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import Foundation
import TestSupport
import Testing

extension HTTPSuites {
    /// https against a real nginx (Debian nginx-light, `listen … ssl`, nginx docs
    /// "Configuring HTTPS servers") with certificates from a CA the test makes with openssl.
    @Suite struct TLSTests {
        /// Sites: 0 valid cert of `ca`; 1 valid cert of another CA; 2 expired cert of `ca`;
        /// 3 valid cert of `ca` that redirects to http:.
        final class Fixture: @unchecked Sendable {
            // @unchecked Sendable: immutable after init.
            let work: TemporaryDirectory
            let ca: TestCA
            let nginx: NginxTLS
            let payload = httpTestBytes(200_000)

            init() throws {
                work = try TemporaryDirectory("tls")
                let www = work("www")
                try FileManager.default.createDirectory(atPath: www, withIntermediateDirectories: true)
                try payload.write(to: URL(fileURLWithPath: www + "/app.tgz"))
                ca = try TestCA(in: work("ca"))
                let other = try TestCA(in: work("other-ca"), name: "someone else's CA")
                let good = try ca.issue("good")
                let foreign = try other.issue("foreign")
                let expired = try ca.issue("expired", expired: true)
                let plainPort = try LoopbackHTTPServer.unusedPort()
                let sites: [NginxTLS.Site] = [
                    .init(certificate: good.certificate, key: good.key),
                    .init(certificate: foreign.certificate, key: foreign.key),
                    .init(certificate: expired.certificate, key: expired.key),
                    .init(
                        certificate: good.certificate, key: good.key, extra: "location / { return 302 http://127.0.0.1:\(plainPort)$request_uri; }"),
                ]
                nginx = try NginxTLS(root: www, sites: sites, in: work("nginx"))
            }

            var trusting: HTTPTransportSettings {
                var s = HTTPTransportSettings()
                s.caFile = ca.certificate
                return s
            }

            deinit { nginx.stop() }
        }

        @Test func privateCAFromCaFile() async throws {
            let f = try await offPool { try Fixture() }
            try await withTransport(f.trusting) { transport in
                let (response, body) = try await transport.fetchAll(f.nginx.url(0, "/app.tgz"))
                #expect(response.status == 200 && body == f.payload)
                let (ranged, tail) = try await transport.fetchAll(f.nginx.url(0, "/app.tgz"), headers: ["Range": "bytes=199000-"])
                #expect(ranged.status == 206 && tail == f.payload.suffix(1000))
                let etag = try #require(response[header: "etag"])
                let (again, empty) = try await transport.fetchAll(f.nginx.url(0, "/app.tgz"), headers: ["If-None-Match": etag])
                #expect(again.status == 304 && empty.isEmpty)
            }
            // nginx writes a request's access-log line after it sent the response (its log
            // phase): the client can hold the third response before the third line exists.
            try await Poll.until("nginx's access log to hold a line for each of the 3 requests", timeout: 60) { f.nginx.accessLog.count >= 3 }
            #expect(f.nginx.accessLog.count == 3, "\(f.nginx.accessLog)")
            #expect(f.nginx.accessLog.allSatisfy { $0.contains("clientctl/\(ClientctlVersion.string)") }, "\(f.nginx.accessLog)")
        }

        @Test func systemTrustStoreRefusesThePrivateCA() async throws {
            let f = try await offPool { try Fixture() }
            try await withTransport { transport in
                let error = await #expect(throws: HTTPTransportError.self) { try await transport.fetchAll(f.nginx.url(0, "/app.tgz")) }
                try Self.expectCertificateFailure(error)
            }
        }

        @Test func wrongCAIsRefused() async throws {
            let f = try await offPool { try Fixture() }
            try await withTransport(f.trusting) { transport in
                let error = await #expect(throws: HTTPTransportError.self) { try await transport.fetchAll(f.nginx.url(1, "/app.tgz")) }
                try Self.expectCertificateFailure(error)
            }
        }

        @Test func expiredCertificateIsRefused() async throws {
            let f = try await offPool { try Fixture() }
            try await withTransport(f.trusting) { transport in
                let error = await #expect(throws: HTTPTransportError.self) { try await transport.fetchAll(f.nginx.url(2, "/app.tgz")) }
                try Self.expectCertificateFailure(error)
                #expect(
                    error?.message.hasSuffix("TLS failure: the server's certificate failed verification: it expired on 2020-02-01T00:00:00Z") == true,
                    "\(error?.message ?? "")")
            }
        }

        @Test func httpsToHTTPRedirectIsRefused() async throws {
            let f = try await offPool { try Fixture() }
            try await withTransport(f.trusting) { transport in
                let error = await #expect(throws: HTTPTransportError.self) { try await transport.fetchAll(f.nginx.url(3, "/app.tgz")) }
                guard case .redirect(let why) = error?.transportFailure else {
                    Issue.record("expected a refused redirect, got \(error?.message ?? "nothing")")
                    return
                }
                #expect(why.contains("downgrade https: to http:"))
                #expect(error?.isTransient == false)
            }
        }

        /// https through tinyproxy: a `CONNECT` tunnel, TLS end to end with nginx.
        @Test func httpsThroughTinyproxyConnect() async throws {
            let f = try await offPool { try Fixture() }
            let proxy = try await offPool { try TinyProxy(in: f.work.path) }
            defer { proxy.stop() }
            var settings = f.trusting
            settings.proxies = try ProxySettings(environment: ["HTTPS_PROXY": proxy.url])
            try await withTransport(settings) { transport in
                let (response, body) = try await transport.fetchAll(f.nginx.url(0, "/app.tgz"))
                #expect(response.status == 200 && body == f.payload)
            }
            #expect(proxy.requests == ["CONNECT 127.0.0.1:\(f.nginx.ports[0]) HTTP/1.1"], "\(proxy.requests)")
        }

        /// TLS failures through a proxy say in our words what failed — the URL's host, the
        /// proxy, the certificate problem — and never print BoringSSL's raw error, which names
        /// its source files by their absolute paths on the build machine.
        @Test func tlsFailuresThroughAProxyAreInOurWords() async throws {
            let f = try await offPool { try Fixture() }
            let proxy = try await offPool { try TinyProxy(in: f.work.path) }
            defer { proxy.stop() }
            let plain = try PlainTextPort()
            defer { plain.stop() }
            let plainHTTPS = try #require(URL(string: "https://127.0.0.1:\(plain.port)/app.tgz"))
            var settings = f.trusting
            settings.proxies = try ProxySettings(environment: ["HTTPS_PROXY": proxy.url])
            let via = "(through the proxy 127.0.0.1:\(proxy.port))"
            let cases: [(URL, String)] = [
                (f.nginx.url(1, "/app.tgz"), "TLS failure: the server's certificate failed verification (CERTIFICATE_VERIFY_FAILED)"),
                (plainHTTPS, "TLS failure: the server did not answer in TLS (WRONG_VERSION_NUMBER)"),
            ]
            try await withTransport(settings) { transport in
                for (url, words) in cases {
                    let error = await #expect(throws: HTTPTransportError.self) { try await transport.fetchAll(url) }
                    let message = error?.message ?? ""
                    #expect(message.hasPrefix("GET \(url.absoluteString): \(words)"), "\(message)")
                    #expect(message.hasSuffix(via), "\(message)")
                    for leak in [".cc", ".c:", "/.build/", "OPENSSL_internal", "BoringSSL", "NIOSSL"] {
                        #expect(!message.contains(leak), "raw TLS library text (\(leak)) in: \(message)")
                    }
                    #expect(error?.isTransient == false)
                }
            }
            // Direct, the same words without the proxy.
            try await withTransport(f.trusting) { transport in
                let error = await #expect(throws: HTTPTransportError.self) { try await transport.fetchAll(plainHTTPS) }
                let message = error?.message ?? ""
                #expect(
                    message == "GET \(plainHTTPS.absoluteString): " + cases[1].1
                        + ": an http: server on an https: URL, or a proxy answering in plain text", "\(message)")
            }
        }

        static func expectCertificateFailure(_ error: HTTPTransportError?) throws {
            let error = try #require(error)
            #expect(error.code == .network)
            #expect(error.kind == .unavailable, "exit 69")
            guard case .tls(let text) = error.transportFailure else {
                Issue.record("expected a TLS failure, got \(error.message)")
                return
            }
            #expect(text.contains("certificate"), "\(text)")
            #expect(error.isTransient == false, "a bad certificate is not retried")
        }
    }
}

/// A loopback port that answers whatever a connection sends first with a plain-text HTTP
/// `400`: an http: server where a client expects TLS.
final class PlainTextPort: Sendable {
    // `fd` and `port` are immutable after init; the accept thread owns the rest.
    let port: UInt16
    private let fd: Int32

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } }
        guard listener >= 0, bound == 0, listen(listener, 16) == 0 else { throw CocoaError(.fileWriteUnknown) }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        fd = listener
        port = UInt16(bigEndian: address.sin_port)
        Thread {
            let answer = Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 { return }
                // Answer what the client sends first (a TLS ClientHello), as an http: server does.
                var sink = [UInt8](repeating: 0, count: 4096)
                if recv(client, &sink, sink.count, 0) > 0 {
                    _ = answer.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    shutdown(client, Int32(SHUT_WR))
                    while recv(client, &sink, sink.count, 0) > 0 {}
                }
                close(client)
            }
        }.start()
    }

    /// Stops accepting (the accept thread ends).
    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }
}
