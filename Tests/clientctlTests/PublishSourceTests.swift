import ArchivePublishing
import ClientUpdater
import Foundation
import SafeArchive
import SignedManifest
import Synchronization
import TestSupport
import Testing

/// Issue 10, point 10 (publish side): hidden files stay out of releases unless asked for,
/// and a source file swapped for a FIFO after the scan is refused instead of hanging
/// publish while it holds the channel lock.
@Suite struct PublishSourceTests {
    @Test func hiddenFilesAreSkippedUnlessIncluded() async throws {
        let rig = try await ReleaseRig(label: "publish-hidden")
        let dir = try ReleaseFolder.makeClient(
            at: rig.tmp("build"), version: "1.0.0",
            extraFiles: [".env": "SECRET=1", ".git/config": "x", ".well-known/assetlinks.json": "[]"])
        let args = [
            "publish", dir, "--app", rig.app, "--channel", "stable", "--min-shell", "1.0.0",
            "--key", rig.key + ".pem", "--out", rig.releases,
        ]
        let skipped = try await ClientctlBinary.run(args + ["--version", "1.0.0"])
        #expect(skipped.status == 0, "\(skipped.errorOutput)")
        #expect(
            skipped.errorOutput.contains("skipped hidden files: .env, .git, .well-known (pass --include-hidden to publish them)"),
            "\(skipped.errorOutput)")
        let names = try await Subprocess.run("bsdtar", ["-tzf", rig.releases + "/stable/v1.0.0.tar.gz"]).output
        #expect(!names.contains(".env") && !names.contains(".git") && names.contains("index.html"), "\(names)")

        let included = try await ClientctlBinary.run(args + ["--version", "1.1.0", "--include-hidden"])
        #expect(included.status == 0, "\(included.errorOutput)")
        let all = try await Subprocess.run("bsdtar", ["-tzf", rig.releases + "/stable/v1.1.0.tar.gz"]).output
        #expect(all.contains(".well-known/assetlinks.json") && all.contains(".env"), "\(all)")
    }

    @Test func aSourceSwappedForAFIFOIsRefusedNotWaitedOn() throws {
        let tmp = try TemporaryDirectory("publish-fifo")
        let dir = try ReleaseFolder.makeClient(at: tmp("build"), version: "1.0.0")
        let tree = try SourceTree.scan(dir)
        try FileManager.default.removeItem(atPath: dir + "/app.js")
        #expect(mkfifo(dir + "/app.js", 0o644) == 0)
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        let archive = tmp("out.tar.gz")
        Thread.detachNewThread {
            let result = Result { try ArchiveWriter.write(tree, format: .tarGzip, to: archive) }
            outcome.set(result)
            done.signal()
        }
        if done.wait(timeout: .now() + 10) == .timedOut {
            // Unblock the writer stuck in open(2) before failing.
            let fd = open(dir + "/app.js", O_WRONLY | O_NONBLOCK)
            if fd >= 0 { close(fd) }
            Issue.record("publish blocked on a FIFO")
            _ = done.wait(timeout: .now() + 10)
            return
        }
        let result = try #require(outcome.get())
        #expect(throws: SafeArchiveError.self) { try result.get() }
        if case .failure(let error as SafeArchiveError) = result {
            #expect(error.message.contains("app.js is no longer a regular file"), "\(error.message)")
            #expect(error.code == .sourceRejected)
            #expect(error.kind == .dataError)
        }
    }
}

/// The result of a call made on another thread.
private final class Outcome: Sendable {
    private let result = Mutex<Result<Void, any Error>?>(nil)
    func set(_ value: Result<Void, any Error>) { result.withLock { $0 = value } }
    func get() -> Result<Void, any Error>? { result.withLock { $0 } }
}
