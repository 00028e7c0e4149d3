internal import CWebKitGTK
import Foundation

/// What a page cannot make the shell do: downloads, and documents the top frame must not
/// show (docs/native-shell.md#kiosk-and-safety). Main thread only.
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

    /// Every download is cancelled before it has a destination: nothing is written.
    static let downloadCallback: @convention(c) (gpointer?, UnsafeMutablePointer<WebKitDownload>?, gpointer?) -> Void = {
        _, download, data in
        guard let download, let data else { return }
        webkit_download_cancel(download)
        let uri = webkit_download_get_request(download).flatMap { webkit_uri_request_get_uri($0) }.map { String(cString: $0) }
        Unmanaged<ShellView>.fromOpaque(data).takeUnretainedValue().onRefusedNavigation(uri ?? "", "download")
    }
}
