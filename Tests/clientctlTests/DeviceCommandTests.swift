import ClientUpdater
import Foundation
import TestSupport
import Testing

/// The device commands as users run them: the real binary, its stdout/stderr and exit codes.
@Suite struct DeviceCommandTests {
    func initRoot(_ f: DeviceFixture, root: String) async throws -> Subprocess.Result {
        try await ClientctlBinary.run([
            "init", "--root", root, "--app", "com.example.notes", "--channel", "stable",
            "--manifest-url", f.server.url("/stable/manifest.json").absoluteString,
            "--trust", ClientctlBinary.packagePath("Keys/test-signing.pub.pem"), "--shell-version", "1.0.0",
        ])
    }

    @Test func initInstallStatusListWithJSON() async throws {
        let f = try DeviceFixture()
        try f.publish("1.0.0")
        let root = f.tmp("cli-root")
        let made = try await initRoot(f, root: root)
        #expect(made.status == 0, "\(made.errorOutput)")
        let again = try await initRoot(f, root: root)
        #expect(again.status == 73)
        #expect(again.errorOutput.contains("exists already"))

        let install = try await ClientctlBinary.run(["install", "--json"], environment: ["CLIENTCTL_ROOT": root])
        #expect(install.status == 0, "\(install.errorOutput)")
        let report = try JSONDecoder().decode(InstallReport.self, from: install.stdout)
        #expect(report.result == .installed && report.version == "1.0.0" && report.pending == "1.0.0")

        let status = try await ClientctlBinary.run(["status", "--root", root, "--json"])
        #expect(status.status == 0)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let s = try decoder.decode(StatusReport.self, from: status.stdout)
        #expect(s.current == .embedded && s.pending == "1.0.0" && s.selected == .installed("1.0.0"))
        #expect(s.lastCheck?.result == "installed")

        let list = try await ClientctlBinary.run(["list", "--root", root])
        #expect(list.status == 0)
        #expect(list.output.contains("1.0.0\tshell >= 1.0.0\tpending"))

        let upToDate = try await ClientctlBinary.run(["install", "--root", root])
        #expect(upToDate.status == 0)
        #expect(upToDate.output.contains("up to date"))
    }

    @Test func exitCodesNameTheFailure() async throws {
        let f = try DeviceFixture()
        try f.publish("1.0.0") { $0["app"] = .string("com.other.app") }
        let root = f.tmp("cli-root")
        await #expect(try initRoot(f, root: root).status == 0)

        let rejected = try await ClientctlBinary.run(["install", "--root", root])
        #expect(rejected.status == 65)
        #expect(rejected.errorOutput == "clientctl: rejected: release 1.0.0 is for app com.other.app, this device runs com.example.notes\n")

        f.server.stop()
        let offline = try await ClientctlBinary.run(["install", "--root", root])
        #expect(offline.status == 69, "\(offline.errorOutput)")
        #expect(offline.errorOutput.contains("connection refused"))

        let missing = try await ClientctlBinary.run(["status", "--root", f.tmp("nowhere")])
        #expect(missing.status == 78)
        #expect(missing.errorOutput.contains("does not exist"))

        let noRoot = try await ClientctlBinary.run(["status"], environment: ["CLIENTCTL_ROOT": ""])
        #expect(noRoot.status == 64)

        let badShell = try await ClientctlBinary.run([
            "init", "--root", f.tmp("r2"), "--app", "com.example.notes", "--channel", "stable",
            "--manifest-url", "https://cdn.example.com/m.json", "--trust", ClientctlBinary.packagePath("Keys/test-signing.pub.pem"),
            "--shell-version", "v1.0",
        ])
        #expect(badShell.status == 64)
        #expect(badShell.errorOutput.contains("The value 'v1.0' is invalid for '--shell-version"), "\(badShell.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: f.tmp("r2")), "a refused init writes nothing")
    }

    @Test func busyRootExits75() async throws {
        let f = try DeviceFixture()
        try f.publish("1.0.0")
        let holder = try await FileLock.acquire(path: f.layout.lock, wait: .zero)
        let busy = try await ClientctlBinary.run(["install", "--root", f.layout.root, "--wait", "0.2"])
        #expect(busy.status == 75)
        #expect(busy.errorOutput.contains("is locked by another clientctl process"))
        withExtendedLifetime(holder) {}
    }

    @Test func transientFailuresAreRetriedWithinOneInstall() async throws {
        let f = try DeviceFixture()
        let noise = (0..<2_000).map { _ in UUID().uuidString }.joined()  // ~72 KB that gzip can't shrink much
        let client = try ReleaseFolder.makeClient(at: f.tmp("big"), version: "1.0.0", extraFiles: ["noise.txt": noise])
        let archive = try ReleaseFolder.tarGz(of: client)
        #expect(archive.count > 20_000)
        try f.releases.publish("1.0.0", archive: archive)
        f.faults.add(.status(503), path: "/stable/manifest.json", requests: 1...1)
        f.faults.add(.reset(afterBytes: 500), path: "/stable/v1.0.0.tar.gz", requests: 1...1)
        let report = try await f.updater().install()
        #expect(report.result == .installed)
        let archiveRequests = f.requests(to: "/stable/v1.0.0.tar.gz")
        #expect(archiveRequests.count == 2)
        #expect(archiveRequests.last?.headers["range"]?.hasPrefix("bytes=") == true, "the retry resumes with a Range request")
    }
}
