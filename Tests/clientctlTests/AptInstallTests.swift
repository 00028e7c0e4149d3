import Foundation
import TestSupport
import Testing

/// Issue 38, judged by apt itself on a real Debian 12 root (DebianRoot: mmdebstrap, cached):
/// a package made with `--apt-repo` is installed by hand once, as a vendor's first .deb is
/// (Chrome's way), then apt keeps it current from the repository `clientctl repo` signs,
/// trusting the package's own keyring for that source only; a repository signed by another
/// key, a tampered InRelease and a Release past its Valid-Until are refused by apt with its
/// own errors, and nothing is installed from them.
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
        let first = try await ReleaseBinaries.run(inputs.arguments(version: "1.0.0", extra: apt))
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
        let root = try await DebianRoot.make(in: inputs.tmp("debian"), including: names)

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

        let second = try await ReleaseBinaries.run(inputs.arguments(version: "2.0.0", extra: apt))
        try #require(second.status == 0, "\(second.errorOutput)")
        let published = try await Self.repo(
            ["add", inputs.tmp("dist/" + PackageInputs.debName("2.0.0")), "--repo", www + "/good", "--suite", "stable", "--gpg-key", key.secret])
        try #require(published.status == 0, "\(published.errorOutput)")
        #expect(try await root.apt(["update"]).status == 0)
        let upgrade = try await root.apt(["upgrade"])
        #expect(upgrade.status == 0 && upgrade.output.contains("1 upgraded"), "\(upgrade.output)\(upgrade.errorOutput)")
        #expect(try await root.installedVersion(pkg) == "2.0.0")
        #expect(try String(contentsOfFile: root(sourcesPath), encoding: .utf8) == edited, "the admin's edit is kept")

        // Purge removes the source and the keyring.
        let purge = try await root.apt(["purge", pkg])
        #expect(purge.status == 0, "\(purge.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: root(sourcesPath)) && !FileManager.default.fileExists(atPath: root(keyringPath)))
    }

    /// `clientctl repo ARGUMENTS`; with `faked`, under `faketime` that far from now.
    static func repo(_ arguments: [String], faked: String? = nil) async throws -> Subprocess.Result {
        guard let faked else { return try await ClientctlBinary.run(["repo"] + arguments) }
        return try await Subprocess.run(
            "faketime", ["-f", faked, ClientctlBinary.path, "repo"] + arguments, environment: ["FAKETIME_DONT_FAKE_MONOTONIC": "1"])
    }
}
