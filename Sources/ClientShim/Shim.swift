import Foundation

/// The `window.WebAppLocalServer` shim injected into every served index.html (docs/serving.md#the-shim).
///
/// It gives pages the Cordova plugin's API unchanged — `startupDidComplete(cb)`,
/// `checkForUpdates(cb)`, `onNewVersionReady(cb)`, `switchToPendingVersion(cb, errCb)`,
/// `onError(cb)`, `localFileSystemUrl()` — over the backend the host chose, plus clientctl's
/// own: `holdUpdate(seconds)`, `holdDownloads(seconds)` (docs/download-policy.md#holds), and
/// `getChannel()` / `setChannel(name)` for testers moving a device between the channels its
/// trust root allows (docs/targeting.md#choosing-a-channel), and `reportProblem(kind)`. Under
/// `serve` it also counts the top window's uncaught errors and unhandled rejections after the
/// acknowledgement and posts them, coalesced, to `problems` (docs/page-errors.md).
public struct Shim: Sendable, Equatable {
    /// Where the shim sends its calls.
    public enum Backend: String, Sendable, Codable, CaseIterable {
        /// `clientctl serve`: HTTP on the page's own origin under `/__clientctl/`
        /// (POST startup-complete, check, switch-to-pending; GET status; SSE events).
        case serve
        /// A Capacitor plugin: `Capacitor.Plugins.<pluginName>` methods of the same names,
        /// events through `addListener("updateAvailable" | "error", fn)`.
        case capacitor
        /// The native shell (`clientctl-shell`): `window.webkit.messageHandlers.clientctl`
        /// with replies; events arrive by script evaluation. The `serve` backend uses it
        /// too whenever that handler exists, so one organized page runs under both hosts.
        case webkit
    }

    /// The attribute that marks the injected `<script>`; its presence makes injection a no-op.
    public static let marker = "data-clientctl-shim"

    public var backend: Backend
    /// The Capacitor plugin's name (capacitor backend only).
    public var pluginName: String

    public init(backend: Backend = .serve, pluginName: String = "WebAppLocalServer") {
        self.backend = backend
        self.pluginName = pluginName
    }

    /// The complete `<script …>…</script>` element to inject, for a page of no known version.
    public var scriptElement: String { scriptElement(version: nil) }

    /// The `<script>` element for a page of `version`: the shim names that version on
    /// `startup-complete`, `switch-to-pending` and `check`, so the agent can refuse an
    /// acknowledgement from a page of another version (an old tab). A version with
    /// characters outside SemVer's and Meteor's alphabet is left out.
    public func scriptElement(version: String?) -> String {
        var config = "{\"backend\":\"\(backend.rawValue)\",\"plugin\":\"\(Self.jsSafe(pluginName))\",\"base\":\"/__clientctl/\""
        if let version, Self.isPlainVersion(version) { config += ",\"version\":\"\(version)\"" }
        config += "}"
        return "<script \(Self.marker)=\"\(backend.rawValue)\">(" + ShimScript.source + ")(" + config + ");</script>"
    }

    /// SemVer and Meteor version characters only: safe inside a JS string and a `<script>`.
    public static func isPlainVersion(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.count <= 128
            && s.unicodeScalars.allSatisfy { c in
                (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || (c >= "0" && c <= "9") || c == "." || c == "-" || c == "+" || c == "_"
            }
    }

    /// Keeps only characters that cannot end a JS string or a `<script>` element.
    private static func jsSafe(_ s: String) -> String {
        String(
            s.unicodeScalars.filter { c in
                (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || (c >= "0" && c <= "9") || c == "_" || c == "$"
            })
    }
}
