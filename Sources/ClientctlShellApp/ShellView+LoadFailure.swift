internal import CWebKitGTK
import Foundation
import Synchronization

/// A load of the app's page that fails in the main frame (its connection refused, reset or
/// cancelled, the network process gone: docs/native-shell.md#a-page-that-dies) is never
/// taken for the app: WebKit's error page is not shown, nothing from that document reaches
/// the engine (no `firstPaint`, no acknowledgement), a `loadFailed` event names the URI and
/// WebKit's message, and the page is loaded again after ``LoadFailureBackoff``'s delay.
/// Called on the GTK main thread; its state is behind a lock all the same, so it is plainly
/// `Sendable`.
final class LoadFailures: Sendable {
    private struct State {
        var documentFailed = false
        var backoff = LoadFailureBackoff()
        var onFailed: @Sendable ([String: Any]) -> Void = { _ in }
    }
    private let state = Mutex(State())

    /// The view's last main-frame load failed and no load has committed since: its
    /// document (WebKit's error page, or what the failed load left) is not the app.
    var documentFailed: Bool { state.withLock { $0.documentFailed } }

    /// Called with the fields of each `loadFailed` event.
    var onFailed: @Sendable ([String: Any]) -> Void {
        get { state.withLock { $0.onFailed } }
        set { state.withLock { $0.onFailed = newValue } }
    }

    /// A load committed: the document shown is a new one.
    func committed(showsApp: Bool) {
        state.withLock { s in
            s.documentFailed = false
            if showsApp { s.backoff.succeeded() }
        }
    }

    /// Records a failure of the app's load at `uri`; returns the time until the reload.
    fileprivate func failed(uri: String, message: String, code: Int32) -> Duration {
        let (delay, failures, report) = state.withLock { s in
            s.documentFailed = true
            let delay = s.backoff.failed()
            return (delay, s.backoff.failures, s.onFailed)
        }
        report(["uri": uri, "message": message, "code": Int(code), "failures": failures, "reloadInMs": Int(delay / .milliseconds(1))])
        return delay
    }
}

/// When to load the app's page again after its load failed: after 1, 2, 4, 8, then every
/// 15 s while it keeps failing (a flood or a dying network process can outlast a few
/// tries; the shell never stops trying, and reports every failure). A load that commits
/// ends the series.
struct LoadFailureBackoff: Sendable, Equatable {
    static let delays: [Duration] = [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(15)]
    /// Failures in a row.
    private(set) var failures = 0

    /// One more failure: the time until the next load.
    mutating func failed() -> Duration {
        failures += 1
        return Self.delays[min(failures, Self.delays.count) - 1]
    }

    mutating func succeeded() { failures = 0 }
}

extension ShellView {
    /// The main frame's load of `uri` failed with `error` (WebKit's `load-failed`). Returns
    /// true when the shell handles it (no error page): a failure of a page of the app that
    /// is not a refusal of the shell's own policy (a download, a document outside the app)
    /// nor a load cancelled because another one started.
    func loadFailed(uri: String, error: UnsafeMutablePointer<GError>) -> Bool {
        let domain = error.pointee.domain
        let code = error.pointee.code
        if domain == webkit_policy_error_quark() { return false }  // the shell's own refusals
        guard Self.isInside(uri, origin: origin) else { return false }
        if domain == webkit_network_error_quark(), code == Int32(WEBKIT_NETWORK_ERROR_CANCELLED.rawValue), let view {
            // Cancelled by the next load (every load of the app's page has its own launch
            // URI; the view's URI is the load it is making), or by the page's own navigation.
            let current = webkit_web_view_get_uri(view).map { String(cString: $0) }
            if current != uri { return false }
        }
        let message = error.pointee.message.map { String(cString: $0) } ?? "unknown error"
        let delay = loadFailures.failed(uri: uri, message: message, code: code)
        GMain.after(delay) { [self] in
            // A load that committed since (a switch, a recovery) needs no other.
            if loadFailures.documentFailed { loadApp() }
        }
        return true
    }

    static let loadFailedCallback:
        @convention(c) (UnsafeMutablePointer<WebKitWebView>?, WebKitLoadEvent, UnsafePointer<gchar>?, UnsafeMutablePointer<GError>?, gpointer?)
            -> gboolean = { _, _, uri, error, data in
                guard let data, let error else { return 0 }
                let me = Unmanaged<ShellView>.fromOpaque(data).takeUnretainedValue()
                return me.loadFailed(uri: uri.map { String(cString: $0) } ?? "", error: error) ? 1 : 0
            }
}
