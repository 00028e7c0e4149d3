import ClientUpdater
import Foundation

/// A release folder, a signing key and a device root, all driven through the built
/// `clientctl` as a user would: keygen, publish, init, install, status.
public struct ReleaseRig: Sendable {
    public let tmp: TemporaryDirectory
    public let app = "com.example.pipeline"
    public var root: String { tmp("device") }
    public var releases: String { tmp("releases") }
    public var key: String { tmp("keys/release") }

    /// - Parameter initArguments: more `init` flags for the device root (`--apply-window …`).
    public init(startupTimeout: Double = 10, label: String = "pipeline", initArguments: [String] = []) async throws {
        tmp = try TemporaryDirectory(label)
        try FileManager.default.createDirectory(atPath: tmp("keys"), withIntermediateDirectories: true)
        try await run(["keygen", "--out", key])
        try FileManager.default.createDirectory(atPath: tmp("seed"), withIntermediateDirectories: true)
        try Self.page(version: "0.0.1", script: "").write(to: URL(fileURLWithPath: tmp("seed/index.html")))
        try await run(
            [
                "init", "--root", root, "--app", app, "--channel", "stable",
                "--manifest-url", "file://" + releases + "/stable/manifest.json",
                "--trust", key + ".pub.pem", "--shell-version", "1.0.0", "--embedded", tmp("seed"),
                "--startup-timeout", String(startupTimeout),
            ] + initArguments)
    }

    /// A page that shows its version and runs `script` (after the shim, which is first in <head>).
    public static func page(version: String, script: String) -> Data {
        Data(
            """
            <!doctype html>
            <html><head><meta charset="utf-8"><title>v\(version)</title></head>
            <body><p id="version">\(version)</p><p id="acked">no</p>
            <script>\(script)</script></body></html>

            """.utf8)
    }

    /// A page that reports startup complete (and marks the DOM when the server answered).
    public static let acknowledging = """
        WebAppLocalServer.startupDidComplete(function () { document.getElementById('acked').textContent = 'yes'; });
        """
    /// A page that throws before reporting startup complete.
    public static let broken = """
        throw new Error('broken build'); WebAppLocalServer.startupDidComplete();
        """

    /// Builds a client folder (plus `extra` files, by relative path, folders made as needed) and publishes it as `version`.
    public func publish(_ version: String, script: String, extra: [String: Data] = [:], arguments: [String] = []) async throws {
        let dir = tmp("build-\(version)")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Self.page(version: version, script: script).write(to: URL(fileURLWithPath: dir + "/index.html"))
        try Data("body { color: #123; }\n".utf8).write(to: URL(fileURLWithPath: dir + "/style.css"))
        for (path, bytes) in extra {
            let file = dir + "/" + path
            try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try bytes.write(to: URL(fileURLWithPath: file))
        }
        try await run(
            [
                "publish", dir, "--app", app, "--channel", "stable", "--version", version,
                "--min-shell", "1.0.0", "--key", key + ".pem", "--out", releases,
            ] + arguments)
    }

    @discardableResult
    public func run(_ arguments: [String]) async throws -> Subprocess.Result {
        let result = try await ClientctlBinary.run(arguments)
        guard result.status == 0 else {
            throw HarnessError("clientctl \(arguments.joined(separator: " ")) exited \(result.status): \(result.errorOutput)")
        }
        return result
    }

    /// `clientctl status --json`.
    public func status() async throws -> StatusReport {
        let result = try await run(["status", "--root", root, "--json"])
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(StatusReport.self, from: result.stdout)
    }

    /// Polls `status --json` until `done` holds (real time: a real watchdog runs in serve).
    ///
    /// `status` is asked again when the root's files changed (a state written, a status of
    /// the apply driver, a report), and at least once a second for what a status computes
    /// from the time alone: not ten processes a second for as long as the wait lasts.
    public func waitForStatus(timeout: Double = 20, _ done: (StatusReport) -> Bool) async throws -> StatusReport {
        let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
        let watch = FolderWatch(root)
        var last = try await status()
        while !done(last) {
            guard ContinuousClock.now < deadline else { throw HarnessError("status never reached the expected state: \(last)") }
            if let watch {
                try await watch.next(within: min(.seconds(1), deadline - ContinuousClock.now))
            } else {
                try await Task.sleep(for: .milliseconds(100))
            }
            last = try await status()
        }
        return last
    }
}
