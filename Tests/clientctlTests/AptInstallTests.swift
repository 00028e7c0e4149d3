import Foundation
import TestSupport
import Testing

/// Issue 38, judged by apt itself on a real Debian 12 root (DebianRoot: mmdebstrap, cached):
/// a package made with `--apt-repo` is installed by hand once, as a vendor's first .deb is
/// (Chrome's way), then apt keeps it current from the repository `clientctl repo` signs,
/// trusting the package's own keyring for that source only; a repository signed by another
/// key, a tampered InRelease and a Release past its Valid-Until are refused by apt with its
/// own errors, and nothing is installed from them; piuparts installs, upgrades and purges
/// the package cleanly; `repo push` puts the repository in an S3 store apt installs from.
@Suite(.serialized) struct AptInstallTests {
    @Test func aptInstallsUpgradesAndPurgesThePackagedAppAndRefusesWhatItMust() async throws {
        try #require(getuid() == 0, "a Debian root is extracted with its owners and entered with bwrap as root")
        let inputs = try PackageInputs("apt-install")
        let www = inputs.tmp("www")
        try FileManager.default.createDirectory(atPath: www, withIntermediateDirectories: true)
        let server = try LoopbackHTTPServer(handler: LoopbackHTTPServer.folder(www))
        defer { server.stop() }
        let key = try await ArchiveKey.make(in: inputs.tmp.path, name: "archive")
        let other = try await ArchiveKey.make(in: inputs.tmp.path, name: "other")
        let pkg = PackageInputs.package
        let url = { (name: String) in server.url("/" + name).absoluteString }
        let apt = ["--apt-repo", url("good"), "--apt-suite", "stable", "--apt-key", key.publicKey]

        // The package: its keyring (the key, binary) and its source, a conffile.
        let first = try await ReleaseBinaries.package(inputs.arguments(version: "1.0.0", extra: apt))
        try #require(first.status == 0, "\(first.errorOutput)")
        let deb = inputs.tmp("dist/" + PackageInputs.debName("1.0.0"))
        let tree = inputs.tmp("tree")
        try #require(try await Subprocess.run("dpkg-deb", ["-x", deb, tree]).status == 0)
        let keyringPath = "usr/share/keyrings/\(pkg)-archive-keyring.gpg"
        let sourcesPath = "etc/apt/sources.list.d/\(pkg).sources"
        let sources = try String(contentsOfFile: tree + "/" + sourcesPath, encoding: .utf8)
        for line in ["Types: deb", "URIs: \(url("good"))", "Suites: stable", "Components: main", "Signed-By: /\(keyringPath)"] {
            #expect(sources.contains(line + "\n"), "\(line): \(sources)")
        }
        let dearmored = inputs.tmp("archive.gpg")
        try #require(try await Subprocess.run("gpg", ["--batch", "--yes", "--dearmor", "--output", dearmored, key.publicKey]).status == 0)
        #expect(FileManager.default.contents(atPath: tree + "/" + keyringPath) == FileManager.default.contents(atPath: dearmored))
        let conffiles = try await Subprocess.run("dpkg-deb", ["--info", deb, "conffiles"])
        #expect(conffiles.output == "/\(sourcesPath)\n", "\(conffiles.output)\(conffiles.errorOutput)")
        let lint = try await Subprocess.run("lintian", ["--tag-display-limit", "0", deb])
        let tags = lint.output.split(separator: "\n").filter { $0.hasPrefix("E:") || $0.hasPrefix("W:") }
        #expect(tags.isEmpty, "lintian: \(tags)")

        // The repositories: the good one, one signed by another key, a tampered copy, and
        // one signed three days ago, valid for a day.
        for (name, signer) in [("good", key), ("otherkey", other)] {
            let added = try await Self.repo(["add", deb, "--repo", www + "/" + name, "--suite", "stable", "--gpg-key", signer.secret])
            try #require(added.status == 0, "\(name): \(added.errorOutput)")
        }
        let expired = try await Self.repo(
            ["add", deb, "--repo", www + "/expired", "--suite", "stable", "--gpg-key", key.secret, "--valid-for", "1"], faked: "-3d")
        try #require(expired.status == 0, "expired: \(expired.errorOutput)")
        try #require(try await Subprocess.run("cp", ["-a", www + "/good", www + "/tampered"]).status == 0)
        let inRelease = www + "/tampered/dists/stable/InRelease"
        let signed = try String(contentsOfFile: inRelease, encoding: .utf8)
        try Data(signed.replacingOccurrences(of: "Origin: clientctl", with: "Origin: clientctX").utf8).write(to: URL(fileURLWithPath: inRelease))

        let depends = try await Subprocess.run("dpkg-deb", ["--field", deb, "Depends"])
        let names = depends.output.split(separator: ",").compactMap { $0.split(separator: "|").first?.split(separator: " ").first.map(String.init) }
        let root = try await DebianRoot.make(in: inputs.tmp("debian"), including: names + ["unattended-upgrades"])

        // Refused by apt, nothing installed: the package's keyring and a source in the root,
        // as the package would put them, pointing at each bad repository in turn.
        try FileManager.default.createDirectory(atPath: root("usr/share/keyrings"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: tree + "/" + keyringPath, toPath: root(keyringPath))
        let refusals: [(String, [String])] = [
            // apt 2.6: "W: GPG error: URL stable InRelease: The following signatures couldn't be
            // verified because the public key is not available: NO_PUBKEY …" then
            // "E: The repository 'URL stable InRelease' is not signed."
            ("otherkey", ["NO_PUBKEY", "is not signed"]),
            // "The following signatures were invalid: BADSIG …" and "is not signed".
            ("tampered", ["BADSIG", "is not signed"]),
            // "E: Release file for URL/dists/stable/InRelease is expired (invalid since 2d …).
            // Updates for this repository will not be applied."
            ("expired", ["dists/stable/InRelease is expired (invalid since", "Updates for this repository will not be applied"]),
        ]
        for (name, messages) in refusals {
            try Data(sources.replacingOccurrences(of: url("good"), with: url(name)).utf8).write(to: URL(fileURLWithPath: root(sourcesPath)))
            try await root.run(["sh", "-c", "rm -rf /var/lib/apt/lists/*"])
            let update = try await root.apt(["update"])
            let said = update.output + update.errorOutput
            #expect(update.status == 100, "\(name): apt-get update exited \(update.status): \(said)")
            for message in messages { #expect(said.contains(message), "\(name): \(message) not in \(said)") }
            let install = try await root.apt(["install", pkg])
            #expect(install.status == 100 && install.errorOutput.contains("Unable to locate package \(pkg)"), "\(name): \(install.errorOutput)")
            #expect(try await root.installedVersion(pkg) == nil, "\(name): installed")
        }
        try FileManager.default.removeItem(atPath: root(sourcesPath))
        try FileManager.default.removeItem(atPath: root(keyringPath))
        try await root.run(["sh", "-c", "rm -rf /var/lib/apt/lists/*"])

        // The vendor's path: the first .deb by hand, then apt from the source it brought.
        try FileManager.default.copyItem(atPath: deb, toPath: root("tmp/" + PackageInputs.debName("1.0.0")))
        let installed = try await root.apt(["install", "/tmp/" + PackageInputs.debName("1.0.0")])
        try #require(installed.status == 0, "\(installed.output)\(installed.errorOutput)")
        #expect(try await root.installedVersion(pkg) == "1.0.0")
        let update = try await root.apt(["update"])
        #expect(update.status == 0 && !update.errorOutput.contains("W:") && !update.errorOutput.contains("E:"), "\(update.errorOutput)")
        let policy = try await root.run(["apt-cache", "policy", pkg])
        #expect(policy.output.contains(url("good") + " stable/main"), "\(policy.output)")

        // An admin's edit of the source survives the upgrade (a conffile).
        let edited = sources + "# kept by the admin\n"
        try Data(edited.utf8).write(to: URL(fileURLWithPath: root(sourcesPath)))

        let second = try await ReleaseBinaries.package(inputs.arguments(version: "2.0.0", extra: apt))
        try #require(second.status == 0, "\(second.errorOutput)")
        // Phased: published to 0 % of machines. apt 2.6 (Phased-Update-Percentage since
        // 2.1.16) applies phasing on a machine with an ID (`/etc/machine-id`, which every
        // systemd device has; the bare root has none, so `APT::Machine-ID` stands in): its
        // policy says "(phased 0%)" and `upgrade` keeps the package back; at 100 % it upgrades.
        let published = try await Self.repo([
            "add", inputs.tmp("dist/" + PackageInputs.debName("2.0.0")), "--repo", www + "/good", "--suite", "stable", "--gpg-key", key.secret,
            "--phase", "0",
        ])
        try #require(published.status == 0, "\(published.errorOutput)")
        #expect(try await Self.repo(["list", "--repo", www + "/good"]).output.contains("\t2.0.0\t\(PackageInputs.architecture)\tphased 0%\n"))
        #expect(try await root.apt(["update"]).status == 0)
        let shown = try await root.run(["apt-cache", "show", "\(pkg)=2.0.0"])
        #expect(shown.output.contains("Phased-Update-Percentage: 0\n"), "\(shown.output)\(shown.errorOutput)")
        let machine = ["-o", "APT::Machine-ID=5f1c0ffee5f1c0ffee5f1c0ffee5f1c0"]
        let policy0 = try await root.run(["apt-cache", "policy", pkg] + machine)
        #expect(policy0.output.contains("2.0.0 500 (phased 0%)"), "\(policy0.output)")
        let deferred = try await root.apt(machine + ["upgrade"])
        #expect(
            deferred.status == 0 && deferred.output.contains("have been kept back") && deferred.output.contains("0 upgraded"),
            "\(deferred.output)\(deferred.errorOutput)")
        #expect(try await root.installedVersion(pkg) == "1.0.0")
        let everyone = try await Self.repo(["phase", pkg, "100", "--repo", www + "/good", "--suite", "stable", "--gpg-key", key.secret])
        #expect(
            everyone.status == 0 && everyone.output.contains("phased \(pkg) 2.0.0 (\(PackageInputs.architecture)) in suite stable at 100%"),
            "\(everyone.output)\(everyone.errorOutput)")
        #expect(
            try await Self.repo(["phase", "absent-pkg", "50", "--repo", www + "/good", "--suite", "stable", "--gpg-key", key.secret]).status == 66)
        #expect(try await root.apt(["update"]).status == 0)
        // unattended-upgrades' own run (2.9.1, bookworm's) moves it, allowed by the Release's
        // Origin as an admin allows it (unattended-upgrade(8), Origins-Pattern).
        try Data("Unattended-Upgrade::Origins-Pattern { \"origin=clientctl,suite=stable\"; };\n".utf8).write(
            to: URL(fileURLWithPath: root("etc/apt/apt.conf.d/51clientctl-test")))
        let upgrade = try await root.run(["unattended-upgrade", "-d"])
        let said = upgrade.output + upgrade.errorOutput
        #expect(upgrade.status == 0 && said.contains("Packages that will be upgraded: \(pkg)") && said.contains("All upgrades installed"), "\(said)")
        #expect(try await root.installedVersion(pkg) == "2.0.0")
        #expect(try String(contentsOfFile: root(sourcesPath), encoding: .utf8) == edited, "the admin's edit is kept")

        // Purge removes the source and the keyring.
        let purge = try await root.apt(["purge", pkg])
        #expect(purge.status == 0, "\(purge.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: root(sourcesPath)) && !FileManager.default.fileExists(atPath: root(keyringPath)))

        // piuparts, Debian's own package test, on a copy of the root it makes from it
        // (--existing-chroot): the .deb installed and purged, then 1.0.0 installed from the
        // repository (a suite of its own: piuparts reads "stable" as a Debian release),
        // upgraded to 2.0.0 and purged; it fails on a maintainer script's error and on any
        // file left behind. Its chroot trusts the archive key for its own sources.list. In a
        // mount namespace of its own, so a killed run leaves no mount behind.
        let oldSuite = try await Self.repo(["add", deb, "--repo", www + "/good", "--suite", "piuparts", "--gpg-key", key.secret])
        try #require(oldSuite.status == 0, "\(oldSuite.errorOutput)")
        try FileManager.default.copyItem(atPath: dearmored, toPath: root("etc/apt/trusted.gpg.d/clientctl-piuparts.gpg"))
        let piuparts = try await Subprocess.run(
            "unshare",
            [
                "--mount", "--propagation", "private", "/usr/sbin/piuparts", "--existing-chroot", root.path, "--distribution", "piuparts",
                "--mirror", url("good"), "--no-eatmydata", inputs.tmp("dist/" + PackageInputs.debName("2.0.0")),
            ], timeout: .seconds(900))
        let verdict = piuparts.output.split(separator: "\n").filter { $0.contains("PASS:") || $0.contains("FAIL") || $0.contains("ERROR:") }
        #expect(
            piuparts.status == 0 && piuparts.output.contains("PASS: Installation, upgrade and purging tests.")
                && piuparts.output.contains("PASS: All tests."),
            "piuparts exited \(piuparts.status): \(verdict.joined(separator: "\n"))\n\(piuparts.output.suffix(4000))\(piuparts.errorOutput.suffix(2000))"
        )
    }

    /// `repo push` to a real S3 server (SeaweedFS), judged by apt reading the store: the
    /// package's own source names the bucket's URL, apt installs and upgrades from it, pool
    /// files are cached forever and the indexes briefly, a push again uploads nothing, and a
    /// pool file the store holds with other bytes is refused before any index changes.
    @Test func aRepositoryPushedToS3IsWhatAptInstallsFrom() async throws {
        try #require(getuid() == 0, "a Debian root is extracted with its owners and entered with bwrap as root")
        let inputs = try PackageInputs("apt-push")
        let s3 = try await SeaweedS3.shared()
        let area = s3.freshArea("apt")
        let aptURL = "\(s3.endpoint)/\(area)/apt"
        let key = try await ArchiveKey.make(in: inputs.tmp.path, name: "archive")
        let apt = ["--apt-repo", aptURL, "--apt-suite", "stable", "--apt-key", key.publicKey]
        let repo = inputs.tmp("apt")
        let pkg = PackageInputs.package
        let push = { (folder: String) in
            try await ClientctlBinary.run(
                ["repo", "push", "--repo", folder, "s3://\(area)/apt", "--endpoint", s3.endpoint], environment: s3.environment)
        }

        let first = try await ReleaseBinaries.package(inputs.arguments(version: "1.0.0", extra: apt))
        try #require(first.status == 0, "\(first.errorOutput)")
        let deb = inputs.tmp("dist/" + PackageInputs.debName("1.0.0"))
        let added = try await Self.repo(["add", deb, "--repo", repo, "--suite", "stable", "--gpg-key", key.secret])
        try #require(added.status == 0, "\(added.errorOutput)")
        let pushed = try await push(repo)
        #expect(
            pushed.status == 0 && pushed.output.hasPrefix("pushed stable of \(repo) to s3://\(area)/apt: "), "\(pushed.output)\(pushed.errorOutput)")
        let pool = try #require(FileManager.default.subpaths(atPath: repo + "/pool")?.first { $0.hasSuffix(".deb") })
        let object = try await s3.head("\(area)/apt/pool/\(pool)")
        #expect(object.status == 200 && object.headers["cache-control"] == "public, max-age=31536000, immutable", "\(object.headers)")
        #expect(object.headers["content-type"] == "application/vnd.debian.binary-package")
        let inRelease = try await s3.get("\(area)/apt/dists/stable/InRelease")
        #expect(inRelease.body == FileManager.default.contents(atPath: repo + "/dists/stable/InRelease"), "the signed InRelease as repo signed it")
        #expect(try await s3.head("\(area)/apt/dists/stable/InRelease").headers["cache-control"] == "public, max-age=60")
        for hidden in ["conf/clientctl.json", "conf/distributions", "db/packages.db"] {
            #expect(try await s3.head("\(area)/apt/\(hidden)").status == 404, "\(hidden) is reprepro's own, never pushed")
        }
        let again = try await push(repo)
        #expect(again.status == 0 && again.output == "unchanged: s3://\(area)/apt already holds stable as \(repo) has them\n", "\(again.output)")

        // Other bytes under a pool file's name: refused, and the store's InRelease is as it was.
        let other = inputs.tmp("apt-other")
        try #require(try await Subprocess.run("cp", ["-a", repo, other]).status == 0)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: other + "/pool/" + pool))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("x".utf8))
        try handle.close()
        try Data("Origin: changed\n".utf8).write(to: URL(fileURLWithPath: other + "/dists/stable/InRelease"))
        let refused = try await push(other)
        #expect(refused.status == 65 && refused.errorOutput.contains("exists with other bytes"), "\(refused.status) \(refused.errorOutput)")
        #expect(try await s3.get("\(area)/apt/dists/stable/InRelease").body == inRelease.body, "no index written after the refusal")
        let missing = try await push(inputs.tmp("nowhere/apt"))
        #expect(missing.status == 66 && missing.errorOutput.contains("no such apt repository"), "\(missing.status) \(missing.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: inputs.tmp("nowhere")), "nothing is made for a missing repository")
        let notOurs = try await push(inputs.tmp("dist"))
        #expect(
            notOurs.status == 73 && notOurs.errorOutput.contains("not a repository clientctl repo made"), "\(notOurs.status) \(notOurs.errorOutput)")

        // apt itself, through the source the package ships: install, then an upgrade pushed.
        let depends = try await Subprocess.run("dpkg-deb", ["--field", deb, "Depends"])
        let names = depends.output.split(separator: ",").compactMap { $0.split(separator: "|").first?.split(separator: " ").first.map(String.init) }
        let root = try await DebianRoot.make(in: inputs.tmp("debian"), including: names + ["unattended-upgrades"])
        try FileManager.default.copyItem(atPath: deb, toPath: root("tmp/" + PackageInputs.debName("1.0.0")))
        let installed = try await root.apt(["install", "/tmp/" + PackageInputs.debName("1.0.0")])
        try #require(installed.status == 0, "\(installed.output)\(installed.errorOutput)")
        let update = try await root.apt(["update"])
        #expect(update.status == 0 && !update.errorOutput.contains("W:") && !update.errorOutput.contains("E:"), "\(update.errorOutput)")
        #expect(try await root.run(["apt-cache", "policy", pkg]).output.contains(aptURL + " stable/main"))

        let second = try await ReleaseBinaries.package(inputs.arguments(version: "2.0.0", extra: apt))
        try #require(second.status == 0, "\(second.errorOutput)")
        let published = try await Self.repo(
            ["add", inputs.tmp("dist/" + PackageInputs.debName("2.0.0")), "--repo", repo, "--suite", "stable", "--gpg-key", key.secret])
        try #require(published.status == 0, "\(published.errorOutput)")
        #expect(try await root.apt(["update"]).status == 0)
        #expect(try await root.apt(["upgrade"]).output.contains("0 upgraded"), "before the push, apt sees no new version")
        let next = try await push(repo)
        #expect(next.status == 0, "\(next.errorOutput)")
        #expect(try await root.apt(["update"]).status == 0)
        let upgrade = try await root.apt(["upgrade"])
        #expect(upgrade.status == 0 && upgrade.output.contains("1 upgraded"), "\(upgrade.output)\(upgrade.errorOutput)")
        #expect(try await root.installedVersion(pkg) == "2.0.0")
    }

    /// `clientctl repo ARGUMENTS`; with `faked`, under `faketime` that far from now.
    static func repo(_ arguments: [String], faked: String? = nil) async throws -> Subprocess.Result {
        guard let faked else { return try await ClientctlBinary.run(["repo"] + arguments) }
        return try await Subprocess.run(
            "faketime", ["-f", faked, ClientctlBinary.path, "repo"] + arguments, environment: ["FAKETIME_DONT_FAKE_MONOTONIC": "1"])
    }
}
