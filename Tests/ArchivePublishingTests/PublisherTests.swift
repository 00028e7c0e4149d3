import ArchivePublishing
import ClientFoundation
import ClientUpdater
import DeltaPatch
import Foundation
import SafeArchive
import SignedManifest
import StrictJSON
import TestSupport
import Testing

@Suite struct PublisherTests {
    let key: Ed25519.PrivateKey
    let dir: TemporaryDirectory
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    init() throws {
        key = try Ed25519.PrivateKey.generate()
        dir = try TemporaryDirectory("publish")
        try FileManager.default.copyItem(atPath: TestPaths.sampleClient, toPath: dir("src"))
    }

    func request(
        _ version: String, source: String? = nil, out: String? = nil, format: ArchiveFormat = .tarGzip,
        now: Date? = nil
    ) -> PublishRequest {
        PublishRequest(
            source: source ?? dir("src"), app: "com.example.notes", channel: "stable",
            version: Version(version) ?? Version(0, 0, 0), minShellVersion: Version(1, 0, 0),
            outputDirectory: out ?? dir("rel"), format: format, now: now ?? self.now)
    }

    func publishError(_ r: PublishRequest) async -> ArchivePublishingError? {
        await #expect(throws: ArchivePublishingError.self) { try await Publisher.publish(r, key: key) }
    }

    /// A source folder refused by SafeArchive's rules: `.sourceRejected`, exit status 65.
    func sourceRefusal(_ r: PublishRequest, sourceLocation: SourceLocation = #_sourceLocation) async -> SafeArchiveError? {
        let error = await #expect(throws: SafeArchiveError.self, sourceLocation: sourceLocation) { try await Publisher.publish(r, key: key) }
        #expect(error?.code == .sourceRejected, sourceLocation: sourceLocation)
        #expect(error?.kind.exitStatus == 65, sourceLocation: sourceLocation)
        return error
    }

    @Test func writesTheReleaseFolderNewestFirst() async throws {
        let first = try await Publisher.publish(request("1.0.0"), key: key)
        #expect(!first.unchanged)
        let second = try await Publisher.publish(request("1.1.0", now: now.addingTimeInterval(60)), key: key)
        #expect(second.archivePath == dir("rel/stable/v1.1.0.tar.gz"))
        let verifier = ManifestVerifier(trustedKeys: [key.publicKey])
        let manifest = try verifier.verify(bytes: try Data(contentsOf: URL(fileURLWithPath: dir("rel/stable/manifest.json")))).get()
        #expect(manifest.version == Version(1, 1, 0))
        #expect(manifest.url == "v1.1.0.tar.gz")
        #expect(try ArchiveCheck.check(fileAt: second.archivePath, size: manifest.size, sha256: manifest.sha256) == .matches)
        let index = try ReleaseIndex.parse(try Data(contentsOf: URL(fileURLWithPath: dir("rel/stable/index.json"))))
        #expect(index.app == "com.example.notes" && index.channel == "stable")
        #expect(index.validReleases(with: verifier).map(\.version.description) == ["1.1.0", "1.0.0"])
        #expect(index.releases.map { $0["version"]?.stringValue } == ["1.1.0", "1.0.0"])
        let files = try FileManager.default.contentsOfDirectory(atPath: dir("rel/stable")).sorted()
        #expect(files == ["files", "index.json", "manifest.json", "objects", "patches", "v1.0.0.tar.gz", "v1.1.0.tar.gz"])
    }

    /// Delta patches: one per older release up to K, newest base first, reproducible (the
    /// same releases in another folder give the same patch bytes), each turning the
    /// base's tree tar into the new one; K = 0 writes none and no `delta` field.
    @Test func patchesGoFromTheNewestKOlderReleasesAndAreReproducible() async throws {
        func publishFour(into out: String, bases: Int) async throws -> Manifest {
            var last: Manifest?
            for (k, version) in ["1.0.0", "1.1.0", "1.2.0", "1.3.0"].enumerated() {
                let src = dir("src-\(version)")
                if !FileManager.default.fileExists(atPath: src) {
                    try FileManager.default.copyItem(atPath: dir("src"), toPath: src)
                    try Data("release \(k)\n".utf8).write(to: URL(fileURLWithPath: src + "/app.js"))
                }
                var r = request(version, source: src, out: out, now: now.addingTimeInterval(Double(k) * 60))
                r.deltaBases = bases
                last = try await Publisher.publish(r, key: key).manifest
            }
            return try #require(last)
        }
        let a = try await publishFour(into: dir("a"), bases: 2)
        let delta = try #require(a.delta).get()
        #expect(delta.patches.map(\.from.description) == ["1.2.0", "1.1.0"])
        let b = try await publishFour(into: dir("b"), bases: 2)
        #expect(try #require(b.delta).get() == delta, "same releases, same tree tar and patch bytes")
        for patch in delta.patches {
            #expect(FileManager.default.contentsEqual(atPath: dir("a/stable/" + patch.url), andPath: dir("b/stable/" + patch.url)))
            #expect(try Digest.hex(.sha256, ofFileAt: dir("a/stable/" + patch.url)) == patch.sha256)
        }
        // The newest patch rebuilds 1.3.0's tree tar from 1.2.0's (both written from the sources).
        let base = try SourceTree.scan(dir("src-1.2.0"))
        try ArchiveWriter.writeTreeTar(base, to: dir("base.tar"))
        #expect(try Digest.hex(.sha256, ofFileAt: dir("base.tar")) == delta.patches[0].base)
        let result = try ZstdPatch.apply(
            patch: dir("a/stable/" + delta.patches[0].url), base: dir("base.tar"), to: dir("out.tar"), resultSize: delta.treeSize)
        #expect(result == delta.treeSHA256)

        let none = try await publishFour(into: dir("c"), bases: 0)
        #expect(none.delta == nil && !FileManager.default.fileExists(atPath: dir("c/stable/patches")))
    }

    /// Each file's content is stored once: a later release adds only its new contents, and
    /// an object already there with other bytes (a damaged store) is refused, not replaced.
    @Test func objectsAreSharedAcrossReleasesAndNeverReplaced() async throws {
        try await Publisher.publish(request("1.0.0"), key: key)
        let first = Set(try FileManager.default.contentsOfDirectory(atPath: dir("rel/stable/objects")))
        try Data("a new file\n".utf8).write(to: URL(fileURLWithPath: dir("src/new.js")))
        try await Publisher.publish(request("1.1.0"), key: key)
        let second = Set(try FileManager.default.contentsOfDirectory(atPath: dir("rel/stable/objects")))
        #expect(second.subtracting(first) == [Digest.hex(.sha256, of: Data("a new file\n".utf8))])
        let victim = try #require(first.sorted().first)
        try Data("damaged".utf8).write(to: URL(fileURLWithPath: dir("rel/stable/objects/" + victim)))
        let e = await publishError(request("1.2.0"))
        #expect(
            e?.code == .conflict && e?.message.hasPrefix(dir("rel/stable/objects/" + victim) + " exists with other bytes") == true,
            "\(String(describing: e))")
    }

    @Test func republishingIdenticalBytesIsANoOp() async throws {
        try await Publisher.publish(request("1.0.0"), key: key)
        try await Publisher.publish(request("1.1.0"), key: key)
        let before = try Data(contentsOf: URL(fileURLWithPath: dir("rel/stable/index.json")))
        let again = try await Publisher.publish(request("1.0.0", now: now.addingTimeInterval(3600)), key: key)
        #expect(again.unchanged)
        #expect(again.manifest.version == Version(1, 0, 0))
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir("rel/stable/index.json"))) == before)
    }

    @Test func anInterruptedPublishIsCompletedByPublishingAgain() async throws {
        try await Publisher.publish(request("1.0.0"), key: key)
        try await Publisher.publish(request("1.1.0"), key: key)
        // As if killed after index.json was written: manifest.json still names 1.0.0, and a
        // temporary archive is left behind.
        let index = try ReleaseIndex.parse(try Data(contentsOf: URL(fileURLWithPath: dir("rel/stable/index.json"))))
        try Data(JSONPrettyPrinter.render(.object(index.releases[1]))).write(to: URL(fileURLWithPath: dir("rel/stable/manifest.json")))
        try Data("partial".utf8).write(to: URL(fileURLWithPath: dir("rel/stable/.publish-1-2.tar.gz")))
        #expect(try await Publisher.publish(request("1.1.0"), key: key).unchanged)
        let manifest = try StrictJSON.parseObject(try Data(contentsOf: URL(fileURLWithPath: dir("rel/stable/manifest.json"))))
        #expect(manifest == index.releases[0])
        #expect(!FileManager.default.fileExists(atPath: dir("rel/stable/.publish-1-2.tar.gz")))
    }

    @Test func differentBytesForAPublishedVersionAreRefused() async throws {
        try await Publisher.publish(request("1.0.0"), key: key)
        let archive = try Data(contentsOf: URL(fileURLWithPath: dir("rel/stable/v1.0.0.tar.gz")))
        try Data("changed".utf8).write(to: URL(fileURLWithPath: dir("src/app.js")))
        let e = await publishError(request("1.0.0"))
        #expect(e?.code == .conflict)
        #expect(e?.message.contains("already published with other contents") == true)
        #expect(e?.kind == .dataError)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir("rel/stable/v1.0.0.tar.gz"))) == archive)
        // Same bytes in another format are other bytes too.
        try FileManager.default.removeItem(atPath: dir("src"))
        try FileManager.default.copyItem(atPath: TestPaths.sampleClient, toPath: dir("src"))
        #expect(await publishError(request("1.0.0", format: .zip))?.code == .conflict)
    }

    @Test func versionsNotAboveTheNewestAreRefused() async throws {
        try await Publisher.publish(request("1.1.0"), key: key)
        for v in ["1.0.9", "1.1.0-rc.1", "0.1.0"] {
            let e = await publishError(request(v))
            #expect(e?.code == .notNewer)
            #expect(e?.message == "version \(v) is not above 1.1.0, the newest release of channel stable")
        }
        #expect(!FileManager.default.fileExists(atPath: dir("rel/stable/v1.0.9.tar.gz")))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: dir("rel/stable")).sorted() == [
                "files", "index.json", "manifest.json", "objects", "v1.1.0.tar.gz",
            ])
    }

    @Test func anArchiveFileWithOtherBytesIsNeverOverwritten() async throws {
        try FileManager.default.createDirectory(atPath: dir("rel/stable"), withIntermediateDirectories: true)
        try Data("foreign".utf8).write(to: URL(fileURLWithPath: dir("rel/stable/v1.0.0.tar.gz")))
        try Data(ReleaseIndex(app: "com.example.notes", channel: "stable").jsonBytes()).write(to: URL(fileURLWithPath: dir("rel/stable/index.json")))
        #expect(await publishError(request("1.0.0"))?.message.contains("archives are never overwritten") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir("rel/stable/v1.0.0.tar.gz"))) == Data("foreign".utf8))
    }

    @Test func aReleaseFolderOfAnotherAppIsRefused() async throws {
        try await Publisher.publish(request("1.0.0"), key: key)
        var other = request("2.0.0")
        other.app = "com.example.other"
        #expect(await publishError(other)?.message.contains("is for app com.example.notes") == true)
    }

    /// The same folder published into two release folders: byte-identical archives, and
    /// manifests that differ only in `published` and `signature`.
    @Test(arguments: ArchiveFormat.allCases)
    func publishingIsReproducible(format: ArchiveFormat) async throws {
        let a = try await Publisher.publish(request("1.0.0", out: dir("relA"), format: format), key: key)
        let b = try await Publisher.publish(request("1.0.0", out: dir("relB"), format: format, now: now.addingTimeInterval(90)), key: key)
        #expect(try Data(contentsOf: URL(fileURLWithPath: a.archivePath)) == Data(contentsOf: URL(fileURLWithPath: b.archivePath)))
        let differing = Set(a.manifest.object.keys).union(b.manifest.object.keys).filter { a.manifest.object[$0] != b.manifest.object[$0] }
        #expect(differing == ["published", "signature"])
    }

    @Test func baseURLAndExpiryAreSigned() async throws {
        var r = request("1.0.0")
        r.baseURL = "https://cdn.example.com/notes/"
        r.expires = Publisher.parseExpiry("30d", now: now)
        r.maxShellVersion = Version(2, 0, 0)
        let m = try await Publisher.publish(r, key: key).manifest
        #expect(m.url == "https://cdn.example.com/notes/stable/v1.0.0.tar.gz")
        #expect(m.expires == now.addingTimeInterval(30 * 86_400))
        #expect(m.object["expires"] == .string("2027-02-14T08:00:00Z"))
        #expect(m.maxShellVersion == Version(2, 0, 0))
        #expect(Publisher.parseExpiry("2030-01-01T00:00:00Z", now: now) == RFC3339.parse("2030-01-01T00:00:00Z"))
        #expect(Publisher.parseExpiry("0d", now: now) == nil)
        #expect(Publisher.parseExpiry("tomorrow", now: now) == nil)
        var past = request("1.1.0")
        past.expires = now.addingTimeInterval(-1)
        #expect(await publishError(past)?.code == .invalidArgument)
        var badURL = request("1.1.0")
        badURL.baseURL = "cdn.example.com"
        #expect((await publishError(badURL)?.underlying as? FieldProblem)?.field == "baseURL")
        var badChannel = request("1.1.0")
        badChannel.channel = "../escape"
        #expect(await publishError(badChannel)?.message.hasPrefix("`channel` is \"../escape\"") == true)
        #expect(!FileManager.default.fileExists(atPath: dir("escape")))
    }

    // MARK: source folder refusals, each naming the path

    @Test func aFolderWithoutIndexHTMLIsRefused() async throws {
        try FileManager.default.removeItem(atPath: dir("src/index.html"))
        let e = await sourceRefusal(request("1.0.0"))
        #expect(e?.message == "\(dir("src")) has no index.html at its top level (the archive root is the web root)")
        #expect(!FileManager.default.fileExists(atPath: dir("rel/stable/v1.0.0.tar.gz")))
    }

    @Test func symlinksAreRefused() async throws {
        try FileManager.default.createSymbolicLink(atPath: dir("src/assets/link.css"), withDestinationPath: "../style.css")
        let e = await sourceRefusal(request("1.0.0"))
        #expect(e?.message == "\(dir("src/assets/link.css")): symbolic link (only regular files and folders are published)")
        try FileManager.default.removeItem(atPath: dir("src/assets/link.css"))
        try FileManager.default.createSymbolicLink(atPath: dir("src/outside"), withDestinationPath: "/etc")
        #expect(await sourceRefusal(request("1.0.0"))?.message.hasPrefix(dir("src/outside")) == true)
    }

    @Test func specialFilesAreRefused() async throws {
        #expect(mkfifo(dir("src/assets/pipe"), 0o644) == 0)
        let e = await sourceRefusal(request("1.0.0"))
        #expect(e?.message == "\(dir("src/assets/pipe")): special file (fifo): only regular files and folders are published")
    }

    /// Two names a case-insensitive file system merges: devices would refuse the archive.
    @Test func namesThatDifferOnlyInCaseAreRefused() async throws {
        try Data("a".utf8).write(to: URL(fileURLWithPath: dir("src/assets/Logo.svg")))
        try Data("b".utf8).write(to: URL(fileURLWithPath: dir("src/assets/logo.svg")))
        let message = await sourceRefusal(request("1.0.0"))?.message
        #expect(message == "\(dir("src/assets/logo.svg")): collides with \"assets/Logo.svg\" when case is ignored")
    }

    @Test func namesDevicesWouldRefuseAreRefused() async throws {
        let bad = dir("src") + "/bad\u{7}name.js"
        try Data("x".utf8).write(to: URL(fileURLWithPath: bad))
        #expect(await sourceRefusal(request("1.0.0"))?.message == "\(bad): file name contains a control character or a backslash")
        try FileManager.default.removeItem(atPath: bad)
        // A name that is not UTF-8 (Latin-1 'é').
        let raw = (Array(dir("src").utf8) + Array("/caf".utf8) + [0xE9, 0]).map { CChar(bitPattern: $0) }
        let fd = open(raw, O_CREAT | O_WRONLY, 0o644)
        #expect(fd >= 0)
        close(fd)
        #expect(await sourceRefusal(request("1.0.0"))?.message.hasSuffix("file name is not valid UTF-8") == true)
    }
}
