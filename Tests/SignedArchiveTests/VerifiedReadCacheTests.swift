import ClientFoundation
import ClientUpdater
import Foundation
import ReleaseSigning
import SignedArchive
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// The installed versions and the trust root a device reads at every status read, check
/// and served request: parsed and verified once per distinct bytes and keys
/// (``VerifiedReads``), and never a weaker answer than reading them afresh.
@Suite struct VerifiedReadCacheTests {
    /// A device root on disk with its own cache, trusting `trusted` (`init --trust`).
    struct Device {
        let tmp: TemporaryDirectory
        let layout: RootLayout
        let reads: VerifiedReads
        let trust: TrustStore
        let store: ArchiveStore

        init(trusting trusted: [Ed25519.PublicKey], pinned: Bool = false, reads: VerifiedReads = VerifiedReads()) throws {
            tmp = try TemporaryDirectory("verified-reads")
            layout = RootLayout(root: tmp("device"))
            try AtomicFile.makeDirectory(layout.root)
            try AtomicFile.makeDirectory(layout.clients)
            self.reads = reads
            let settings = ArchiveSettings(
                channel: "stable", manifestURL: "http://127.0.0.1:9/stable/manifest.json", trustedKeys: trusted.map(\.pemRepresentation),
                pinnedRoot: pinned ? true : nil)
            trust = TrustStore(layout: layout, settings: settings, app: "com.example.notes", reads: reads)
            store = ArchiveStore(layout: layout, trust: trust)
        }

        /// `clients/v<version>/` with its sidecar, the manifest signed by `key`; returns the sidecar's bytes.
        @discardableResult
        func install(_ version: String, signedWith key: Ed25519.PrivateKey) throws -> [UInt8] {
            let bytes = try ManifestSamples.draft(version: version).signed(with: key).jsonBytes()
            let v = try #require(Version(version))
            try AtomicFile.makeDirectory(layout.clientDirectory(v))
            try write(bytes, to: layout.clientSidecar(v))
            return bytes
        }

        func sidecar(_ version: String) throws -> String { layout.clientSidecar(try #require(Version(version))) }

        func installed() throws -> [String] { try store.installedVersions().map(\.id).sorted() }

        /// Stores `root` as `trust/<N>.json`, as a device that accepted it does.
        func store(_ root: TrustRoot) throws { try trust.save(root) }
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// The file's JSON object with `edit` applied, written back (its signatures kept).
    static func tamper(_ path: String, _ edit: (inout JSONObject) -> Void) throws {
        var object = try StrictJSON.parseObject(Array(try Data(contentsOf: URL(fileURLWithPath: path))), source: path)
        edit(&object)
        try write(JSONPrettyPrinter.render(.object(object)), to: path)
    }

    static let farFuture = Date().addingTimeInterval(365 * 86_400)

    /// Root 1: `rootKeys` (threshold all of them) sign roots, `releaseKeys` sign manifests.
    static func rootOne(rootKeys: [Ed25519.PrivateKey], releaseKeys: [Ed25519.PublicKey]) throws -> TrustRoot {
        var draft = RootDraft(
            app: "com.example.notes", channel: "stable", expires: farFuture, rootKeys: rootKeys.map(\.publicKey), rootThreshold: rootKeys.count,
            releaseKeys: releaseKeys, releaseThreshold: 1)
        for key in rootKeys { try draft.sign(with: key) }
        return try draft.root()
    }

    // MARK: (1) unchanged bytes

    @Test func unchangedSidecarsGiveTheSameAnswerFromTheCache() throws {
        let key = try ReleaseFolder.testKey()
        let device = try Device(trusting: [key.publicKey])
        try device.install("1.0.0", signedWith: key)
        try device.install("1.1.0", signedWith: key)
        let first = try device.store.installedVersions()
        #expect(first.map(\.id).sorted() == ["1.0.0", "1.1.0"])
        #expect(device.reads.sidecars.statistics == .init(hits: 0, misses: 2))

        let second = try device.store.installedVersions()
        #expect(second == first)
        #expect(device.reads.sidecars.statistics == .init(hits: 2, misses: 2), "the second read verified nothing again")
        let manifest = try #require(device.store.verifiedSidecar(Version(1, 1, 0)))
        #expect(manifest.version == Version(1, 1, 0))
        #expect(manifest.minShellVersion == Version(1, 0, 0))
        #expect(device.reads.sidecars.statistics == .init(hits: 3, misses: 2))
    }

    // MARK: (2) bytes that change on disk

    @Test(arguments: ["a field changed, the signature kept", "re-signed by an untrusted key"])
    func aSidecarTamperedAfterACachedReadIsRefusedAtEveryRead(how: String) throws {
        let key = try ReleaseFolder.testKey()
        let device = try Device(trusting: [key.publicKey])
        let genuine = try device.install("1.0.0", signedWith: key)
        try device.install("1.1.0", signedWith: key)
        #expect(try device.installed() == ["1.0.0", "1.1.0"])

        if how.hasPrefix("a field") {
            try Self.tamper(try device.sidecar("1.0.0")) { $0["maxShellVersion"] = .string("9.0.0") }
        } else {
            try device.install("1.0.0", signedWith: try Ed25519.PrivateKey.generate())
        }
        for read in 1...3 {
            #expect(try device.installed() == ["1.1.0"], "read \(read) after the tampering")
            #expect(device.store.verifiedSidecar(Version(1, 0, 0)) == nil)
        }
        #expect(device.reads.sidecars.count == 2, "a refused sidecar is never stored")

        // The genuine bytes back: the version is back, from what was verified before.
        try Self.write(genuine, to: try device.sidecar("1.0.0"))
        let hits = device.reads.sidecars.statistics.hits
        #expect(try device.installed() == ["1.0.0", "1.1.0"])
        #expect(device.reads.sidecars.statistics.hits == hits + 2)
    }

    @Test func aSidecarOfAnotherVersionIsRefusedThoughItsBytesVerified() throws {
        let key = try ReleaseFolder.testKey()
        let device = try Device(trusting: [key.publicKey])
        let bytes = try device.install("1.0.0", signedWith: key)
        #expect(try device.installed() == ["1.0.0"])
        // The same verified bytes under another version's name: a hit, and still refused.
        try AtomicFile.makeDirectory(device.layout.clientDirectory(Version(2, 0, 0)))
        try Self.write(bytes, to: try device.sidecar("2.0.0"))
        #expect(try device.installed() == ["1.0.0"])
        #expect(device.store.verifiedSidecar(Version(2, 0, 0)) == nil)
    }

    @Test func aTrustRootTamperedAfterACachedReadIsNoLongerTrusted() throws {
        let rootKey = try Ed25519.PrivateKey.generate()
        let releaseKey = try Ed25519.PrivateKey.generate()
        let device = try Device(trusting: [], pinned: true)
        try device.store(try Self.rootOne(rootKeys: [rootKey], releaseKeys: [releaseKey.publicKey]))
        try device.install("1.0.0", signedWith: releaseKey)
        #expect(try device.trust.current().version == 1)
        #expect(try device.installed() == ["1.0.0"])
        #expect(device.reads.roots.count == 1)

        // Another release key slipped into root 1 on disk: its signatures no longer cover it.
        let intruder = try Ed25519.PrivateKey.generate()
        try Self.tamper(device.layout.trustRoot(1)) { o in
            guard case .object(var keys)? = o["keys"], case .object(var roles)? = o["roles"] else { return }
            keys[intruder.publicKey.keyId] = .string(intruder.publicKey.pemRepresentation)
            roles["release"] = RoleKeys(keyIds: [intruder.publicKey.keyId], threshold: 1).jsonValue
            o["keys"] = .object(keys)
            o["roles"] = .object(roles)
        }
        try device.install("1.1.0", signedWith: intruder)
        for _ in 1...2 {
            let error = #expect(throws: SignedArchiveError.self) { try device.trust.current() }
            #expect(error?.code == .configInvalid)
            #expect(device.trust.storedRoots().isEmpty)
            #expect(try device.installed().isEmpty, "no root, so no release key: nothing verifies")
        }
        #expect(device.reads.roots.count == 1, "the tampered root is never stored")
    }

    // MARK: (3) rotation

    @Test func aNewRootIsSeenAtOnceAndItsReleaseKeyCounts() throws {
        let rootKey = try Ed25519.PrivateKey.generate()
        let oldRelease = try Ed25519.PrivateKey.generate()
        let newRelease = try Ed25519.PrivateKey.generate()
        let device = try Device(trusting: [], pinned: true)
        let one = try Self.rootOne(rootKeys: [rootKey], releaseKeys: [oldRelease.publicKey])
        try device.store(one)
        try device.install("1.0.0", signedWith: oldRelease)
        try device.install("2.0.0", signedWith: newRelease)
        #expect(try device.trust.current().version == 1)
        #expect(try device.installed() == ["1.0.0"])
        #expect(try device.installed() == ["1.0.0"], "refused again when read from the cache's side")

        var draft = RootDraft.successor(of: one, expires: Self.farFuture)
        draft.addKey(newRelease.publicKey, to: .release)
        try draft.sign(with: rootKey)
        try device.store(try draft.root())
        let current = try device.trust.current()
        #expect(current.version == 2)
        #expect(current.release.keyIds.contains(newRelease.publicKey.keyId))
        #expect(try device.installed() == ["1.0.0", "2.0.0"], "the new release key verifies at the next read")
    }

    @Test func aRootReplacedOnDiskByAnotherValidRootIsReadAgain() throws {
        let rootKey = try Ed25519.PrivateKey.generate()
        let first = try Ed25519.PrivateKey.generate()
        let second = try Ed25519.PrivateKey.generate()
        let device = try Device(trusting: [], pinned: true)
        try device.store(try Self.rootOne(rootKeys: [rootKey], releaseKeys: [first.publicKey]))
        #expect(try device.trust.current().release.keyIds == [first.publicKey.keyId])
        // Another root 1, as validly signed: different bytes, so parsed and checked afresh.
        try device.store(try Self.rootOne(rootKeys: [rootKey], releaseKeys: [second.publicKey]))
        #expect(try device.trust.current().release.keyIds == [second.publicKey.keyId])
        #expect(device.reads.roots.count == 2)
    }

    // MARK: (4) bounds

    @Test func theCachesHoldNoMoreThanTheirBoundAndStillAnswerRight() throws {
        let key = try ReleaseFolder.testKey()
        let device = try Device(trusting: [key.publicKey], reads: VerifiedReads(rootCapacity: 1, sidecarCapacity: 3))
        let versions = (0..<8).map { "1.\($0).0" }
        for version in versions { try device.install(version, signedWith: key) }
        for _ in 1...3 {
            #expect(try device.installed() == versions)
            #expect(device.reads.sidecars.count == 3)
        }
        #expect(device.reads.sidecars.capacity == 3)
        #expect(VerifiedReads.shared.sidecars.capacity == VerifiedReads.sidecarCapacity)
        #expect(VerifiedReads.shared.roots.capacity == VerifiedReads.rootCapacity)
        #expect(VerifiedReads.shared.sidecars.count <= VerifiedReads.sidecarCapacity)
    }

    @Test func theLeastRecentlyUsedEntryGoesFirst() {
        let cache = BoundedCache<Int, String>(capacity: 3)
        for n in 1...3 { cache.insert("\(n)", for: n) }
        #expect(cache.value(for: 1) == "1")  // 1 is now the most recently used
        cache.insert("4", for: 4)  // drops 2, the least recently used
        #expect(cache.count == 3)
        #expect(cache.contains(1) && !cache.contains(2) && cache.contains(3) && cache.contains(4))
        cache.insert("four", for: 4)  // replacing an entry drops nothing
        #expect(cache.count == 3)
        #expect(cache.value(for: 4) == "four")
        for n in 5...100 { cache.insert("\(n)", for: n) }
        #expect(cache.count == 3)
        #expect(cache.value(for: 100) == "100")
        #expect(cache.value(for: 1) == nil)
        #expect(cache.value(for: 7, orMake: { nil }) == nil)
        #expect(!cache.contains(7), "nothing is stored for a failure")
    }

    // MARK: keys parsed from PEM

    @Test func aPEMKeyReadAgainIsTheSameKeyAndBadTextIsRefusedEveryTime() throws {
        let key = try Ed25519.PrivateKey.generate()
        let pem = key.publicKey.pemRepresentation
        // The cache is the process's (other tests fill it too): what it holds is not asserted,
        // only that its answers are those of parsing.
        let first = try Ed25519.PublicKey(pem: pem)
        let again = try Ed25519.PublicKey(pem: pem)
        #expect(again == first && again.keyId == first.keyId && again.derRepresentation == first.derRepresentation)
        let message = Array("status".utf8)
        let signature = try key.signature(for: message)
        #expect(again.isValidSignature(signature, for: message))
        #expect(!again.isValidSignature(signature, for: Array("statuS".utf8)))

        // One base64 character of the key changed: other bytes, so another key, parsed afresh.
        var changed = Array(pem.utf8)
        let at = try #require(changed.firstIndex(of: UInt8(ascii: "\n"))) + 40
        changed[at] = changed[at] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let other = try? Ed25519.PublicKey(pem: String(decoding: changed, as: UTF8.self))
        #expect(other != first)
        #expect(other?.isValidSignature(signature, for: message) != true)

        // Four characters of the key dropped: not a key, refused at every read, never stored.
        var broken = Array(pem.utf8)
        broken.removeSubrange(at..<(at + 4))
        let text = String(decoding: broken, as: UTF8.self)
        for _ in 1...2 {
            let error = #expect(throws: SignedManifestError.self) { try Ed25519.PublicKey(pem: text, source: "trusted key #1") }
            #expect(error?.message.contains("trusted key #1 is not a PEM public key") == true)
            #expect(!Ed25519.parsedPEMs.contains(broken))
        }
        #expect(Ed25519.parsedPEMs.count <= Ed25519.parsedPEMs.capacity)
    }

    @Test func oneKeyVerifiesFromManyTasksAtOnce() async throws {
        let key = try Ed25519.PrivateKey.generate()
        let shared = try Ed25519.PublicKey(pem: key.publicKey.pemRepresentation)
        let message = Array("one key, many readers".utf8)
        let signature = try key.signature(for: message)
        let results = await withTaskGroup(of: (Bool, Bool).self) { group in
            for _ in 0..<64 {
                group.addTask {
                    (shared.isValidSignature(signature, for: message), shared.isValidSignature(signature, for: message + [0]))
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 64)
        #expect(results.allSatisfy { $0 == (true, false) })
    }
}
