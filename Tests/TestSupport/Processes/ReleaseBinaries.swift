import Foundation

/// The self-contained `clientctl` and `clientctl-shell` of `Scripts/build-release` (its last
/// line names their folder; `CLIENTCTL_RELEASE_DIR` overrides it), for the tests that
/// package them and run them as a device would. Scripts/test builds them before `swift test`.
public enum ReleaseBinaries {
    /// The folder holding both programs.
    public static var folder: String {
        ProcessInfo.processInfo.environment["CLIENTCTL_RELEASE_DIR"] ?? ClientctlBinary.packagePath(".build-release/dist")
    }

    /// The release `clientctl`, or a failure saying how to build it.
    public static func clientctl() throws -> String {
        let path = folder + "/clientctl"
        guard FileManager.default.isExecutableFile(atPath: path), FileManager.default.isExecutableFile(atPath: folder + "/clientctl-shell") else {
            throw HarnessError("no self-contained binaries in \(folder): run Scripts/build-release first (Scripts/test does)")
        }
        return path
    }

    /// `clientctl arguments…` of the release build.
    @discardableResult
    public static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> Subprocess.Result {
        try await Subprocess.run(try clientctl(), arguments, environment: environment)
    }
}
