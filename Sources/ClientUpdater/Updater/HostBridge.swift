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

/// Reports download progress from inside a channel's `check` to whoever started it.
///
/// Channels call ``report(version:completed:total:)`` (or read ``handler``) while
/// downloading; the updater binds a handler for the duration of a check that yields each
/// report to its event stream synchronously, so reports arrive in order.
package enum DownloadProgress {
    /// Receives `(version, completedBytes, totalBytes)`.
    package typealias Handler = @Sendable (String, Int64, Int64?) -> Void

    /// The task-local holds a class, not the optional closure itself: a `@TaskLocal` of an
    /// optional function type crashes optimized builds in `swift_task_localValuePush`
    /// (Swift 6.3, Linux; reproduced in a two-module package).
    final class Box: Sendable {
        let handler: Handler
        init(_ handler: @escaping Handler) { self.handler = handler }
    }
    @TaskLocal static var box: Box?

    /// The handler bound for the current task, if any.
    package static var handler: Handler? { box?.handler }

    /// Runs `operation` with `handler` receiving progress reports (the updater's binding,
    /// which feeds ``UpdaterEvent/downloadProgress(version:completed:total:)``; hosts read
    /// ``Updater/events(bufferingPolicy:)``).
    package static func withHandler<R>(
        _ handler: Handler?, isolation: isolated (any Actor)? = #isolation,
        operation: () async throws -> R
    ) async rethrows -> R {
        try await $box.withValue(handler.map { Box($0) }, operation: operation, isolation: isolation)
    }

    /// Tells the current handler, if any, how far the download of `version` is.
    package static func report(version: String, completed: Int64, total: Int64?) {
        handler?(version, completed, total)
    }
}
