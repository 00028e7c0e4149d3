import ClientFoundation
import ClientUpdater
import Foundation
import TestSupport
import Testing

/// Every HTTP status a feed can answer, against docs/reference/exit-codes.md: a status
/// retried in vain (5xx, 408, 429) is an unavailable server (69), like a network failure;
/// any other non-success status for a file the feed names is a refusal (65); a 304 on
/// the manifest is "up to date" (0); `index.json` is optional, so its 404/410 means
/// "nothing compatible to install" (0). The root is left exactly as it was on failure.
@Suite struct HTTPStatusExitCodeTests {
    static let transient = [408, 429, 500, 502, 503, 504]
    static let refusals = [301, 302, 400, 401, 403, 404, 410, 451]

    @Test(arguments: ["/stable/manifest.json", "/stable/v1.0.0.tar.gz"], transient + refusals)
    func manifestAndArchiveStatuses(path: String, status: Int) async throws {
        let f = try DeviceFixture()
        try f.publish("1.0.0")
        f.faults.add(.status(status), path: path)
        let stateBefore = FileManager.default.contents(atPath: f.layout.state)
        let error = await #expect(throws: UpdaterError.self) { try await f.updater().install() }
        let expected: ClientFoundation.FailureKind = Self.transient.contains(status) ? .unavailable : .dataError
        #expect(error?.kind == expected, "HTTP \(status) on \(path): \(String(describing: error))")
        #expect(error?.message.contains("HTTP \(status)") == true, "\(String(describing: error))")
        if Self.transient.contains(status) {
            #expect(f.requests(to: path).count == 3, "retried (3 attempts in this fixture) before giving up")
        }
        #expect(FileManager.default.contents(atPath: f.layout.state) == stateBefore, "state.json as it was")
        #expect(!FileManager.default.fileExists(atPath: f.layout.root + "/clients/v1.0.0"))
    }

    @Test(arguments: [404, 410])
    func anIncompatibleManifestWithoutIndexIsNothingToInstall(status: Int) async throws {
        let f = try DeviceFixture()
        try f.publish("1.0.0", minShell: "2.0.0")
        f.faults.add(.status(status), path: "/stable/index.json")
        let install = try await ClientctlBinary.run(["install", "--root", f.layout.root, "--json"])
        #expect(install.status == 0, "\(install.errorOutput)")
        let report = try JSONDecoder().decode(InstallReport.self, from: install.stdout)
        #expect(report.result == .noCompatibleRelease && report.pending == nil, "\(report)")
        #expect(report.message.contains("index.json has no newer compatible release"), "\(report.message)")
        #expect(f.requests(to: "/stable/index.json").count == 1)
    }

    @Test(arguments: [(503, ClientFoundation.FailureKind.unavailable), (403, .dataError)])
    func otherIndexStatusesFailTheCheck(status: Int, expected: ClientFoundation.FailureKind) async throws {
        let f = try DeviceFixture()
        try f.publish("1.0.0", minShell: "2.0.0")
        f.faults.add(.status(status), path: "/stable/index.json")
        let error = await #expect(throws: UpdaterError.self) { try await f.updater().install() }
        #expect(error?.kind == expected, "HTTP \(status) on index.json: \(String(describing: error))")
    }

    /// The command line, as a user sees it: HTTP 503 on the archive after retries → 69.
    @Test func theCommandLineExits69WhenTheArchiveAnswers503() async throws {
        let f = try DeviceFixture()
        try f.publish("1.0.0")
        f.faults.add(.status(503), path: "/stable/v1.0.0.tar.gz")
        let install = try await ClientctlBinary.run(["install", "--root", f.layout.root])
        #expect(install.status == 69, "\(install.errorOutput)")
        #expect(install.errorOutput.contains("HTTP 503") && install.errorOutput.contains("gave up after"), "\(install.errorOutput)")
    }
}
