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
