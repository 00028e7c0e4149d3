import Foundation

/// The built `clientctl` executable and the package's own folders, for tests that run the
/// command line as users do.
public enum ClientctlBinary {
    /// The package root (the folder holding Package.swift), found from this source file by
    /// walking up to the first folder with a `Package.swift`.
    public static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/", !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
            url.deleteLastPathComponent()
        }
        return url.path
    }()

    /// `path` inside the package, e.g. `Fixtures/sample-client`.
    public static func packagePath(_ relative: String) -> String { packageRoot + "/" + relative }

    /// The `clientctl` built next to the test bundle (`.build/debug/clientctl`), or the one
    /// named by `CLIENTCTL_BIN`.
    public static var path: String {
        if let explicit = ProcessInfo.processInfo.environment["CLIENTCTL_BIN"] { return explicit }
        return built("clientctl")
    }

    /// The device program (`clientctl-device`: the device's clientctl and the shell) built
    /// next to the test bundle.
    public static var devicePath: String { built("clientctl-device") }

    /// The `clientctl-shell` built next to the test bundle.
    public static var shellPath: String { built("clientctl-shell") }

    /// The product `name` built next to the test bundle.
    static func built(_ name: String) -> String {
        let bundleDir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var candidates = [bundleDir.appendingPathComponent(name).path]
        // Inside an .xctest bundle directory (macOS) the binary sits beside the bundle.
        candidates.append(bundleDir.deletingLastPathComponent().appendingPathComponent(name).path)
        candidates.append(bundleDir.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(name).path)
        candidates.append(packageRoot + "/.build/debug/" + name)
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[candidates.count - 1]
    }

    /// Runs `clientctl arguments…` and captures its status and output; past `timeout` (a cap
    /// for a run that hangs, never a measure) it is killed and the test fails saying so.
    @discardableResult
    public static func run(
        _ arguments: [String], input: Data? = nil, environment: [String: String] = [:],
        directory: String? = nil, timeout: Duration = .seconds(600)
    ) async throws -> Subprocess.Result {
        try await Subprocess.run(path, arguments, input: input, environment: environment, directory: directory, timeout: timeout)
    }
}
