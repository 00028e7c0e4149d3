import ClientFoundation
import Foundation

/// Debian's headless Chromium, for the real-browser tests (`apt-get install chromium`;
/// `Scripts/test` installs it). Without it those tests fail, saying so: they never skip.
public enum Chromium {
    /// Browsers run two at a time, apart from the queue of other children: a browser test
    /// works inside a trial's startup timeout and must not wait behind `clientctl` runs.
    public static let gate = AsyncGate(limit: 2)

    /// The DOM after the page's scripts (including fetches back to the server) ran.
    /// - Parameter extraArguments: more Chromium switches (e.g. `--host-resolver-rules=…`).
    /// - Throws: ``ChromiumError`` when `chromium` is not in `PATH` or fails.
    public static func dumpDOM(_ url: String, extraArguments: [String] = []) async throws -> String {
        guard Subprocess.isAvailable("chromium") else {
            throw ChromiumError("chromium is not in PATH: Scripts/test installs it (apt-get install chromium)")
        }
        // Headless Chromium under --virtual-time-budget now and then never ends on a loaded
        // machine (it stalled 180 s once in a full CI run while serve answered every other
        // request): a run killed at its deadline is tried once more with a fresh profile.
        // A server that never answers fails both.
        do {
            return try await dumpOnce(url, extraArguments: extraArguments)
        } catch is Subprocess.TimedOut {
            return try await dumpOnce(url, extraArguments: extraArguments)
        }
    }

    static func dumpOnce(_ url: String, extraArguments: [String]) async throws -> String {
        let profile = NSTemporaryDirectory() + "/chromium-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let result = try await Subprocess.run(
            "chromium",
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + profile,
                "--virtual-time-budget=3000",
            ] + extraArguments + ["--dump-dom", url], gate: gate, timeout: .seconds(180))
        guard result.status == 0 else { throw ChromiumError("chromium exited \(result.status): \(result.errorOutput.suffix(500))") }
        return result.output
    }

    /// The text of `<p id="…">` in a dumped DOM.
    public static func text(of id: String, in dom: String) -> String? {
        guard let start = dom.range(of: "<p id=\"\(id)\">") else { return nil }
        let rest = dom[start.upperBound...]
        guard let end = rest.range(of: "</p>") else { return nil }
        return String(rest[..<end.lowerBound]).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Chromium failed to run.
public struct ChromiumError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// A page left open in headless Chromium (a profile of its own) until ``close()``: its
/// scripts keep running, as on a kiosk that nobody touches. The DevTools port keeps the
/// browser from exiting after the first load; nothing connects to it.
public final class OpenChromiumPage: Sendable {
    let process: ChildProcess.Running
    let profile: String

    /// Opens `url`.
    /// - Throws: ``ChromiumError`` when `chromium` is not in `PATH`.
    public init(_ url: String) throws {
        guard Subprocess.isAvailable("chromium") else {
            throw ChromiumError("chromium is not in PATH: Scripts/test installs it (apt-get install chromium)")
        }
        profile = NSTemporaryDirectory() + "/chromium-open-\(UUID().uuidString)"
        process = try ChildProcess(
            "/usr/bin/chromium",
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + profile, "--remote-debugging-port=0",
                "--remote-debugging-address=127.0.0.1", url,
            ], standardOutput: .discard, standardError: .discard
        ).start()
    }

    /// True while the browser runs.
    public var isOpen: Bool { process.isRunning }

    /// Ends the browser (SIGTERM, SIGKILL after 10 s) and removes its profile.
    public func close() {
        _ = process.stop(SIGTERM, within: 10)
        try? FileManager.default.removeItem(atPath: profile)
    }

    deinit {
        process.killIfRunning()
        try? FileManager.default.removeItem(atPath: profile)
    }
}
