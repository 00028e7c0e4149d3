import ClientFoundation
import Foundation
import TestSupport
import Testing

/// Issue 43: two `repo` commands on one folder take turns (docs/packaging.md), so four
/// `repo add` started together all succeed, one after the other, and the repository holds
/// all four packages. (They exited 75, "changed while it was read", when the state was
/// read before the lock.)
@Suite struct RepoConcurrencyTests {
    /// A small .deb of `package` with the control fields `clientctl package` writes.
    static func deb(_ package: String, in folder: String) async throws -> String {
        let tree = folder + "/\(package)-tree"
        try FileManager.default.createDirectory(atPath: tree + "/DEBIAN", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: tree + "/usr/share/\(package)", withIntermediateDirectories: true)
        try Data("{}\n".utf8).write(to: URL(fileURLWithPath: tree + "/usr/share/\(package)/device-template.json"))
        let control = """
            Package: \(package)
            Version: 1.0.0
            Architecture: \(PackageInputs.architecture)
            Maintainer: Example Ltd <apps@example.com>
            Section: web
            Priority: optional
            X-Clientctl-Template: /usr/share/\(package)/device-template.json
            Description: self-updating web app: \(package)
             A test package.

            """
        try Data(control.utf8).write(to: URL(fileURLWithPath: tree + "/DEBIAN/control"))
        let out = folder + "/\(package)_1.0.0_\(PackageInputs.architecture).deb"
        let build = try await Subprocess.run("dpkg-deb", ["--root-owner-group", "--build", tree, out])
        guard build.status == 0 else { throw HarnessError("dpkg-deb --build: \(build.errorOutput)") }
        return out
    }

    @Test func fourRepoAddsStartedTogetherAllSucceed() async throws {
        let inputs = try PackageInputs("repo-concurrent")
        let key = try await ArchiveKey.make(in: inputs.tmp.path, name: "archive")
        let dist = inputs.tmp("dist")
        try FileManager.default.createDirectory(atPath: dist, withIntermediateDirectories: true)
        let packages = (1...4).map { "clientctl-test-app\($0)" }
        var debs: [String] = []
        for package in packages { debs.append(try await Self.deb(package, in: dist)) }
        let repo = inputs.tmp("apt")

        // Started together: past the suite's gate on concurrent children, which would run
        // them a few at a time.
        let results = try await withThrowingTaskGroup(of: (String, Subprocess.Result).self) { group in
            for deb in debs {
                group.addTask {
                    let arguments = ["repo", "add", deb, "--repo", repo, "--suite", "stable", "--gpg-key", key.secret]
                    return (deb, try await Subprocess.run(ClientctlBinary.path, arguments, gate: nil))
                }
            }
            var all: [(String, Subprocess.Result)] = []
            for try await result in group { all.append(result) }
            return all
        }
        for (deb, result) in results {
            #expect(result.status == 0, "\((deb as NSString).lastPathComponent): \(result.status) \(result.errorOutput)")
        }
        let listed = try await ClientctlBinary.run(["repo", "list", "--repo", repo, "--suite", "stable"])
        #expect(listed.status == 0, "\(listed.errorOutput)")
        let held = Set(listed.output.split(separator: "\n").map { $0.split(separator: "\t").dropFirst().first.map(String.init) ?? "" })
        #expect(held == Set(packages), "\(listed.output)")
        let index = try String(
            contentsOfFile: repo + "/dists/stable/main/binary-\(PackageInputs.architecture)/Packages", encoding: .utf8)
        for package in packages { #expect(index.contains("Package: \(package)\n"), "\(package) in the signed index") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: inputs.tmp.path).filter { $0.contains("staging") }.isEmpty, "no staging left")
    }
}
