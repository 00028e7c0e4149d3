import ClientFoundation
import ClientUpdater
import Foundation
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// Every way a feed can lie about a release: each is rejected with a precise error, and
/// the device root is left exactly as it was (only last-check.json records the failure).
@Suite struct HostileManifestTests {
    /// A fixture with 1.0.0 installed, so "unchanged" covers real state.
    func installedFixture() async throws -> DeviceFixture {
        let f = try DeviceFixture()
        try f.publish("1.0.0")
        _ = try await f.updater().install()
        return f
    }

    /// Installs and expects a rejection whose message contains `expected`; checks the root.
    func expectRejected(
        _ f: DeviceFixture, _ expected: String, exit: ClientFoundation.FailureKind = .dataError,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let before = try f.snapshot()
        do {
            let report = try await f.updater().install()
            Issue.record("expected a rejection containing \"\(expected)\", got \(report)", sourceLocation: sourceLocation)
        } catch let error as any ClientctlError {
            #expect(error.message.contains(expected), "message: \(error.message)", sourceLocation: sourceLocation)
            #expect(error.kind == exit, sourceLocation: sourceLocation)
            #expect(!error.message.contains("\n"), "one line", sourceLocation: sourceLocation)
        }
        let after = try f.snapshot()
        #expect(after == before, "root changed: \(after.difference(from: before))", sourceLocation: sourceLocation)
        let status = try await f.updater().status()
        #expect(status.lastCheck?.result == (exit == .dataError ? "rejected" : "failed"), sourceLocation: sourceLocation)
    }

    @Test func badSignatureIsRejected() async throws {
        let f = try await installedFixture()
        var m = try f.publish("1.1.0", makeCurrent: false)
        if case .string(let sig)? = m["signature"], var bytes = Data(base64Encoded: sig) {
            bytes[5] ^= 0x01
            m["signature"] = .string(bytes.base64EncodedString())
        }
        try f.releases.writeManifest(m)
        try await expectRejected(f, "signature")
        #expect(f.requests(to: "/stable/v1.1.0.tar.gz").isEmpty, "nothing is downloaded before the signature verifies")
    }

    @Test func untrustedKeyIsRejected() async throws {
        let f = try await installedFixture()
        let stranger = try ReleaseFolder(path: f.tmp("stranger"), key: Ed25519.PrivateKey.generate())
        let client = try ReleaseFolder.makeClient(at: f.tmp("evil"), version: "1.1.0")
        let m = try stranger.publish("1.1.0", archive: ReleaseFolder.tarGz(of: client))
        try f.releases.writeManifest(m)
        try await expectRejected(f, "not trusted")
    }

    @Test(arguments: [
        ("app", JSONValue.string("com.evil.app")), ("channel", .string("beta")), ("version", .string("9.9.9")),
        ("url", .string("evil.tar.gz")), ("sha256", .string(String(repeating: "a", count: 64))), ("size", .integer(1)),
        ("minShellVersion", .string("0.0.1")), ("maxShellVersion", .string("99.0.0")),
        ("published", .string("2030-01-01T00:00:00Z")), ("expires", .string("2099-01-01T00:00:00Z")),
        ("format", .string("signed-client-v2")), ("extraField", .string("added after signing")),
    ])
    func anySignedFieldTamperedAfterSigningIsRejected(field: String, value: JSONValue) async throws {
        let f = try await installedFixture()
        var m = try f.publish("1.1.0", makeCurrent: false)
        m[field] = value
        try f.releases.writeManifest(m)
        try await expectRejected(f, "signature")
    }

    @Test func wrongAppIsRejected() async throws {
        let f = try await installedFixture()
        try f.publish("1.1.0") { $0["app"] = .string("com.other.app") }
        try await expectRejected(f, "release 1.1.0 is for app com.other.app, this device runs com.example.notes")
    }

    @Test func wrongChannelIsRejected() async throws {
        let f = try await installedFixture()
        try f.publish("1.1.0") { $0["channel"] = .string("beta") }
        try await expectRejected(f, "release 1.1.0 is on channel beta, this device follows stable")
    }

    @Test func olderValidlySignedReleaseIsARollbackAttempt() async throws {
        let f = try DeviceFixture()
        try f.publish("1.0.0")
        try f.publish("1.1.0")
        _ = try await f.updater().install()
        let old = try f.releases.publish("0.9.0", archive: ReleaseFolder.tarGz(of: ReleaseFolder.makeClient(at: f.tmp("old"), version: "0.9.0")))
        try f.releases.writeManifest(old)
        try await expectRejected(f, "release 0.9.0 is below 1.1.0, the highest version already accepted (rollback refused)")
    }

    @Test func sha256MismatchIsRejectedAndTheDownloadRemoved() async throws {
        let f = try await installedFixture()
        try f.publish("1.1.0") { $0["sha256"] = .string(String(repeating: "0", count: 64)) }
        try await expectRejected(f, "expected 0000000000000000")
    }

    @Test func bodyLongerThanTheSignedSizeIsStopped() async throws {
        let f = try await installedFixture()
        try f.publish("1.1.0")
        f.faults.add(.appendBytes(Data(repeating: 0x41, count: 100_000)), path: "/stable/v1.1.0.tar.gz")
        try await expectRejected(f, "bytes")
    }

    @Test func malformedJSONIsRejected() async throws {
        let f = try await installedFixture()
        try f.releases.writeManifestBytes(Data(#"{"format": "signed-client-v1", "app": "com.example.notes",,}"#.utf8))
        try await expectRejected(f, "manifest")
    }

    @Test func duplicateKeysAreRejected() async throws {
        let f = try await installedFixture()
        let m = try f.publish("1.1.0", makeCurrent: false)
        var text = String(decoding: JSONPrettyPrinter.render(.object(m)), as: UTF8.self)
        text = text.replacingOccurrences(of: "{\n", with: "{\n  \"version\": \"9.9.9\",\n", options: [], range: text.range(of: "{\n"))
        try f.releases.writeManifestBytes(Data(text.utf8))
        try await expectRejected(f, "duplicate")
    }

    @Test func manifestOver64KiBIsRejected() async throws {
        let f = try await installedFixture()
        try f.publish("1.1.0") { $0["padding"] = .string(String(repeating: "x", count: 70_000)) }
        try await expectRejected(f, "65536")
    }

    @Test func nonSemVerVersionIsRejected() async throws {
        let f = try await installedFixture()
        try f.publish("1.1.0") { $0["version"] = .string("v1.1") }
        try await expectRejected(f, "version")
    }

    @Test func httpArchiveURLToANonLoopbackHostIsRefused() async throws {
        let f = try await installedFixture()
        try f.publish("1.1.0") { $0["url"] = .string("http://example.com/v1.1.0.tar.gz") }
        try await expectRejected(f, "uses http: to a non-loopback host")
    }
}
