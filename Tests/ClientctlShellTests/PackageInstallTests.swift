import Foundation
import TestSupport
import Testing

/// Issue 27, tested as a device owner would: `apt-get install ./PKG.deb`, the app run by an
/// unprivileged user in a real window (Xvfb), an update from a loopback channel, a package
/// upgrade that is the root's shell update, and a purge. The package and the user are
/// removed again whatever happens, and what a killed run left is removed at the next.
@Suite(.serialized) struct PackageInstallTests {
    @Test func aDeviceOwnerInstallsRunsUpdatesUpgradesAndPurgesTheApp() async throws {
        try #require(getuid() == 0, "installing a package and adding a user need root (CI runs as root)")
        let inputs = try PackageInputs("package-install")
        try FileManager.default.createDirectory(atPath: inputs.tmp("releases"), withIntermediateDirectories: true)
        let server = try LoopbackHTTPServer(handler: LoopbackHTTPServer.folder(inputs.tmp("releases")))
        defer { server.stop() }
        let manifestURL = server.url("/stable/manifest.json").absoluteString
        let user = "cctl\(getpid() % 100_000)"
        let home = "/home/" + user
        let root = home + "/.local/share/" + PackageInputs.app
        let pkg = PackageInputs.package

        let first = try await ReleaseBinaries.package(inputs.arguments(version: "1.0.0", manifestURL: manifestURL))
        try #require(first.status == 0, "\(first.errorOutput)")
        await Self.removeLeftovers()
        try await Self.withCleanup(user: user) {
            try await Self.apt(["install", "-y", "./" + PackageInputs.debName("1.0.0")], in: inputs.tmp("dist"))
            #expect(FileManager.default.isExecutableFile(atPath: "/usr/bin/" + pkg))
            // Both units pass systemd's own check once the programs they start are there.
            for unit in ["/lib/systemd/system/\(pkg)-serve.service", "/usr/lib/systemd/user/\(pkg).service"] {
                let verify = try await Subprocess.run("systemd-analyze", ["verify", "--man=no", unit])
                #expect(verify.status == 0 && verify.errorOutput.isEmpty, "\(unit): \(verify.errorOutput)")
            }
            try await Self.must("useradd", ["--create-home", "--shell", "/bin/sh", "--comment", Self.userMark + String(getpid()), user])
            try await Self.publish(inputs, "1.1.0", minShell: "1.0.0")

            // First start: the root is made from the template, the seed shows, and the launch
            // check (once the seed is on screen) downloads 1.1.0.
            let run1 = try await Self.runApp(user: user)
            #expect(run1.stderr.contains("created \(root) from /usr/share/\(pkg)"), "\(run1.summary)")
            #expect(run1.events.contains { $0.event == "started" && $0.version == "embedded" }, "\(run1.summary)")
            #expect(run1.events.contains { $0.event == "firstPaint" }, "\(run1.summary)")
            #expect(run1.events.contains { $0.event == "updateAvailable" && $0.version == "1.1.0" }, "\(run1.summary)")
            var st = stat()
            let owner = try Self.uid(user)
            #expect(stat(root + "/config.json", &st) == 0 && st.st_uid == owner, "the root is the user's own")

            // Next start: 1.1.0 on trial, acknowledged by its page, committed.
            let run2 = try await Self.runApp(user: user)
            #expect(run2.watchdog("committed", "1.1.0") != nil, "\(run2.summary)")

            // A release for shell 2.0.0 is not for this shell; the package upgrade makes it so.
            try await Self.publish(inputs, "2.0.0", minShell: "2.0.0")
            let second = try await ReleaseBinaries.package(inputs.arguments(version: "2.0.0", manifestURL: manifestURL))
            try #require(second.status == 0, "\(second.errorOutput)")
            try await Self.apt(["install", "-y", "./" + PackageInputs.debName("2.0.0")], in: inputs.tmp("dist"))
            let run3 = try await Self.runApp(user: user)
            #expect(run3.stderr.contains("shell 1.0.0 → 2.0.0"), "\(run3.summary)")
            #expect(run3.events.contains { $0.event == "started" && $0.version == "embedded" }, "1.1.0 was built for shell 1.0.0: \(run3.summary)")
            #expect(run3.events.contains { $0.event == "updateAvailable" && $0.version == "2.0.0" }, "\(run3.summary)")
            let run4 = try await Self.runApp(user: user)
            #expect(run4.watchdog("committed", "2.0.0") != nil, "\(run4.summary)")

            // Purge removes the package; the user's root stays, like a browser profile.
            try await Self.apt(["purge", "-y", pkg], in: inputs.tmp("dist"))
            #expect(!FileManager.default.fileExists(atPath: "/usr/bin/" + pkg) && !FileManager.default.fileExists(atPath: "/usr/share/" + pkg))
            #expect(FileManager.default.fileExists(atPath: root + "/config.json"), "purge leaves the user's root")
        }
    }

    /// The app as the user starts it from a menu: /usr/bin/PKG in a virtual X display, with
    /// `--events` to read what happened.
    static func runApp(user: String) async throws -> ShellHarness.Run {
        let result = try await Subprocess.run(
            "runuser",
            [
                "-u", user, "--", "env", "-u", "XDG_DATA_HOME", "-u", "CLIENTCTL_ROOT", "HOME=/home/" + user, "xvfb-run", "-a", "-s",
                "-screen 0 1280x1024x24", "/usr/bin/" + PackageInputs.package, "--events", "--exit-after", "12",
            ], directory: "/")
        let decoder = JSONDecoder()
        let events = result.output.split(separator: "\n").compactMap { try? decoder.decode(ShellHarness.Event.self, from: Data($0.utf8)) }
        return ShellHarness.Run(status: result.status, events: events, stderr: result.errorOutput)
    }

    static func publish(_ inputs: PackageInputs, _ version: String, minShell: String) async throws {
        let build = inputs.tmp("release-\(version)")
        try FileManager.default.createDirectory(atPath: build, withIntermediateDirectories: true)
        try ReleaseRig.page(version: version, script: ReleaseRig.acknowledging).write(to: URL(fileURLWithPath: build + "/index.html"))
        try await must(
            ClientctlBinary.path,
            [
                "publish", build, "--app", PackageInputs.app, "--channel", "stable", "--version", version, "--min-shell", minShell,
                "--key", ClientctlBinary.packagePath("Keys/test-signing.pem"), "--out", inputs.tmp("releases"),
            ])
    }

    static func apt(_ arguments: [String], in directory: String) async throws {
        try await must("apt-get", ["-q"] + arguments, environment: ["DEBIAN_FRONTEND": "noninteractive"], directory: directory)
    }

    @discardableResult
    static func must(
        _ tool: String, _ arguments: [String], environment: [String: String] = [:], directory: String? = nil
    ) async throws -> Subprocess.Result {
        let result = try await Subprocess.run(tool, arguments, environment: environment, directory: directory)
        guard result.status == 0 else {
            throw HarnessError("\(tool) \(arguments.joined(separator: " ")) exited \(result.status): \(result.errorOutput)")
        }
        return result
    }

    static func uid(_ user: String) throws -> uid_t {
        guard let entry = getpwnam(user) else { throw HarnessError("no user \(user)") }
        return entry.pointee.pw_uid
    }

    /// The comment of the users this test adds, followed by the test process's pid.
    static let userMark = "clientctl package test, pid "

    /// Removes what a run killed before its cleanup left (SIGKILL, Scripts/test's time
    /// limit): the package, and the users this test added whose test process is gone.
    static func removeLeftovers() async {
        let passwd = (try? String(contentsOfFile: "/etc/passwd", encoding: .utf8)) ?? ""
        for line in passwd.split(separator: "\n") {
            let fields = line.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count > 4, fields[4].hasPrefix(userMark),
                let pid = Int32(fields[4].dropFirst(userMark.count)),
                kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            _ = try? await Subprocess.run("pkill", ["-KILL", "-u", String(fields[0])])
            _ = try? await Subprocess.run("userdel", ["--remove", String(fields[0])])
        }
        if (try? await Subprocess.run("dpkg-query", ["-W", PackageInputs.package]))?.status == 0 { await purge() }
    }

    /// `apt-get purge` of the package, whatever state it is in.
    static func purge() async {
        _ = try? await Subprocess.run(
            "apt-get", ["-q", "purge", "-y", PackageInputs.package], environment: ["DEBIAN_FRONTEND": "noninteractive"])
    }

    /// Runs `body`, then purges the package and removes the user whatever happened.
    static func withCleanup(user: String, _ body: () async throws -> Void) async throws {
        var failure: (any Error)?
        do { try await body() } catch { failure = error }
        await purge()
        _ = try? await Subprocess.run("userdel", ["--remove", user])
        if let failure { throw failure }
    }
}
