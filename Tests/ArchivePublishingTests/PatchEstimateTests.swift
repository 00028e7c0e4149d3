import ClientFoundation
import ClientUpdater
import DeltaPatch
import Foundation
import SignedManifest
import TestSupport
import Testing

@testable import ArchivePublishing

/// publish judges each older release from the file lists before building a patch from it
/// (docs/delta-updates.md#publishing): a base that shares too little is skipped, and the
/// cost lines say why; a base that shares most is still patched, with or without a file
/// list of its own.
@Suite struct PatchEstimateTests {
    let key: Ed25519.PrivateKey
    let dir: TemporaryDirectory

    init() throws {
        key = try Ed25519.PrivateKey.generate()
        dir = try TemporaryDirectory("patch-estimate")
    }

    /// A client of `count` files of random bytes named `prefix-<k>.js` (8 KiB each).
    func client(_ name: String, prefix: String, count: Int) throws -> String {
        let path = dir(name)
        try FileManager.default.createDirectory(atPath: path + "/assets", withIntermediateDirectories: true)
        try Data("<!doctype html><title>\(name)</title>\n".utf8).write(to: URL(fileURLWithPath: path + "/index.html"))
        for k in 0..<count {
            let bytes = (0..<8192).map { _ in UInt8.random(in: 0...255) }
            try Data(bytes).write(to: URL(fileURLWithPath: path + "/assets/\(prefix)-\(k).js"))
        }
        return path
    }

    @discardableResult
    func publish(_ version: String, _ source: String, bases: Int = 3) async throws -> PublishResult {
        var r = PublishRequest(
            source: source, app: "com.example.notes", channel: "stable", version: Version(version) ?? Version(0, 0, 0),
            minShellVersion: Version(1, 0, 0), outputDirectory: dir("rel"))
        r.deltaBases = bases
        return try await Publisher.publish(r, key: key)
    }

    @Test func aBaseSharingNothingIsSkippedAndTheCostSaysWhy() async throws {
        try await publish("1.0.0", try client("small", prefix: "old", count: 3))
        let result = try await publish("1.1.0", try client("big", prefix: "new", count: 40))
        #expect(result.deltaCosts.count == 1)
        let cost = try #require(result.deltaCosts.first)
        #expect(cost.from == Version(1, 0, 0) && cost.patchBytes == nil)
        #expect(cost.skipped == "1.0.0 holds 0.0 % of this release's bytes (under 10.0 %)", "\(cost)")
        let delta = try #require(result.manifest.delta).get()
        #expect(delta.patches.isEmpty && delta.files != nil, "no patch, but the file list is still published")
        #expect(!FileManager.default.fileExists(atPath: dir("rel/stable/patches")))
    }

    @Test func aBaseSharingMostIsPatchedWithOrWithoutItsFileList() async throws {
        let old = try client("old", prefix: "chunk", count: 30)
        let new = dir("new")
        try FileManager.default.copyItem(atPath: old, toPath: new)
        try Data("export const changed = 1;\n".utf8).write(to: URL(fileURLWithPath: new + "/assets/chunk-3.js"))
        // 1.0.0 without a delta has no file list: publish unpacks it to judge it.
        try await publish("1.0.0", old, bases: 0)
        let result = try await publish("1.1.0", new)
        let cost = try #require(result.deltaCosts.first)
        #expect(cost.skipped == nil && (cost.patchBytes ?? .max) * 10 < result.manifest.size, "\(result.deltaCosts)")
        // 1.1.0 has a file list: 1.2.0 is judged from it and patched from both releases.
        let newer = dir("newer")
        try FileManager.default.copyItem(atPath: new, toPath: newer)
        try Data("export const changed = 2;\n".utf8).write(to: URL(fileURLWithPath: newer + "/assets/chunk-4.js"))
        let again = try await publish("1.2.0", newer)
        #expect(again.deltaCosts.map(\.from) == [Version(1, 1, 0), Version(1, 0, 0)])
        #expect(again.deltaCosts.allSatisfy { $0.skipped == nil && $0.patchBytes != nil }, "\(again.deltaCosts)")
    }

    /// Bundlers rename a changed chunk (`index-B2x9Kq1z.js` → `index-C7d1Lp0e.js`): the
    /// renamed file counts as similar to the old one, so the base is not skipped.
    @Test func renamedChunksCountAsSimilar() {
        func file(_ path: String, _ sha: String, _ size: Int64) -> ReleaseFileList.File {
            ReleaseFileList.File(path: path, size: size, sha256: String(repeating: sha, count: 64))
        }
        let base = [file("index.html", "a", 100), file("assets/index-B2x9Kq1z.js", "b", 9_000)]
        let renamed = [file("index.html", "c", 100), file("assets/index-C7d1Lp0e.js", "d", 10_000)]
        #expect(PatchEstimate(new: renamed, base: base) == PatchEstimate(held: 0, similar: 9_100, total: 10_100))
        #expect(PatchEstimate(new: renamed, base: base).worthBuilding)
        let unrelated = [file("app/main.js", "e", 10_000), file("index.html", "f", 100)]
        let estimate = PatchEstimate(new: unrelated, base: [file("other.css", "g", 50_000)])
        #expect(!estimate.worthBuilding && estimate.reason == "holds 0.0 % of this release's bytes (under 10.0 %)")
        #expect(PatchEstimate.stem("static/js/main.3f2a1b.chunk.js") == "static/js/main*.js")
        #expect(PatchEstimate.stem("README") == "README")
    }
}
