import ArchivePublishing
import ClientFoundation
import ClientUpdater
import Foundation
import ReleaseSigning
import SignedManifest
import TestSupport
import Testing

/// The rules a push merges a channel by (docs/formats.md#push), one table: what the store
/// holds, what the folder offers, and the outcome.
@Suite struct ChannelMergeTests {
    let key: Ed25519.PrivateKey

    init() throws { key = try Ed25519.PrivateKey.generate() }

    func release(_ version: String, sha: String = String(repeating: "ab", count: 32), published: TimeInterval = 0, size: Int64 = 12345) throws
        -> Manifest
    {
        var draft = ManifestSamples.draft(version: version)
        draft.sha256 = sha
        draft.size = size
        draft.published = ManifestSamples.published.addingTimeInterval(published)
        draft.expires = nil
        return try draft.signed(with: key)
    }

    func side(_ releases: [Manifest], name: String, app: String = "com.example.notes") -> ChannelMerge.Side {
        guard !releases.isEmpty else { return .init(index: nil, manifest: nil, name: name) }
        var index = ReleaseIndex(app: app, channel: "stable")
        for r in releases { index.insert(r) }
        return .init(index: index, manifest: releases.max { $0.version < $1.version }?.object, name: name)
    }

    func versions(_ m: ChannelMerge) -> [String] { m.index.releases.compactMap { $0["version"]?.stringValue } }

    @Test func anEmptyStoreTakesTheFolder() throws {
        let m = try ChannelMerge.merge(remote: side([], name: "s3"), local: side([try release("1.0.0"), try release("1.1.0")], name: "rel"))
        #expect(versions(m) == ["1.1.0", "1.0.0"] && m.manifest.version == Version(1, 1, 0) && m.added.count == 2)
    }

    @Test func nothingTheStoreHoldsIsLost() throws {
        let m = try ChannelMerge.merge(
            remote: side([try release("1.0.0"), try release("1.1.0")], name: "s3"), local: side([try release("1.2.0")], name: "rel"))
        #expect(versions(m) == ["1.2.0", "1.1.0", "1.0.0"] && m.manifest.version == Version(1, 2, 0) && m.added == [Version(1, 2, 0)])
    }

    @Test func aStaleFolderChangesNothing() throws {
        let held = [try release("1.0.0"), try release("1.1.0")]
        let m = try ChannelMerge.merge(remote: side(held, name: "s3"), local: side([held[0]], name: "rel"))
        #expect(m.added.isEmpty && m.updated.isEmpty && m.manifest == held[1] && versions(m) == ["1.1.0", "1.0.0"])
        #expect(side(held, name: "s3").index == m.index, "the store's index is kept as it is")
    }

    @Test func aLaterSignedCopyOfAReleaseWins() throws {
        let old = try release("1.1.0")
        let paused = try release("1.1.0", published: 60)
        let m = try ChannelMerge.merge(remote: side([try release("1.0.0"), old], name: "s3"), local: side([paused], name: "rel"))
        #expect(m.manifest == paused && m.updated == [Version(1, 1, 0)])
        let back = try ChannelMerge.merge(remote: side([paused], name: "s3"), local: side([old], name: "rel"))
        #expect(back.manifest == paused && back.updated.isEmpty, "an older copy never replaces a newer one")
    }

    @Test func conflictsAndVersionRulesAreRefused() throws {
        let store = side([try release("1.0.0"), try release("1.2.0")], name: "s3://b/p/stable")
        #expect {
            try ChannelMerge.merge(remote: store, local: side([try release("1.0.0", sha: String(repeating: "cd", count: 32))], name: "rel"))
        } throws: {
            ($0 as? ArchivePublishingError)?.message.hasPrefix("version 1.0.0 is already in s3://b/p/stable with another sha256 (abab") == true
        }
        #expect {
            try ChannelMerge.merge(remote: store, local: side([try release("1.0.0", size: 1)], name: "rel"))
        } throws: { ($0 as? ArchivePublishingError)?.message.contains("with another size (12345 there, 1 in rel)") == true }
        #expect {
            try ChannelMerge.merge(remote: store, local: side([try release("1.1.0")], name: "rel"))
        } throws: {
            let e = $0 as? ArchivePublishingError
            return e?.code == .notNewer
                && e?.message == "version 1.1.0 is not above 1.2.0, the newest release of s3://b/p/stable; publish a higher version"
        }
        #expect {
            try ChannelMerge.merge(
                remote: side([try release("1.0.0")], name: "s3", app: "com.example.other"), local: side([try release("1.3.0")], name: "rel"))
        } throws: { ($0 as? ArchivePublishingError)?.code == .conflict }
        var broken = store
        broken.index?.releases.append(["version": .string("9.9.9")])
        #expect {
            try ChannelMerge.merge(remote: broken, local: side([try release("1.3.0")], name: "rel"))
        } throws: { ($0 as? ArchivePublishingError)?.message.hasPrefix("s3://b/p/stable/index.json releases[2] is not a valid manifest") == true }
        #expect(throws: ArchivePublishingError.self) { try ChannelMerge.merge(remote: store, local: side([], name: "rel")) }
    }
}
