import ClientFoundation
import Foundation
import ReleaseSigning
import SignedManifest
import StrictJSON
import Testing

/// The media index (`media.json`, docs/offline-media.md#mediajson): what
/// ``MediaIndex/check(_:app:channel:root:source:)`` accepts and refuses, field by field,
/// and the path rule that keeps every listed file inside its folder.
@Suite struct MediaIndexTests {
    let key: Ed25519.PrivateKey
    let root: TrustRoot
    let exported = Date(timeIntervalSince1970: 1_800_000_000)

    init() throws {
        key = try Ed25519.PrivateKey.generate()
        var draft = RootDraft(
            app: "com.example.notes", channel: "stable", expires: Date(timeIntervalSince1970: 1_900_000_000), rootKeys: [key.publicKey],
            rootThreshold: 1, releaseKeys: [key.publicKey], releaseThreshold: 1)
        try draft.sign(with: key)
        root = try draft.root()
    }

    func draft(offlineExpires: Date? = nil, files: [MediaIndex.File]? = nil) throws -> MediaIndexDraft {
        MediaIndexDraft(
            app: "com.example.notes", channel: "stable", exported: exported, offlineExpires: offlineExpires,
            releases: [MediaIndex.Release(version: try #require(Version("1.2.0")), manifestDigest: String(repeating: "a", count: 64))],
            files: files ?? [MediaIndex.File(path: "v1.2.0.tar.gz", size: 10, sha256: String(repeating: "b", count: 64))])
    }

    /// Signs `object` (its signatures replaced) with `signer` and renders it.
    func signed(_ object: JSONObject, by signer: Ed25519.PrivateKey? = nil) async throws -> [UInt8] {
        var o = object
        o.removeValue(forKey: "signatures")
        let by = signer ?? key
        let signature = try await by.sign(CanonicalJSON.serialize(o))
        o["signatures"] = .array([DocumentSignature(keyId: by.publicKey.keyId, signature: signature).jsonValue])
        return JSONPrettyPrinter.render(.object(o))
    }

    func check(_ bytes: [UInt8], app: String = "com.example.notes", channel: String = "stable") throws -> MediaIndex {
        try MediaIndex.check(bytes, app: app, channel: channel, root: root, source: "media.json")
    }

    @Test func aSignedIndexIsReadBackWithItsFilesAndReleases() async throws {
        let until = exported.addingTimeInterval(90 * 86_400)
        let index = try await draft(offlineExpires: until).sign(by: [key])
        let read = try check(index.jsonBytes())
        #expect(read == index)
        #expect(read.offlineExpires == until && read.exported == exported)
        #expect(read.file("v1.2.0.tar.gz")?.size == 10 && read.file("v1.3.0.tar.gz") == nil)
        #expect(read.releases.map(\.version.description) == ["1.2.0"])
    }

    @Test func itIsRefusedForAnotherAppOrChannelAStrangersSignatureOrOutlivingItsRoot() async throws {
        let index = try await draft().sign(by: [key])
        #expect(throws: SignedManifestError.self) { try check(index.jsonBytes(), app: "com.example.other") }
        #expect(throws: SignedManifestError.self) { try check(index.jsonBytes(), channel: "beta") }
        let stranger = try Ed25519.PrivateKey.generate()
        do {
            _ = try check(try await signed(index.object, by: stranger))
            Issue.record("a stranger's index was accepted")
        } catch let error as SignedManifestError {
            #expect(error.code == .mediaRefused && error.message.contains("signed by 0 of trust root 1's release keys"), "\(error.message)")
        }
        let late = try await draft(offlineExpires: Date(timeIntervalSince1970: 1_950_000_000)).sign(by: [key])
        do {
            _ = try check(late.jsonBytes())
            Issue.record("an index vouching past its root was accepted")
        } catch let error as SignedManifestError {
            #expect(error.message.contains("after trust root 1's expiry"), "\(error.message)")
        }
    }

    /// Each malformed field is named; a signature does not make it acceptable.
    @Test(arguments: [
        ("format", JSONValue.string("clientctl-media-v2"), "format"),
        ("exported", .string("yesterday"), "exported"),
        ("offlineExpires", .string("2020-01-01T00:00:00Z"), "is not after 'exported'"),
        ("releases", .array([]), "names 0 releases"),
        ("files", .string("all"), "must be an array"),
        ("extra", .bool(true), "is not a member of a media index"),
    ])
    func aMalformedFieldIsNamed(field: String, value: JSONValue, says: String) async throws {
        var object = try await draft().sign(by: [key]).object
        object[field] = value
        do {
            _ = try check(try await signed(object))
            Issue.record("\(field) = \(value) was accepted")
        } catch let error as SignedManifestError {
            #expect(error.code == .mediaRefused && error.message.contains(says), "\(error.message)")
        }
    }

    @Test func pathsStayInsideTheirFolder() async throws {
        for bad in ["../x", "a/../b", ".hidden", "a//b", "/etc/passwd", "a b", "a\\b", "", String(repeating: "a/", count: 8) + "a"] {
            #expect(MediaIndex.pathProblem(bad) != nil, "\(bad)")
        }
        for good in ["v1.2.0+build.7.tar.gz", "root/2.json", "patches/\(String(repeating: "c", count: 64)).zst", "cohorts/pilot/x.txt"] {
            #expect(MediaIndex.pathProblem(good) == nil, "\(good)")
        }
        let twice = MediaIndex.File(path: "v1.2.0.tar.gz", size: 1, sha256: String(repeating: "b", count: 64))
        await #expect(throws: SignedManifestError.self) { try await draft(files: [twice, twice]).sign(by: [key]) }
    }
}
