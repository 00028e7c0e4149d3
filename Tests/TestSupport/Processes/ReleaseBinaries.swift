import Foundation

/// The self-contained device program of `Scripts/build-release` (`clientctl-device`, and
/// `clientctl-shell` linked to it; `CLIENTCTL_RELEASE_DIR` names their folder), for the tests
/// that package it and run it as a device would. Scripts/test builds it before `swift test`
/// (`Scripts/build-release clientctl-device`: the device side only, so the release build
/// compiles no collector, publishing or packaging code).
public enum ReleaseBinaries {
    /// The folder holding the programs.
    public static var folder: String {
        ProcessInfo.processInfo.environment["CLIENTCTL_RELEASE_DIR"] ?? ClientctlBinary.packagePath(".build-release/dist")
    }

    /// The release `clientctl-device`, or a failure saying how to build it.
    public static func device() throws -> String {
        let path = folder + "/clientctl-device"
        guard FileManager.default.isExecutableFile(atPath: path), FileManager.default.isExecutableFile(atPath: folder + "/clientctl-shell") else {
            throw HarnessError("no self-contained device program in \(folder): run Scripts/build-release first (Scripts/test does)")
        }
        return path
    }

    /// `clientctl package arguments… --device-program DEVICE`: the tests' `clientctl` packages
    /// the release device program, as a build machine's `clientctl` does with the one beside it.
    /// Capped at 30 minutes: `package` runs Debian's dpkg-shlibdeps and dpkg-deb, which took
    /// over 10 minutes beside two other suites on a loaded 2-core machine.
    ///
    /// Without a `--compression` of their own the tests' packages are built with `gzip`
    /// (level 1): xz at level 6, the default, took half an hour of CPU for a suite's packages,
    /// and what the tests judge (contents, fields, installs, upgrades) does not depend on
    /// it. The test that judges the shipped package with lintian asks for the default.
    @discardableResult
    public static func package(_ arguments: [String], environment: [String: String] = [:]) async throws -> Subprocess.Result {
        precondition(arguments.first == "package", "ReleaseBinaries.package runs `clientctl package`")
        let compression = arguments.contains("--compression") ? [] : ["--compression", "gzip"]
        return try await ClientctlBinary.run(
            arguments + compression + ["--device-program", try device()], environment: environment, timeout: .seconds(1800))
    }
}
