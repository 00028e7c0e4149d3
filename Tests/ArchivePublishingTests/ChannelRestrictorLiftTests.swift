import ClientFoundation
import Foundation
import ReleaseSigning
import SignedManifest
import StrictJSON
import TestSupport
import Testing

@testable import ArchivePublishing

/// `ChannelRestrictor.lift`: the halt goes by the rollout key alone, every other limit
/// stays; nothing else held back removes the file (or, for a pushed store, leaves one that
/// holds nothing the manifest does not); what is not halted, another release, a changed
/// file or a key that is not a rollout key changes nothing.
@Suite struct ChannelRestrictorLiftTests {
    struct Rig {
        let tmp: TemporaryDirectory
        let releases: ReleaseFolder
        let rollout: Ed25519.PrivateKey
        var file: String { releases.channelDirectory + "/restriction.json" }
        let now = Date(timeIntervalSince1970: floor(Date().timeIntervalSince1970))

        init(rolloutPercent: Int? = nil) throws {
            tmp = try TemporaryDirectory("lift")
            let key = try ReleaseFolder.testKey()
            releases = try ReleaseFolder(path: tmp("releases"), key: key)
            rollout = try Ed25519.PrivateKey.generate()
            let root = RootDraft(
                app: "com.example.notes", channel: "stable", expires: Date().addingTimeInterval(86_400 * 30), rootKeys: [key.publicKey],
                rootThreshold: 1, releaseKeys: [key.publicKey], releaseThreshold: 1, rolloutKeys: [rollout.publicKey])
            try releases.writeRoot(root, signedBy: [key])
            let client = try ReleaseFolder.makeClient(at: tmp("src"), version: "1.1.0")
            try releases.publish("1.1.0", archive: try ReleaseFolder.tarGz(of: client)) { object in
                if let rolloutPercent { object["rollout"] = .integer(Int64(rolloutPercent)) }
            }
        }

        @discardableResult
        func restrict(_ request: RestrictionRequest) async throws -> Restriction {
            try await ChannelRestrictor.restrict(request, releases: releases.path, channel: "stable", signers: [rollout], now: now)
        }

        func lift(keepFile: Bool = false, release: Version? = nil, basis: RestrictionBasis? = nil, signers: [Ed25519.PrivateKey]? = nil)
            async throws -> (lifted: Restriction, outcome: LiftOutcome)
        {
            try await ChannelRestrictor.lift(
                releases: releases.path, channel: "stable", signers: signers ?? [rollout], release: release, basis: basis, keepFile: keepFile,
                now: now.addingTimeInterval(1))
        }

        func onDisk() throws -> Restriction? {
            guard let data = FileManager.default.contents(atPath: file) else { return nil }
            return try Restriction.parse(data, source: file)
        }
    }

    @Test func aPauseAloneGoesWithItsFile() async throws {
        let rig = try Rig()
        try await rig.restrict(RestrictionRequest(pause: true))
        let (lifted, outcome) = try await rig.lift()
        #expect(lifted.paused && outcome == .removed)
        #expect(!FileManager.default.fileExists(atPath: rig.file))
    }

    @Test func everyOtherLimitStaysSignedByTheRolloutKey() async throws {
        let rig = try Rig()
        let v = try #require(Version("1.1.0"))
        let halted = try await rig.restrict(RestrictionRequest(pause: true, percent: 20, revoke: [v]))
        let (_, outcome) = try await rig.lift()
        guard case .replaced(let kept) = outcome else {
            Issue.record("expected a replacement, got \(outcome)")
            return
        }
        #expect(!kept.paused && kept.percent == 20 && kept.revoked == [v] && kept.expires == halted.expires)
        #expect(kept.signatures.map(\.keyId) == [rig.rollout.publicKey.keyId])
        #expect(try rig.onDisk() == kept)
    }

    @Test func aPushedStoreKeepsAFileThatHoldsNothingMore() async throws {
        let rig = try Rig(rolloutPercent: 40)
        try await rig.restrict(RestrictionRequest(pause: true))
        let (_, outcome) = try await rig.lift(keepFile: true)
        guard case .neutral(let kept) = outcome else {
            Issue.record("expected a neutral restriction, got \(outcome)")
            return
        }
        // The cap is the manifest's own highest percent: it holds nothing back.
        #expect(!kept.paused && kept.percent == 40 && kept.revoked.isEmpty && kept.target == nil)
        #expect(try rig.onDisk() == kept)
    }

    @Test func whatIsNotHaltedOrChangedOrByAStrangerIsLeftAsItWas() async throws {
        let rig = try Rig()
        await #expect(throws: ArchivePublishingError.self) { try await rig.lift() }
        try await rig.restrict(RestrictionRequest(percent: 10))
        let capOnly = try TreeSnapshot(rig.releases.path)
        do {
            _ = try await rig.lift()
            Issue.record("a cap without a pause was lifted")
        } catch let error as ArchivePublishingError {
            #expect(error.code == .invalidArgument && error.message.contains("is not halted"), "\(error.message)")
        }
        try await rig.restrict(RestrictionRequest(pause: true, percent: 10))
        let before = try TreeSnapshot(rig.releases.path)
        #expect(before != capOnly)
        for (what, attempt) in [
            ("another release", { try await rig.lift(release: Version("1.0.0")) }),
            ("a changed file", { try await rig.lift(basis: RestrictionBasis.none) }),
            ("a stranger's key", { try await rig.lift(signers: [try Ed25519.PrivateKey.generate()]) }),
            ("the release key", { try await rig.lift(signers: [try ReleaseFolder.testKey()]) }),
        ] as [(String, () async throws -> (lifted: Restriction, outcome: LiftOutcome))] {
            do {
                _ = try await attempt()
                Issue.record("\(what): lifted")
            } catch let error as ArchivePublishingError {
                #expect([.contended, .untrustedKey].contains(error.code), "\(what): \(error.message)")
            }
            #expect(try TreeSnapshot(rig.releases.path) == before, "\(what)")
        }
    }
}
