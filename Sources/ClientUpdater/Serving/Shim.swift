import Foundation

/// The `window.WebAppLocalServer` shim injected into every served index.html (DESIGN §5).
///
/// It gives pages the Cordova plugin's API unchanged — `startupDidComplete(cb)`,
/// `checkForUpdates(cb)`, `onNewVersionReady(cb)`, `switchToPendingVersion(cb, errCb)`,
/// `onError(cb)`, `localFileSystemUrl()` — over the backend the host chose.
public struct Shim: Sendable, Equatable {
    /// Where the shim sends its calls.
    public enum Backend: String, Sendable, Codable, CaseIterable {
        /// `clientctl serve`: HTTP on the page's own origin under `/__clientctl/`
        /// (POST startup-complete, check, switch-to-pending; GET status; SSE events).
        case serve
        /// A Capacitor plugin: `Capacitor.Plugins.<pluginName>` methods of the same names,
        /// events through `addListener("updateAvailable" | "error", fn)`.
        case capacitor
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

    /// The complete `<script …>…</script>` element to inject.
    public var scriptElement: String {
        let config = "{\"backend\":\"\(backend.rawValue)\",\"plugin\":\"\(Self.jsSafe(pluginName))\",\"base\":\"/__clientctl/\"}"
        return "<script \(Self.marker)=\"\(backend.rawValue)\">(" + ShimScript.source + ")(" + config + ");</script>"
    }

    /// `html` with the shim as the first element of `<head>` (a `<head>` is created when
    /// there is none). Already-shimmed documents are returned unchanged; everything
    /// outside the inserted bytes stays byte-identical.
    public func inject(into html: Data) -> Data {
        HTMLHeadInjector.inject(Data(scriptElement.utf8), into: html, unlessContains: Data(Self.marker.utf8))
    }

    /// Keeps only characters that cannot end a JS string or a `<script>` element.
    private static func jsSafe(_ s: String) -> String {
        String(s.unicodeScalars.filter { c in
            (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || (c >= "0" && c <= "9") || c == "_" || c == "$"
        })
    }
}
