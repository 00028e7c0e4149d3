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
            #expect(f.nginx.accessLog.count == 3)
            #expect(f.nginx.accessLog.allSatisfy { $0.contains("clientctl/\(ClientctlVersion.string)") }, "\(f.nginx.accessLog)")
        }

        @Test func systemTrustStoreRefusesThePrivateCA() async throws {
            let f = try await offPool { try Fixture() }
            try await withTransport { transport in
                let error = await #expect(throws: UpdaterError.self) { try await transport.fetchAll(f.nginx.url(0, "/app.tgz")) }
                try Self.expectCertificateFailure(error)
            }
        }

        @Test func wrongCAIsRefused() async throws {
            let f = try await offPool { try Fixture() }
            try await withTransport(f.trusting) { transport in
                let error = await #expect(throws: UpdaterError.self) { try await transport.fetchAll(f.nginx.url(1, "/app.tgz")) }
                try Self.expectCertificateFailure(error)
            }
        }

        @Test func expiredCertificateIsRefused() async throws {
            let f = try await offPool { try Fixture() }
            try await withTransport(f.trusting) { transport in
                let error = await #expect(throws: UpdaterError.self) { try await transport.fetchAll(f.nginx.url(2, "/app.tgz")) }
                try Self.expectCertificateFailure(error)
                #expect(
                    error?.message.hasSuffix("TLS failure: the server's certificate failed verification: it expired on 2020-02-01T00:00:00Z") == true,
                    "\(error?.message ?? "")")
            }
        }

        @Test func httpsToHTTPRedirectIsRefused() async throws {
            let f = try await offPool { try Fixture() }
            try await withTransport(f.trusting) { transport in
                let error = await #expect(throws: UpdaterError.self) { try await transport.fetchAll(f.nginx.url(3, "/app.tgz")) }
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

        static func expectCertificateFailure(_ error: UpdaterError?) throws {
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
