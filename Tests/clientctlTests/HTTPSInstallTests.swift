import ClientUpdater
import DeviceSetup
import Foundation
import TestSupport
import Testing

/// `clientctl install` over https from a real nginx with TLS (nginx docs, "Configuring
/// HTTPS servers": `listen … ssl`, `ssl_certificate`, `ssl_certificate_key`), trusting a
/// private CA made by the test with openssl through `init --ca-file`; through tinyproxy
/// with `init --proxy`.
@Suite struct HTTPSInstallTests {
    final class Rig: @unchecked Sendable {
        // @unchecked Sendable: owned by one test.
        let f: DeviceFixture
        let ca: TestCA
        let nginx: NginxTLS

        init() throws {
            f = try DeviceFixture()
            try f.publish("1.0.0")
            ca = try TestCA(in: f.tmp("ca"))
            let other = try TestCA(in: f.tmp("other-ca"), name: "someone else's CA")
            let good = try ca.issue("good")
            let foreign = try other.issue("foreign")
            let expired = try ca.issue("expired", expired: true)
            nginx = try NginxTLS(
                root: f.tmp("releases"),
                sites: [
                    .init(certificate: good.certificate, key: good.key),
                    .init(certificate: foreign.certificate, key: foreign.key),
                    .init(certificate: expired.certificate, key: expired.key),
                ], in: f.tmp("nginx"))
        }

        deinit { nginx.stop() }

        /// `clientctl init` of a new root fetching from nginx site `site`.
        func initRoot(_ name: String, site: Int, extra: [String] = ["--ca-file"]) async throws -> (String, Subprocess.Result) {
            let root = f.tmp(name)
            let caArgs = extra == ["--ca-file"] ? ["--ca-file", ca.certificate] : extra
            let result = try await ClientctlBinary.run(
                [
                    "init", "--root", root, "--app", "com.example.notes", "--channel", "stable",
                    "--manifest-url", nginx.url(site, "/stable/manifest.json").absoluteString,
                    "--trust", ClientctlBinary.packagePath("Keys/test-signing.pub.pem"), "--shell-version", "1.0.0",
                ] + caArgs)
            return (root, result)
        }
    }

    @Test func installsOverHTTPSWithAPrivateCA() async throws {
        let rig = try Rig()
        let (root, made) = try await rig.initRoot("https-root", site: 0)
        #expect(made.status == 0, "\(made.errorOutput)")
        let config = try DeviceConfig.load(RootLayout(root: root))
        #expect(config.caFile == rig.ca.certificate)
        let install = try await ClientctlBinary.run(["install", "--root", root, "--json"])
        #expect(install.status == 0, "\(install.errorOutput)")
        let report = try JSONDecoder().decode(InstallReport.self, from: install.stdout)
        #expect(report.result == .installed && report.version == "1.0.0")
        #expect(rig.nginx.accessLog.contains { $0.contains("GET /stable/v1.0.0.tar.gz") && $0.contains(" 200 ") }, "\(rig.nginx.accessLog)")
        let again = try await ClientctlBinary.run(["install", "--root", root])
        #expect(again.status == 0 && again.output.contains("up to date"), "\(again.errorOutput)")
    }

    @Test func untrustedCertificatesExit69AndLeaveTheRootAlone() async throws {
        let rig = try Rig()
        for (site, name) in [(1, "wrong-ca"), (2, "expired")] {
            let (root, made) = try await rig.initRoot(name, site: site)
            #expect(made.status == 0, "\(made.errorOutput)")
            let before = try TreeSnapshot(root)
            let install = try await ClientctlBinary.run(["install", "--root", root])
            #expect(install.status == 69, "\(name): \(install.errorOutput)")
            #expect(install.errorOutput.contains("TLS failure: the server's certificate failed verification"), "\(name): \(install.errorOutput)")
            #expect(!install.errorOutput.contains("gave up after"), "a certificate problem is not retried")
            if name == "expired" { #expect(install.errorOutput.contains("it expired on 2020-02-01T00:00:00Z"), "\(install.errorOutput)") }
            let after = try TreeSnapshot(root)
            #expect(before == after, "\(name): \(before.difference(from: after))")
        }
        // Without --ca-file the system trust store does not know the test CA either.
        let (root, _) = try await rig.initRoot("system-store", site: 0, extra: [])
        let install = try await ClientctlBinary.run(["install", "--root", root])
        #expect(install.status == 69 && install.errorOutput.contains("certificate"), "\(install.errorOutput)")
    }

    @Test func badCAFileOrProxyIsAUsageError() async throws {
        let rig = try Rig()
        let (_, missing) = try await rig.initRoot("missing-ca", site: 0, extra: ["--ca-file", rig.f.tmp("nope.pem")])
        #expect(missing.status == 64)
        #expect(missing.errorOutput.contains("--ca-file: caFile \(rig.f.tmp("nope.pem")) cannot be read"), "\(missing.errorOutput)")
        let (_, proxy) = try await rig.initRoot("bad-proxy", site: 0, extra: ["--proxy", "ftp://p:1"])
        #expect(proxy.status == 64)
        #expect(proxy.errorOutput.contains("--proxy: proxy scheme 'ftp' is not supported"), "\(proxy.errorOutput)")
    }

    /// `init --ca-file` parses the PEM as the transport will: a CERTIFICATE block that is
    /// not a certificate, or a file over the 1 MiB cap (refused from its size, never read
    /// whole), fails init with one line and exit 65, and no root is made.
    @Test func aCAFileTheTransportWouldRefuseFailsInit() async throws {
        let rig = try Rig()
        let good = try String(contentsOfFile: rig.ca.certificate, encoding: .utf8)
        let notACertificate = rig.f.tmp("not-a-cert.pem")
        let body = Data("this is not DER at all, just text that base64 accepts".utf8).base64EncodedString()
        try (good + "-----BEGIN CERTIFICATE-----\n\(body)\n-----END CERTIFICATE-----\n")
            .write(toFile: notACertificate, atomically: true, encoding: .utf8)
        let huge = rig.f.tmp("huge.pem")
        // A valid certificate, then 100 MB (sparse): only the size can refuse it.
        try Data(good.utf8).write(to: URL(fileURLWithPath: huge))
        try #require(truncate(huge, 100_000_000) == 0)
        let cases = [
            (notACertificate, "--ca-file: caFile \(notACertificate) cannot be used: a CERTIFICATE block in it is not a valid X.509 certificate"),
            (huge, "--ca-file: caFile \(huge) is 100000000 bytes, over the 1 MiB cap for a CA file: refusing to read it"),
        ]
        for (file, message) in cases {
            let name = "root-" + (file as NSString).lastPathComponent
            let (root, made) = try await rig.initRoot(name, site: 0, extra: ["--ca-file", file])
            #expect(made.status == 65, "\(made.errorOutput)")
            #expect(made.errorOutput.hasPrefix("clientctl: \(message)"), "\(made.errorOutput)")
            #expect(made.errorOutput.filter { $0 == "\n" }.count == 1, "one line: \(made.errorOutput)")
            #expect(!FileManager.default.fileExists(atPath: root), "init left \(root) behind")
        }
        // The transport refuses the same file the same way (a config edited by hand: 78).
        let (root, made) = try await rig.initRoot("edited", site: 0)
        #expect(made.status == 0, "\(made.errorOutput)")
        let config = root + "/config.json"
        let text = try String(contentsOfFile: config, encoding: .utf8)
        try text.replacingOccurrences(of: rig.ca.certificate, with: notACertificate).write(toFile: config, atomically: true, encoding: .utf8)
        let install = try await ClientctlBinary.run(["install", "--root", root])
        #expect(install.status == 78, "\(install.errorOutput)")
        #expect(install.errorOutput.contains("is not a valid X.509 certificate"), "\(install.errorOutput)")
    }

    /// `init --proxy` puts the proxy in config.json; the install's https requests go
    /// through tinyproxy as CONNECT tunnels.
    @Test func installsThroughTheConfiguredProxy() async throws {
        let rig = try Rig()
        let proxy = try TinyProxy(in: rig.f.tmp("nginx"))
        defer { proxy.stop() }
        let (root, made) = try await rig.initRoot("proxied", site: 0, extra: ["--ca-file", rig.ca.certificate, "--proxy", proxy.url])
        #expect(made.status == 0, "\(made.errorOutput)")
        let install = try await ClientctlBinary.run(["install", "--root", root], environment: ["NO_PROXY": "", "no_proxy": ""])
        #expect(install.status == 0, "\(install.errorOutput)")
        #expect(
            !proxy.requests.isEmpty && proxy.requests.allSatisfy { $0 == "CONNECT 127.0.0.1:\(rig.nginx.ports[0]) HTTP/1.1" },
            "\(proxy.requests)")
    }
}
