import ClientFoundation
import Foundation
import TestSupport
import Testing

/// Issue 38: `clientctl repo` keeps a signed apt repository of the .debs `clientctl package`
/// makes (reprepro underneath), and refuses what it must with one line, a distinct exit
/// code and the repository exactly as it was. The .debs here are small ones with the
/// control fields `package` writes (fast); AptInstallTests adds real packages and lets apt
/// itself judge the result.
@Suite(.serialized) struct RepoCommandTests {
    /// A repository made, signed (InRelease, Release.gpg: gpgv verifies both with the public
    /// key), with by-hash indexes and a Valid-Until; the same .deb again is `unchanged` and
    /// changes no byte; a second suite, a newer version, a removal.
    @Test func aRepositoryIsMadeSignedAndChangedOneSuiteAtATime() async throws {
        let inputs = try PackageInputs("repo-add")
        let key = try await ArchiveKey.make(in: inputs.tmp.path, name: "archive")
        let deb = try await Self.appDeb(version: "1.0.0", in: inputs.tmp("dist"))
        let repo = inputs.tmp("apt")
        let pkg = PackageInputs.package

        let added = try await Self.repo(["add", deb, "--repo", repo, "--suite", "stable", "--gpg-key", key.secret])
        #expect(added.status == 0 && added.output == "added \(pkg) 1.0.0 (\(PackageInputs.architecture)) to suite stable\n", "\(added.errorOutput)")
        let release = try String(contentsOfFile: repo + "/dists/stable/Release", encoding: .utf8)
        for field in ["Suite: stable", "Codename: stable", "Acquire-By-Hash: yes", "Valid-Until: ", "Components: main"] {
            #expect(release.contains(field), "\(field): \(release)")
        }
        // Every index the Release names is also under by-hash/SHA256/ with the same bytes.
        let sha256 = release.components(separatedBy: "SHA256:\n").last ?? ""
        let indexes = sha256.split(separator: "\n").map { $0.split(separator: " ") }.filter { $0.count == 3 }
        #expect(indexes.contains { $0[2] == "main/binary-\(PackageInputs.architecture)/Packages.xz" }, "\(indexes)")
        for index in indexes {
            let path = String(index[2])
            let byHash = repo + "/dists/stable/" + (path as NSString).deletingLastPathComponent + "/by-hash/SHA256/" + index[0]
            #expect(FileManager.default.contents(atPath: byHash) == FileManager.default.contents(atPath: repo + "/dists/stable/" + path), "\(byHash)")
        }
        // gpgv (what apt runs) verifies both signatures with the public key alone.
        let keyring = inputs.tmp("archive.gpg")
        let dearmor = try await Subprocess.run("gpg", ["--batch", "--yes", "--dearmor", "--output", keyring, key.publicKey])
        try #require(dearmor.status == 0, "\(dearmor.errorOutput)")
        let inline = try await Subprocess.run("gpgv", ["--keyring", keyring, repo + "/dists/stable/InRelease"])
        #expect(inline.status == 0 && inline.errorOutput.contains("Good signature"), "\(inline.errorOutput)")
        let detached = try await Subprocess.run(
            "gpgv", ["--keyring", keyring, repo + "/dists/stable/Release.gpg", repo + "/dists/stable/Release"])
        #expect(detached.status == 0, "\(detached.errorOutput)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: inputs.tmp.path).filter { $0.contains("staging") }.isEmpty, "no staging left")

        // The same bytes again: unchanged, not one byte of the repository touched.
        let before = try TreeSnapshot(repo)
        let again = try await Self.repo(["add", deb, "--repo", repo, "--suite", "stable", "--gpg-key", key.secret])
        #expect(again.status == 0 && again.output.hasPrefix("unchanged: suite stable holds \(pkg) 1.0.0"), "\(again.output)\(again.errorOutput)")
        #expect(try TreeSnapshot(repo) == before)

        // A second suite (the beta channel), a newer version replacing the older, a removal.
        let beta = try await Self.repo(["add", deb, "--repo", repo, "--suite", "beta", "--gpg-key", key.secret])
        #expect(beta.status == 0, "\(beta.errorOutput)")
        let newer = try await Self.repack(deb, version: "1.1.0", in: inputs.tmp("newer"))
        let replaced = try await Self.repo(["add", newer, "--repo", repo, "--suite", "beta", "--gpg-key", key.secret])
        #expect(replaced.status == 0 && replaced.output.contains("1.1.0") && replaced.output.contains("replacing 1.0.0"), "\(replaced.errorOutput)")
        let listed = try await Self.repo(["list", "--repo", repo])
        #expect(
            listed.output == "beta\t\(pkg)\t1.1.0\t\(PackageInputs.architecture)\nstable\t\(pkg)\t1.0.0\t\(PackageInputs.architecture)\n",
            "\(listed.output)\(listed.errorOutput)")
        let json = try await Self.repo(["list", "--repo", repo, "--suite", "stable", "--json"])
        let object = try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any]
        let packages = object?["packages"] as? [[String: Any]]
        #expect(packages?.count == 1 && packages?.first?["version"] as? String == "1.0.0", "\(json.output)")
        // A phase: the field in the suite's index (what apt reads), in the list, and the same
        // phase again changes no byte; a share over 100 and a package the suite lacks are refused.
        let phased = try await Self.repo(["phase", pkg, "10", "--repo", repo, "--suite", "stable", "--gpg-key", key.secret])
        #expect(phased.status == 0 && phased.output.contains("in suite stable at 10%"), "\(phased.output)\(phased.errorOutput)")
        let index = try String(contentsOfFile: repo + "/dists/stable/main/binary-\(PackageInputs.architecture)/Packages", encoding: .utf8)
        #expect(index.contains("Package: \(pkg)\n") && index.contains("Phased-Update-Percentage: 10\n"), "\(index)")
        let betaIndex = try String(contentsOfFile: repo + "/dists/beta/main/binary-\(PackageInputs.architecture)/Packages", encoding: .utf8)
        #expect(!betaIndex.contains("Phased-Update-Percentage"), "only the suite named is phased")
        let phasedOnce = try TreeSnapshot(repo)
        #expect(try await Self.repo(["phase", pkg, "10", "--repo", repo, "--suite", "stable", "--gpg-key", key.secret]).status == 0)
        #expect(try TreeSnapshot(repo) == phasedOnce, "the same phase again changes nothing")
        let tooMuch = try await Self.repo(["phase", pkg, "101", "--repo", repo, "--suite", "stable", "--gpg-key", key.secret])
        #expect(tooMuch.status == 64 && tooMuch.errorOutput.contains("0 to 100"), "\(tooMuch.errorOutput)")
        let lacking = try await Self.repo(["phase", "other-pkg", "50", "--repo", repo, "--suite", "stable", "--gpg-key", key.secret])
        #expect(lacking.status == 66 && lacking.errorOutput.contains("does not hold other-pkg"), "\(lacking.errorOutput)")
        #expect(try TreeSnapshot(repo) == phasedOnce, "refusals change nothing")

        let removed = try await Self.repo(["remove", pkg, "--repo", repo, "--suite", "beta", "--gpg-key", key.secret])
        #expect(removed.status == 0 && removed.output.contains("removed \(pkg) 1.1.0"), "\(removed.errorOutput)")
        let gone = try await Self.repo(["remove", pkg, "--repo", repo, "--suite", "beta", "--gpg-key", key.secret])
        #expect(gone.status == 66 && gone.errorOutput.contains("does not hold"), "\(gone.errorOutput)")
        let stable = try await Self.repo(["list", "--repo", repo])
        #expect(stable.output == "stable\t\(pkg)\t1.0.0\t\(PackageInputs.architecture)\tphased 10%\n", "\(stable.output)")
    }

    /// What must be refused is, with one line naming what and why and a distinct code, and
    /// the repository (or a folder that is not one) is exactly as it was.
    @Test func refusalsLeaveTheRepositoryAsItWas() async throws {
        let inputs = try PackageInputs("repo-refusals")
        let key = try await ArchiveKey.make(in: inputs.tmp.path, name: "archive")
        let locked = try await ArchiveKey.make(in: inputs.tmp.path, name: "locked", passphrase: "correct horse")
        let deb = try await Self.appDeb(version: "1.0.0", in: inputs.tmp("dist"))
        let repo = inputs.tmp("apt")
        let made = try await Self.repo(["add", deb, "--repo", repo, "--suite", "stable", "--gpg-key", key.secret])
        try #require(made.status == 0, "\(made.errorOutput)")
        let older = try await Self.repack(deb, version: "0.9.0", in: inputs.tmp("older"))
        let otherBytes = try await Self.repack(deb, version: nil, in: inputs.tmp("other"))
        let foreign = try await Self.foreignDeb(in: inputs.tmp("foreign"))
        try FileManager.default.createDirectory(atPath: inputs.tmp("notours"), withIntermediateDirectories: true)
        try Data("a vendor's own file\n".utf8).write(to: URL(fileURLWithPath: inputs.tmp("notours/README")))

        let cases: [(String, [String], Int32, String)] = [
            (
                "a folder that is not ours", [deb, "--repo", inputs.tmp("notours"), "--gpg-key", key.secret], 73,
                "not a repository clientctl repo made"
            ),
            ("a public key", [deb, "--repo", repo, "--gpg-key", key.publicKey], 65, "is a public key"),
            ("a passphrase", [deb, "--repo", repo, "--gpg-key", locked.secret], 65, "cannot sign without a passphrase"),
            ("garbage", [deb, "--repo", repo, "--gpg-key", "/etc/hostname"], 65, "is not an OpenPGP key"),
            ("a .deb package did not make", [foreign, "--repo", repo, "--gpg-key", key.secret], 65, "was not made by clientctl package"),
            ("other bytes for 1.0.0", [otherBytes, "--repo", repo, "--gpg-key", key.secret], 73, "with other bytes"),
            ("an older version", [older, "--repo", repo, "--gpg-key", key.secret], 73, "newer than 0.9.0"),
            ("a missing key", [deb, "--repo", repo, "--gpg-key", inputs.tmp("nokey.asc")], 66, "no such file"),
        ]
        for (what, arguments, status, message) in cases {
            let folder = arguments[2]
            let before = try TreeSnapshot(folder)
            let result = try await Self.repo(["add", "--suite", "stable"] + arguments)
            #expect(result.status == status && result.errorOutput.contains(message), "\(what): \(result.status) \(result.errorOutput)")
            #expect(result.errorOutput.split(separator: "\n").count == 1, "\(what): one line: \(result.errorOutput)")
            #expect(try TreeSnapshot(folder) == before, "\(what): the folder changed")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: inputs.tmp.path).filter { $0.contains("staging") }.isEmpty, "no staging left")
    }

    /// `clientctl repo ARGUMENTS` (the debug build: repo ships no binaries).
    static func repo(_ arguments: [String], environment: [String: String] = [:]) async throws -> Subprocess.Result {
        try await ClientctlBinary.run(["repo"] + arguments, environment: environment)
    }

    /// The .deb unpacked and built again (gzip, so other bytes), with another `version`.
    static func repack(_ deb: String, version: String?, in folder: String) async throws -> String {
        let tree = folder + "/tree"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let raw = try await Subprocess.run("dpkg-deb", ["-R", deb, tree])
        guard raw.status == 0 else { throw HarnessError("dpkg-deb -R: \(raw.errorOutput)") }
        if let version {
            let control = tree + "/DEBIAN/control"
            let text = try String(contentsOfFile: control, encoding: .utf8)
            let changed = text.split(separator: "\n").map { $0.hasPrefix("Version: ") ? "Version: \(version)" : String($0) }
            try Data((changed.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: control))
        }
        let out = folder + "/repacked.deb"
        let build = try await Subprocess.run("dpkg-deb", ["--root-owner-group", "-Zgzip", "-z1", "--build", tree, out])
        guard build.status == 0 else { throw HarnessError("dpkg-deb --build: \(build.errorOutput)") }
        return out
    }

    /// A small .deb with the control fields `clientctl package` writes (its
    /// `X-Clientctl-Template` among them) and a template file.
    static func appDeb(version: String, in folder: String) async throws -> String {
        let pkg = PackageInputs.package
        try FileManager.default.createDirectory(atPath: folder + "/tree/DEBIAN", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/tree/usr/share/\(pkg)", withIntermediateDirectories: true)
        try Data("{}\n".utf8).write(to: URL(fileURLWithPath: folder + "/tree/usr/share/\(pkg)/device-template.json"))
        let control = """
            Package: \(pkg)
            Version: \(version)
            Architecture: \(PackageInputs.architecture)
            Maintainer: Example Ltd <apps@example.com>
            Section: web
            Priority: optional
            X-Clientctl-Template: /usr/share/\(pkg)/device-template.json
            Description: self-updating web app: Packaged Notes
             A test package.

            """
        try Data(control.utf8).write(to: URL(fileURLWithPath: folder + "/tree/DEBIAN/control"))
        let out = folder + "/" + PackageInputs.debName(version)
        let build = try await Subprocess.run("dpkg-deb", ["--root-owner-group", "--build", folder + "/tree", out])
        guard build.status == 0 else { throw HarnessError("dpkg-deb --build: \(build.errorOutput)") }
        return out
    }

    /// A well-formed .deb that clientctl did not make (no X-Clientctl-Template).
    static func foreignDeb(in folder: String) async throws -> String {
        try FileManager.default.createDirectory(atPath: folder + "/tree/DEBIAN", withIntermediateDirectories: true)
        let control = "Package: hello-other\nVersion: 1.0\nArchitecture: all\nMaintainer: Someone <a@example.com>\nDescription: another vendor's\n"
        try Data(control.utf8).write(to: URL(fileURLWithPath: folder + "/tree/DEBIAN/control"))
        let out = folder + "/hello-other_1.0_all.deb"
        let build = try await Subprocess.run("dpkg-deb", ["--root-owner-group", "--build", folder + "/tree", out])
        guard build.status == 0 else { throw HarnessError("dpkg-deb --build: \(build.errorOutput)") }
        return out
    }
}
