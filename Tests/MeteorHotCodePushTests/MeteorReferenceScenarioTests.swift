import ClientFoundation
import ClientUpdater
import Foundation
import MeteorHotCodePush
import TestSupport
import Testing

/// Scenarios 27–68 of docs/meteor.md#the-reference-test-suite (the original plugin's tests.js), on every
/// ``ScenarioSource``: apps generated in the current Meteor shape (salted hashes from
/// tools/isobuild/bundler.js `File#hash()`, `/__cordova` URLs, ETags from
/// packages/webapp/webapp_server.js, `autoupdate.versions` from
/// packages/autoupdate/autoupdate_server.js) and in the legacy shape (content SHA-1, no
/// ETags), so a fresh clone runs the whole suite; plus the plugin's own fixtures under
/// `Scripts/meteor-reference-replay <path>` (`CLIENTCTL_METEOR_REFERENCE`).
@Suite struct MeteorReferenceScenarioTests {
    // 27–30: bundled → version2
    @Test(arguments: [1, 3], ScenarioSource.available)
    func updateFromBundledToVersion2(keep: Int, source: ScenarioSource) async throws {
        let run = try source.make()
        let h = run.harness
        let outcome = try await h.check(serving: "version2")
        guard case .installed(let v) = outcome else {
            Issue.record("expected installed, got \(outcome)")
            return
        }
        #expect(v.id == "version2" && !v.isEmbedded)
        #expect(
            h.server.requestedPathSet
                == run.requests(try run.changedScript("version2") + [run.publicURL("some-file"), run.publicURL("some-other-file")]))
        #expect(h.state.pending == "version2" && h.state.meteor?.lastDownloadedVersion == "version2")
        // The old version is served until the reload.
        // (Exactly the embedded bytes: a prefix test would also accept version2's "some-file (changed)".)
        #expect(try h.servedContent("/some-file") == "some-file\n")
        #expect(try h.servedFile("/some-file")?.hasPrefix(h.embeddedPath) == true)
        try await h.reload()
        #expect(try h.servedContent("/some-file") == "some-file (changed)\n")
        #expect(try h.servedContent("/some-other-file") == "some-other-file\n")
        // Unchanged assets come from the embedded bundle.
        #expect(try h.servedFile("/some-text.txt") == h.embeddedPath + "/app/some-text.txt")
        #expect(try RuntimeConfig.extract(fromIndexHTML: #require(try h.servedContent("/"))).pageVersion == "version2")
        try await h.startupDidComplete(keep: keep)
        #expect(try await h.selectedAfterRestart() == "version2")
        #expect(FileManager.default.fileExists(atPath: h.layout.meteor + "/version2/app/some-other-file"))
        #expect(!FileManager.default.fileExists(atPath: h.layout.meteor + "/version2/app/some-text.txt"))
    }

    // 31–35: version2 → version3
    @Test(arguments: [1, 3], ScenarioSource.available)
    func updateFromVersion2ToVersion3(keep: Int, source: ScenarioSource) async throws {
        let run = try source.make()
        let h = run.harness
        try await h.install("version2", keep: keep)
        let outcome = try await h.check(serving: "version3")
        guard case .installed(let v) = outcome else {
            Issue.record("expected installed, got \(outcome)")
            return
        }
        #expect(v.id == "version3")
        #expect(h.server.requestedPathSet == run.requests(try run.changedScript("version3") + [run.publicURL("some-file")]))
        #expect(try h.servedContent("/some-file") == "some-file (changed)\n")
        try await h.reload()
        #expect(h.state.current == "version3")
        #expect(try h.servedContent("/some-file") == "some-file (changed again)\n")
        // some-other-file is unchanged since version2: reused by a hard link, not fetched.
        let reused = h.layout.meteor + "/version3/app/some-other-file"
        #expect(try h.servedFile("/some-other-file") == reused)
        #expect(try inode(reused) == inode(h.layout.meteor + "/version2/app/some-other-file"))
        #expect(try h.servedFile("/some-text.txt") == h.embeddedPath + "/app/some-text.txt")
        try await h.startupDidComplete(keep: keep)
        // N=1 reproduces the plugin's cleanup; the default N=3 keeps the older version.
        #expect(try h.installedIDs == (keep == 1 ? ["version3"] : ["version2", "version3"]))
        #expect(try await h.selectedAfterRestart() == "version3")
    }

    // 36–41: version2 → version1 (the bundled version)
    @Test(arguments: [1, 3], ScenarioSource.available)
    func updateFromVersion2BackToBundledVersion1(keep: Int, source: ScenarioSource) async throws {
        let h = try source.make().harness
        try await h.install("version2", keep: keep)
        let outcome = try await h.check(serving: "version1")
        guard case .installed(let v) = outcome else {
            Issue.record("expected installed, got \(outcome)")
            return
        }
        #expect(v.isEmbedded && v.id == "version1")
        #expect(h.server.requestedPathSet == ["/__cordova/manifest.json"])
        #expect(h.state.pending == "version1")
        try await h.reload()
        #expect(h.state.current == nil)
        #expect(
            try h.servedContent("/some-file")
                == String(decoding: try Data(contentsOf: URL(fileURLWithPath: h.embeddedPath + "/app/some-file")), as: UTF8.self))
        #expect(!FileManager.default.fileExists(atPath: h.layout.meteor + "/version1"))
        try await h.startupDidComplete(keep: keep)
        if keep == 1 {
            // The plugin deletes every download but the running (embedded) bundle.
            #expect(try h.installedIDs.isEmpty)
        } else {
            #expect(try h.installedIDs == ["version2"])
        }
        #expect(try await h.selectedAfterRestart() == nil)
    }

    // 42–43: same version on the server
    @Test(arguments: ScenarioSource.available)
    func noUpdateWhenTheServerHasTheCurrentVersion(source: ScenarioSource) async throws {
        let h = try source.make().harness
        try await h.install("version2")
        let outcome = try await h.check(serving: "version2")
        #expect(outcome == .upToDate("version version2 is current"))
        #expect(h.server.requestedPathSet == ["/__cordova/manifest.json"])
        #expect(h.state.pending == nil)
    }

    @Test(arguments: ScenarioSource.available)
    func noDownloadWhenTheVersionIsAlreadyPending(source: ScenarioSource) async throws {
        let h = try source.make().harness
        try await h.check(serving: "version2")
        let outcome = try await h.check(serving: "version2")
        #expect(outcome == .upToDate("version version2 is already pending"))
        #expect(h.server.requestedPathSet == ["/__cordova/manifest.json"])
    }

    // 44–57: each error, and no new version afterwards
    @Test(
        arguments: [
            ("version2_with_missing_asset", "Non-success status code 404 for asset: <script>"),
            ("version2_with_invalid_asset", "Hash mismatch for asset: <script>"),
            ("version2_with_version_mismatch", "Version mismatch for index page, expected: version2, actual: version3"),
            ("missing_root_url", "Could not find ROOT_URL in downloaded asset bundle"),
            ("missing_app_id", "Could not find appId in downloaded asset bundle"),
            ("wrong_app_id", "appId in downloaded asset bundle does not match current appId"),
            ("missing_cordova_compatibility_version", "Asset manifest does not have a cordovaCompatibilityVersion"),
        ], ScenarioSource.available)
    func failingDownloads(failure: (name: String, message: String), source: ScenarioSource) async throws {
        let name = failure.name
        let run = try source.make()
        let h = run.harness
        let message = failure.message.replacingOccurrences(of: "<script>", with: try run.scriptURL)
        let before = h.state
        await #expect {
            try await h.check(serving: name)
        } throws: { error in
            guard let e = error as? MeteorError else { return false }
            // A version mismatch (the server between two versions) is temporary: exit 75.
            let status: ClientFoundation.FailureKind = message.hasPrefix("Version mismatch") ? .tempFail : .dataError
            return e.message.contains(message) && e.kind == status
        }
        #expect(h.state == before)
        #expect(try h.installedIDs.isEmpty)
        #expect(try await h.selectedAfterRestart() == nil)
    }

    // 52–53: ROOT_URL may not move to localhost
    @Test(arguments: ScenarioSource.available)
    func refusesARootURLChangeToLocalhost(source: ScenarioSource) async throws {
        let h = try source.make().harness
        try await h.install("127.0.0.1_root_url")
        #expect(h.state.current == "127.0.0.1_root_url" && h.state.meteor?.rootURL == "http://127.0.0.1:3000/")
        await #expect {
            try await h.check(serving: "wrong_root_url")
        } throws: {
            ($0 as? MeteorError)?.message.contains("ROOT_URL in downloaded asset bundle would change current ROOT_URL to localhost.") == true
        }
        #expect(h.state.pending == nil)
        #expect(try !h.installedIDs.contains("wrong_root_url"))
    }

    // 60–61: a different cordovaCompatibilityVersion is skipped
    @Test(arguments: ScenarioSource.available)
    func skipsAnIncompatibleVersion(source: ScenarioSource) async throws {
        let h = try source.make().harness
        let outcome = try await h.check(serving: "different_cordova_compatibility_version")
        guard case .skipped(let message) = outcome else {
            Issue.record("expected skipped, got \(outcome)")
            return
        }
        #expect(
            message.contains(
                "Skipping downloading new version because the Cordova platform version or plugin versions have changed and are potentially incompatible"
            ))
        #expect(h.server.requestedPathSet == ["/__cordova/manifest.json"])
        #expect(try h.state.pending == nil && h.installedIDs.isEmpty)
    }

    @Test(arguments: ScenarioSource.available)
    func skipsABlacklistedVersion(source: ScenarioSource) async throws {
        let h = try source.make().harness
        try h.updateState { $0.blacklist = ["version2"] }
        let outcome = try await h.check(serving: "version2")
        guard case .skipped(let message) = outcome else {
            Issue.record("expected skipped, got \(outcome)")
            return
        }
        #expect(message.contains("Skipping downloading blacklisted version"))
        #expect(h.server.requestedPathSet == ["/__cordova/manifest.json"])
    }

    // 62–64: resume a partial download of the same version
    @Test(arguments: ScenarioSource.available)
    func resumesAPartialDownloadOfTheSameVersion(source: ScenarioSource) async throws {
        let run = try source.make()
        let h = run.harness
        try simulatePartialDownload(run)
        let outcome = try await h.check(serving: "version2")
        guard case .installed(let v) = outcome else {
            Issue.record("expected installed, got \(outcome)")
            return
        }
        #expect(v.id == "version2")
        #expect(h.server.requestedPathSet == run.requests(try run.changedScript("version2")))
        try await h.reload()
        #expect(try h.servedContent("/some-file") == "some-file (changed)\n")
        #expect(!FileManager.default.fileExists(atPath: h.layout.meteor + "/PartialDownload"))
        #expect(!FileManager.default.fileExists(atPath: h.layout.meteor + "/Downloading"))
    }

    // 65–68: resume a partial download when the server moved on to another version
    @Test(arguments: ScenarioSource.available)
    func resumesAPartialDownloadOfADifferentVersion(source: ScenarioSource) async throws {
        let run = try source.make()
        let h = run.harness
        try simulatePartialDownload(run)
        let outcome = try await h.check(serving: "version3")
        guard case .installed(let v) = outcome else {
            Issue.record("expected installed, got \(outcome)")
            return
        }
        #expect(v.id == "version3")
        #expect(h.server.requestedPathSet == run.requests(try run.changedScript("version3") + [run.publicURL("some-file")]))
        try await h.reload()
        #expect(h.state.current == "version3")
        #expect(try h.servedContent("/some-other-file") == "some-other-file\n")
        #expect(try h.servedContent("/some-file") == "some-file (changed again)\n")
    }

    /// The plugin's `simulatePartialDownload("version2")`: copies the fixture to `Downloading/`.
    func simulatePartialDownload(_ run: ScenarioRun) throws {
        try AtomicFile.makeDirectory(run.harness.layout.meteor)
        try FileManager.default.copyItem(atPath: try run.partialVersion2, toPath: run.harness.layout.meteor + "/Downloading")
    }
}

/// The file's inode: two paths with one inode are one file (a hard link, not a copy).
func inode(_ path: String) throws -> UInt {
    var st = stat()
    guard lstat(path, &st) == 0 else { throw HarnessError("cannot stat \(path)") }
    return UInt(st.st_ino)
}
