import ClientUpdater
import DeviceSetup
import Foundation

/// A packaged app's template folder as `clientctl package` lays it out under
/// `/usr/share/PKG`: `device-template.json`, the seed in `www/`, a key in `trust/`.
public enum TemplateFolder {
    /// Writes the folder; `edit` changes the template's JSON object before it is written.
    public static func make(
        at folder: String, shell: String = "1.0.0", manifestURL: String = "http://127.0.0.1:9/stable/manifest.json",
        app: String = "com.example.notes", edit: (inout [String: Any]) -> Void = { _ in }
    ) throws {
        try FileManager.default.createDirectory(atPath: folder + "/www", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/trust", withIntermediateDirectories: true)
        try Data("<!doctype html><p>seed \(shell)</p>\n".utf8).write(to: URL(fileURLWithPath: folder + "/www/index.html"))
        try ReleaseFolder.testPublicKeyPEM().write(toFile: folder + "/trust/key-1.pub.pem", atomically: true, encoding: .utf8)
        let template = DeviceTemplate(
            app: app, name: "Notes", channel: "stable", manifestURL: manifestURL, trust: ["trust/key-1.pub.pem"], trustRoot: nil,
            shellVersion: shell, checkIntervalSeconds: 600)
        guard var object = try JSONSerialization.jsonObject(with: template.encoded()) as? [String: Any] else {
            throw HarnessError("a template that is not a JSON object")
        }
        edit(&object)
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: folder + "/" + DeviceTemplate.fileName))
    }
}
