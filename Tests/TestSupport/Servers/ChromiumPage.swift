import Foundation

extension Chromium {
    /// A PNG screenshot of `url` at `width`×`height` CSS pixels (device scale 1), written
    /// to `path`, as headless Chromium renders it.
    /// - Throws: ``ChromiumError`` when `chromium` is not in `PATH`, fails, or writes no file.
    public static func screenshot(_ url: String, to path: String, width: Int = 1100, height: Int = 1400) async throws {
        guard Subprocess.isAvailable("chromium") else {
            throw ChromiumError("chromium is not in PATH: Scripts/test installs it (apt-get install chromium)")
        }
        let profile = NSTemporaryDirectory() + "/chromium-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let result = try await Subprocess.run(
            "chromium",
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + profile, "--hide-scrollbars",
                "--force-device-scale-factor=1", "--window-size=\(width),\(height)", "--screenshot=" + path, url,
            ], gate: gate, timeout: .seconds(180))
        guard result.status == 0, FileManager.default.fileExists(atPath: path) else {
            throw ChromiumError("chromium exited \(result.status) without a screenshot: \(result.errorOutput.suffix(500))")
        }
    }
}
