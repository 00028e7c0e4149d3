internal import CWebKitGTK
import Foundation

/// The view's web process and what a page cannot make the shell do: a process that died
/// or hangs (docs/native-shell.md#a-page-that-dies), downloads, and documents the top
/// frame must not show (docs/native-shell.md#kiosk-and-safety). Main thread only.
extension ShellView {
    /// Responses: a document the view cannot show (it would be downloaded) or one sent as
    /// an attachment is refused, and so is a top-level document outside the app (a
    /// `data:` or `blob:` page, which the navigation step lets through for frames).
    func decideResponse(_ decision: UnsafeMutablePointer<WebKitPolicyDecision>) -> Bool {
        guard let response = clientctl_response_decision(decision) else { return false }
        let uri = webkit_response_policy_decision_get_request(response).flatMap { webkit_uri_request_get_uri($0) }.map { String(cString: $0) }
        var reason: String?
        if webkit_response_policy_decision_is_mime_type_supported(response) == 0 || Self.isAttachment(response) {
            reason = "download"
        } else if webkit_response_policy_decision_is_main_frame_main_resource(response) != 0, let uri,
            !Self.isInside(uri, origin: origin), uri != "about:blank"
        {
            reason = "outside-app"
        }
        guard let reason else {
            if webkit_response_policy_decision_is_main_frame_main_resource(response) != 0, let uri, Self.isInside(uri, origin: origin),
                takeOverNavigation(to: uri)
            {
                webkit_policy_decision_ignore(decision)  // loaded again from the new version
                return true
            }
            webkit_policy_decision_use(decision)
            return true
        }
        webkit_policy_decision_ignore(decision)
        onRefusedNavigation(uri ?? "", reason)
        return true
    }

    /// `Content-Disposition: attachment`.
    private static func isAttachment(_ response: UnsafeMutablePointer<WebKitResponsePolicyDecision>) -> Bool {
        guard let answer = webkit_response_policy_decision_get_response(response),
            let headers = webkit_uri_response_get_http_headers(answer),
            let value = soup_message_headers_get_one(headers, "Content-Disposition")
        else { return false }
        return String(cString: value).lowercased().hasPrefix("attachment")
    }

    /// Shows `message` in the window instead of a blank view (a page that keeps dying).
    func showProblem(_ message: String) {
        guard let view else { return }
        let text = message.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        let html = """
            <!doctype html><html><head><meta charset="utf-8"><title>stopped</title></head>
            <body style="font: 20px sans-serif; margin: 3em; color: #222; background: #eee"><p>\(text)</p></body></html>
            """
        webkit_web_view_load_alternate_html(view, html, "about:blank", nil)
    }

    /// Ends the web process (one that does not answer, or one that loaded the app often
    /// enough), so that the next load gets a new one.
    func endProcess(because reason: String) {
        guard let view else { return }
        endingByShell = reason
        webkit_web_view_terminate_web_process(view)
    }

    /// The web process ended: the page is gone.
    func webProcessTerminated(_ reason: WebKitWebProcessTerminationReason) {
        let version = loadInFlight ? (servedDocument ?? pageVersion) : pageVersion
        let acknowledged = acknowledgedVersion
        pageVersion = nil
        acknowledgedVersion = nil
        loadInFlight = false
        appLoadsInProcess = 0
        let byShell = endingByShell != nil && reason == WEBKIT_WEB_PROCESS_TERMINATED_BY_API
        dialogs.dismiss(because: "page-gone")
        let name =
            switch reason {
            case WEBKIT_WEB_PROCESS_CRASHED: "crashed"
            case WEBKIT_WEB_PROCESS_EXCEEDED_MEMORY_LIMIT: "exceeded-memory"
            default: endingByShell ?? "terminated-by-api"
            }
        endingByShell = nil
        onWebProcessTerminated(name, version, byShell, acknowledged)
    }

    /// The web process stopped answering while the shell waits for the app's page to
    /// load (a rollback onto a page whose script never returns): end it and load again.
    func responsivenessChanged() {
        guard let view, webkit_web_view_get_is_web_process_responsive(view) == 0, appLoadPending else { return }
        endProcess(because: "unresponsive")
        webkit_web_view_load_uri(view, startURI())
    }

    static let terminatedCallback: @convention(c) (UnsafeMutablePointer<WebKitWebView>?, WebKitWebProcessTerminationReason, gpointer?) -> Void = {
        _, reason, data in
        guard let data else { return }
        Unmanaged<ShellView>.fromOpaque(data).takeUnretainedValue().webProcessTerminated(reason)
    }

    static let responsiveCallback: @convention(c) (gpointer?, gpointer?, gpointer?) -> Void = { _, _, data in
        guard let data else { return }
        Unmanaged<ShellView>.fromOpaque(data).takeUnretainedValue().responsivenessChanged()
    }

    /// Every download is cancelled before it has a destination: nothing is written.
    static let downloadCallback: @convention(c) (gpointer?, UnsafeMutablePointer<WebKitDownload>?, gpointer?) -> Void = {
        _, download, data in
        guard let download, let data else { return }
        webkit_download_cancel(download)
        let uri = webkit_download_get_request(download).flatMap { webkit_uri_request_get_uri($0) }.map { String(cString: $0) }
        Unmanaged<ShellView>.fromOpaque(data).takeUnretainedValue().onRefusedNavigation(uri ?? "", "download")
    }
}
