import ClientFoundation
import ClientUpdater
import Foundation
import ReleaseSigning
import SignedArchive
import SignedManifest
import TestSupport
import Testing

/// A device and a release folder with a signed trust root (`root/N.json`): two offline
/// root keys and two release keys, each role with threshold 2. Root 1 is also signed by
/// the key the device was initialised with (`--trust`), which vouches for it: the device
/// moves from its keys to the root at its next check.
struct TrustRig {
    let d: DeviceFixture
    let rootKeys: [Ed25519.PrivateKey]
    let releaseKeys: [Ed25519.PrivateKey]
    static let year: TimeInterval = 365 * 86_400

    init() throws {
        d = try DeviceFixture()
        rootKeys = try (0..<2).map { _ in try Ed25519.PrivateKey.generate() }
        releaseKeys = try (0..<2).map { _ in try Ed25519.PrivateKey.generate() }
    }

    func draft(
        version: Int = 1, channel: String = "stable", expires: Date = Date().addingTimeInterval(year),
        rootKeys: [Ed25519.PrivateKey]? = nil, releaseKeys: [Ed25519.PrivateKey]? = nil
    ) -> RootDraft {
        var draft = RootDraft(
            app: "com.example.notes", channel: channel, expires: expires,
            rootKeys: (rootKeys ?? self.rootKeys).map(\.publicKey), rootThreshold: 2,
            releaseKeys: (releaseKeys ?? self.releaseKeys).map(\.publicKey), releaseThreshold: 2)
        draft.version = version
        return draft
    }

    /// Root 1, vouched for by the device's `--trust` key and signed by both root keys.
    @discardableResult
    func publishRoot1() throws -> Data {
        try d.releases.writeRoot(draft(), signedBy: [d.releases.key] + rootKeys)
    }

    /// Publishes `version` signed by `signers`.
    func publish(_ version: String, signedBy signers: [Ed25519.PrivateKey]) throws {
        d.releases.signers = signers
        try d.publish(version)
    }

    var keyIds: [String] { releaseKeys.map(\.publicKey.keyId) }
}

@Suite struct TrustRootDeviceTests {
    /// One stolen release key cannot ship alone once the channel has a root of threshold
    /// 2; both keys can. Nor can one key signing twice (TUF §5.3.4: counted once).
    @Test func aStolenReleaseKeyCannotShipAloneOnceTheChannelHasARoot() async throws {
        let rig = try TrustRig()
        try rig.publishRoot1()
        try rig.publish("1.0.0", signedBy: [rig.releaseKeys[0]])
        let before = try rig.d.snapshot()
        await #expect {
            try await rig.d.updater().install()
        } throws: { error in
            let e = error as? SignedManifestError
            return e?.code == .thresholdNotMet && e?.kind == .dataError
                && e?.message.hasSuffix("signed by 1 of the release keys (\(rig.keyIds[0])), 2 needed by trust root 1") == true
        }
        // The root was accepted (it verified); nothing of the release was kept.
        var after = try rig.d.snapshot()
        #expect(after.entries.keys.contains("trust/1.json"))
        after.entries = after.entries.filter { !$0.key.hasPrefix("trust") }
        #expect(after == before)

        try rig.publish("1.0.1", signedBy: [rig.releaseKeys[0], rig.releaseKeys[0]])
        await #expect {
            try await rig.d.updater().install()
        } throws: { ($0 as? SignedManifestError)?.message.contains("signed by 1 of the release keys") == true }

        try rig.publish("1.0.2", signedBy: rig.releaseKeys)
        let report = try await rig.d.updater().install()
        #expect(report.result == .installed && report.version == "1.0.2")
        #expect(try await rig.d.updater().status().trustRoot == 1)
    }

    enum Attack: String, CaseIterable, CustomTestStringConvertible {
        case rollback, skipped, onlyNewKeys, oneOldKey, notAcceptedByItsOwnKeys, anotherChannel, huge, keyListedTwice
        case anotherChannelsReleaseKeys
        var testDescription: String { rawValue }
    }

    /// TUF's attack list (specification §5.3), each refused with its own message and the
    /// device left exactly as it was: still on root 1 and release 1.0.0.
    @Test(arguments: Attack.allCases)
    func aRefusedRootOrManifestLeavesTheDeviceAsItWas(attack: Attack) async throws {
        let rig = try TrustRig()
        let root1 = try rig.publishRoot1()
        try rig.publish("1.0.0", signedBy: rig.releaseKeys)
        _ = try await rig.d.updater().install()
        let r = rig.releases
        let newRootKeys = try (0..<2).map { _ in try Ed25519.PrivateKey.generate() }
        let expected: (SignedManifestError.Code?, String)
        switch attack {
        case .rollback:
            try r.writeRootBytes(root1, as: 2)
            expected = (.untrustedRoot, "root version 1 where 2 was expected (a rollback); the device keeps root 1")
        case .skipped:
            try r.writeRoot(rig.draft(version: 3), signedBy: rig.rootKeys, as: 2)
            expected = (.untrustedRoot, "root version 3 where 2 was expected (a skipped root); the device keeps root 1")
        case .onlyNewKeys:
            try r.writeRoot(rig.draft(version: 2, rootKeys: newRootKeys), signedBy: newRootKeys)
            expected = (.untrustedRoot, "signed by 0 of root 1's root keys, 2 needed (a new root must be vouched for by the keys it replaces)")
        case .oneOldKey:
            try r.writeRoot(rig.draft(version: 2, rootKeys: newRootKeys), signedBy: [rig.rootKeys[0]] + newRootKeys)
            expected = (.untrustedRoot, "signed by 1 of root 1's root keys, 2 needed (a new root must be vouched for by the keys it replaces)")
        case .notAcceptedByItsOwnKeys:
            try r.writeRoot(rig.draft(version: 2, rootKeys: newRootKeys), signedBy: rig.rootKeys)
            expected = (.untrustedRoot, "signed by 0 of its own root keys, 2 needed")
        case .anotherChannel:
            try r.writeRoot(rig.draft(version: 2, channel: "beta"), signedBy: rig.rootKeys)
            expected = (.untrustedRoot, "root for com.example.notes beta, but this device follows com.example.notes stable")
        case .huge:
            try r.writeRootBytes(Data(repeating: 0x20, count: TrustRoot.maxBytes + 1), as: 2)
            expected = (nil, "root/2.json: body is larger than the limit of 65536 bytes")
        case .keyListedTwice:
            var text = String(decoding: try r.writeRoot(rig.draft(version: 2), signedBy: rig.rootKeys), as: UTF8.self)
            let first = rig.keyIds[0]
            text = text.replacingOccurrences(of: "\"\(rig.keyIds[1])\"\n", with: "\"\(first)\"\n")
            try r.writeRootBytes(Data(text.utf8), as: 2)
            expected = (.untrustedRoot, "role 'release' has threshold 2 with 1 distinct keys: expected 1 to 1")
        case .anotherChannelsReleaseKeys:
            let beta = try (0..<2).map { _ in try Ed25519.PrivateKey.generate() }
            try rig.publish("1.0.1", signedBy: beta)
            let ids = beta.map(\.publicKey.keyId).joined(separator: ", ")
            expected = (.untrustedKey, "signed by keys \(ids), none of which is trusted")
        }
        if attack != .anotherChannelsReleaseKeys { try rig.publish("1.0.1", signedBy: rig.releaseKeys) }
        let before = try rig.d.snapshot()
        await #expect {
            try await rig.d.updater().install()
        } throws: { error in
            let message = (error as? any ClientctlError)?.message ?? "\(error)"
            let codeMatches = expected.0.map { (error as? SignedManifestError)?.code == $0 } ?? true
            return codeMatches && message.contains(expected.1)
        }
        #expect(try rig.d.snapshot() == before)
        #expect(try await rig.d.updater().status().trustRoot == 1)
    }

    /// An expired root freezes the device (TUF §5.3.10) until the channel publishes the
    /// next root, which an expired root may still vouch for.
    @Test func anExpiredRootRefusesUpdatesUntilANewerRootIsPublished() async throws {
        let rig = try TrustRig()
        // The device's clock is injected: a loaded machine taking more than the root's
        // lifetime to install must not make the first install meet the expired root.
        let start = Date()
        try rig.d.releases.writeRoot(rig.draft(expires: start.addingTimeInterval(2)), signedBy: [rig.d.releases.key] + rig.rootKeys)
        try rig.publish("1.0.0", signedBy: rig.releaseKeys)
        _ = try await rig.d.updater(now: { start }).install()
        let later = start.addingTimeInterval(10)
        // Even a check whose manifest is unchanged (304) reports the expired root.
        await #expect {
            try await rig.d.updater(now: { later }).install()
        } throws: { ($0 as? SignedManifestError)?.code == .rootExpired }
        try rig.publish("1.0.1", signedBy: rig.releaseKeys)
        let before = try rig.d.snapshot()
        await #expect {
            try await rig.d.updater(now: { later }).install()
        } throws: { error in
            let e = error as? SignedManifestError
            return e?.code == .rootExpired && e?.message.contains("trust root 1 expired at") == true
                && e?.message.hasSuffix("no update is accepted until a newer root is published") == true
        }
        #expect(try rig.d.snapshot() == before)
        try rig.d.releases.writeRoot(rig.draft(version: 2), signedBy: rig.rootKeys)
        let report = try await rig.d.updater(now: { later }).install()
        #expect(report.version == "1.0.1")
        #expect(try await rig.d.updater().status().trustRoot == 2)
    }

    /// Rotation after a compromised release key: root 2 drops it and names a new one,
    /// signed by root 1's root keys and its own. The device follows; the stolen key plus
    /// the remaining one no longer meet the threshold, the new pair does.
    @Test func aRotatedRootDropsACompromisedReleaseKey() async throws {
        let rig = try TrustRig()
        try rig.publishRoot1()
        try rig.publish("1.0.0", signedBy: rig.releaseKeys)
        _ = try await rig.d.updater().install()
        let replacement = try Ed25519.PrivateKey.generate()
        let survivors = [rig.releaseKeys[1], replacement]
        try rig.d.releases.writeRoot(rig.draft(version: 2, releaseKeys: survivors), signedBy: rig.rootKeys)
        try rig.publish("1.1.0", signedBy: rig.releaseKeys)
        await #expect {
            try await rig.d.updater().install()
        } throws: { ($0 as? SignedManifestError)?.message.hasSuffix("2 needed by trust root 2") == true }
        try rig.publish("1.1.1", signedBy: survivors)
        #expect(try await rig.d.updater().install().version == "1.1.1")
        // 1.0.0, signed by the compromised key when it was trusted, stays installed.
        #expect(try await rig.d.updater().status().installed.map(\.version) == ["1.0.0", "1.1.1"])
    }

    /// A long chain is walked at most ``RootChain/maxSteps`` roots per check (an endless
    /// chain cannot hold a device), and the next check that reads a new manifest goes on.
    @Test func aLongChainIsWalkedABoundedNumberOfRootsPerCheck() async throws {
        let rig = try TrustRig()
        let key = try Ed25519.PrivateKey.generate()
        for n in 1...40 {
            var draft = rig.draft(version: n, rootKeys: [key])
            try draft.setThreshold(1, for: .root)
            try rig.d.releases.writeRoot(draft, signedBy: n == 1 ? [rig.d.releases.key, key] : [key])
        }
        try rig.publish("1.0.0", signedBy: rig.releaseKeys)
        _ = try await rig.d.updater().install()
        #expect(try await rig.d.updater().status().trustRoot == RootChain.maxSteps)
        // An unchanged manifest (304) decides nothing and walks nothing ...
        _ = try await rig.d.updater().install()
        #expect(try await rig.d.updater().status().trustRoot == RootChain.maxSteps)
        // ... a new one is read only after the walk went on to the newest root.
        try rig.publish("1.0.1", signedBy: rig.releaseKeys)
        #expect(try await rig.d.updater().install().version == "1.0.1")
        #expect(try await rig.d.updater().status().trustRoot == 40)
    }

    /// `init --trust-root` pins a root: it must be the channel's and signed by a
    /// threshold of its own root keys.
    @Test func initPinsASignedRootAndRefusesOthers() async throws {
        let rig = try TrustRig()
        let dir = rig.d.tmp("pin")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let good = dir + "/good.json"
        let unsigned = dir + "/unsigned.json"
        try rig.d.releases.writeRoot(rig.draft(), signedBy: rig.rootKeys)
        try FileManager.default.copyItem(atPath: rig.d.releases.channelDirectory + "/root/1.json", toPath: good)
        try rig.d.releases.writeRoot(rig.draft(), signedBy: [rig.rootKeys[0]])
        try FileManager.default.copyItem(atPath: rig.d.releases.channelDirectory + "/root/1.json", toPath: unsigned)
        let url = rig.d.server.url("/stable/manifest.json").absoluteString
        func initRoot(_ name: String, _ root: String) async throws -> Subprocess.Result {
            try await ClientctlBinary.run([
                "init", "--root", rig.d.tmp(name), "--app", "com.example.notes", "--channel", "stable", "--manifest-url", url,
                "--trust-root", root, "--shell-version", "1.0.0",
            ])
        }
        let refused = try await initRoot("device-unsigned", unsigned)
        #expect(refused.status == 65)
        #expect(refused.errorOutput.contains("\(unsigned): signed by 1 of its own root keys, 2 needed"))
        #expect(!FileManager.default.fileExists(atPath: rig.d.tmp("device-unsigned") + "/config.json"))
        let pinned = try await initRoot("device-pinned", good)
        #expect(pinned.status == 0, "\(pinned.errorOutput)")
        #expect(FileManager.default.fileExists(atPath: rig.d.tmp("device-pinned") + "/trust/1.json"))
        let status = try await ClientctlBinary.run(["status", "--root", rig.d.tmp("device-pinned")])
        #expect(status.output.contains("trust root:      root/1.json"))
    }
}

extension TrustRig {
    var releases: ReleaseFolder { d.releases }
}
