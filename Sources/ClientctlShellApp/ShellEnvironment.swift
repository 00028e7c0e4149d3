internal import CWebKitGTK
import Foundation

/// Keeps what GTK, GLib, GStreamer and WebKit's processes write for themselves under the
/// root (docs/device-layout.md: nothing is written outside it). Set before GTK starts, so
/// the shell and every process WebKit starts inherit it:
/// - `XDG_CACHE_HOME` is `ROOT/shell/xdg-cache`: GStreamer's plugin registry, Mesa's shader
///   cache, fontconfig's cache and dconf's fallback runtime folder (no `XDG_RUNTIME_DIR`)
///   went to `~/.cache`;
/// - `GSETTINGS_BACKEND=memory`: GTK's own settings (a file chooser's size and folder)
///   are kept in memory, never written to `~/.config/dconf`.
/// A link opened in the desktop's browser (outside kiosk mode) gets the values the shell
/// was started with, not these.
enum ShellEnvironment {
    /// The variables the shell sets, with the values it was started with (nil: unset).
    nonisolated(unsafe) private static var original: [(name: String, value: String?)] = []

    /// Sets the variables for `root` (main thread, before `gtk_init`).
    static func keepUnderRoot(_ root: String) {
        let cache = root + "/shell/xdg-cache"
        try? FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let wanted = [("XDG_CACHE_HOME", cache), ("GSETTINGS_BACKEND", "memory")]
        original = wanted.map { name, _ in (name, ProcessInfo.processInfo.environment[name]) }
        for (name, value) in wanted { setenv(name, value, 1) }
    }

    /// Opens `uri` in the desktop's default handler with the environment the shell was
    /// started with (main thread).
    static func openExternally(_ uri: String) {
        let context = g_app_launch_context_new()
        for (name, value) in original {
            if let value { g_app_launch_context_setenv(context, name, value) } else { g_app_launch_context_unsetenv(context, name) }
        }
        g_app_info_launch_default_for_uri(uri, context, nil)
        g_object_unref(context)
    }
}
