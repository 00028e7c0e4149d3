/// What a host app does for the updater: point its web view (or local server) at a
/// folder and reload. `clientctl serve` implements it with its HTTP server; a Swift
/// host app implements it with its web view.
///
/// The updater calls these one at a time, never concurrently, and never in the middle
/// of another switch.
public protocol HostBridge: Sendable {
    /// Serve files from `path` from now on (an organized `serving/<id>` folder).
    func setServerBasePath(_ path: String) async throws
    /// Reload the web view so that the page comes from the new base path.
    func reload() async throws
}

/// What the updater tells the host as it happens (``Updater/events(bufferingPolicy:)``).
public enum UpdaterEvent: Sendable, Equatable {
    /// A new version is pending: call ``Updater/reload(from:lockWait:)`` to switch (Cordova `onNewVersionReady`).
    case updateAvailable(version: String)
    /// An update check or a switch failed (Cordova `onError`).
    case error(message: String)
    /// Bytes of `version` downloaded so far, and the expected total when known.
    case downloadProgress(version: String, completed: Int64, total: Int64?)
    /// How a check went about an install, in one line (which path a delta update took, or
    /// why it fell back to the full archive); `clientctl install` prints it on stderr.
    case installNote(String)
    /// The watchdog started, committed or failed a trial.
    case watchdog(WatchdogEvent)
    /// `version` (the embedded seed's id when the seed runs) is now served.
    case switched(version: String)
}
