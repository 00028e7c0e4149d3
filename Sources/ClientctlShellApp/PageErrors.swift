internal import CWebKitGTK
import Foundation

/// The top page's first uncaught error (`error` or `unhandledrejection`) of each load,
/// reported to ``PageStartWatch`` as the cause a `pageNotStarting` step names
/// (docs/native-shell.md#a-page-that-does-not-start). A user script in the top frame only,
/// before the page's scripts, posts it to a handler of its own with a key drawn for this run,
/// which no frame and no page script can read; a message without it is ignored. Main thread only.
final class PageErrors: @unchecked Sendable {
    // @unchecked Sendable: it holds the `ShellView` (a `WebKitWebView`, a GTK object) and is
    // confined to the GTK main thread: made, connected and called there.
    static let handlerName = "clientctlPageError"
    /// Longest message kept (characters); the script cuts it there already.
    static let maxMessage = 300
    let key: String
    let view: ShellView
    let onError: (_ message: String, _ version: String?) -> Void

    init(view: ShellView, onError: @escaping (_ message: String, _ version: String?) -> Void) {
        var generator = SystemRandomNumberGenerator()
        key = (0..<4).map { _ in String(generator.next() as UInt64, radix: 16) }.joined(separator: "-")
        self.view = view
        self.onError = onError
    }

    /// Injected into the top frame at document start.
    var script: String {
        """
        (function () {
          var h = window.webkit && window.webkit.messageHandlers && window.webkit.messageHandlers.\(Self.handlerName);
          if (!h) return;
          var post = h.postMessage.bind(h), key = "\(key)", sent = false;
          function report(text) {
            if (sent) return;
            sent = true;
            try { post({ key: key, message: String(text).slice(0, \(Self.maxMessage)) }).catch(function () {}); } catch (e) {}
          }
          window.addEventListener("error", function (e) { report(e.message); });
          window.addEventListener("unhandledrejection", function (e) { report(e.reason); });
        })();
        """
    }

    /// Registers the handler and the script on the view's content manager (after ``ShellView/build(context:)``).
    func install() {
        guard let webView = view.view, let manager = webkit_web_view_get_user_content_manager(webView) else { return }
        webkit_user_content_manager_register_script_message_handler_with_reply(manager, Self.handlerName, nil)
        _ = clientctl_signal_connect(
            manager, "script-message-with-reply-received::\(Self.handlerName)", unsafeBitCast(Self.callback, to: GCallback.self),
            Unmanaged.passRetained(self).toOpaque())
        let script = webkit_user_script_new(
            self.script, WEBKIT_USER_CONTENT_INJECT_TOP_FRAME, WEBKIT_USER_SCRIPT_INJECT_AT_DOCUMENT_START, nil, nil)
        webkit_user_content_manager_add_script(manager, script)
        webkit_user_script_unref(script)
    }

    private static let callback:
        @convention(c) (
            UnsafeMutablePointer<WebKitUserContentManager>?, UnsafeMutablePointer<JSCValue>?, OpaquePointer?, gpointer?
        ) -> gboolean = { _, value, _, data in
            guard let value, let data else { return 0 }
            Unmanaged<PageErrors>.fromOpaque(data).takeUnretainedValue().received(value)
            return 0  // no answer: the page's promise rejects, and the script ignores it
        }

    /// Reads `{key, message}`: the key first, lengths before anything is copied.
    private func received(_ value: UnsafeMutablePointer<JSCValue>) {
        guard view.showsApp, jsc_value_is_object(value) != 0,
            let sent = Self.shortString(jsc_value_object_get_property(value, "key"), atMost: key.count), sent == key,
            let message = Self.shortString(jsc_value_object_get_property(value, "message"), atMost: Self.maxMessage)
        else { return }
        onError(message, view.pageVersion)
    }

    /// `value` as a string when it is one of at most `limit` characters (the value is released).
    private static func shortString(_ value: UnsafeMutablePointer<JSCValue>?, atMost limit: Int) -> String? {
        guard let value else { return nil }
        defer { g_object_unref(value) }
        guard jsc_value_is_string(value) != 0, let length = jsc_value_object_get_property(value, "length") else { return nil }
        let count = jsc_value_to_int32(length)
        g_object_unref(length)
        guard count <= limit, let text = jsc_value_to_string(value) else { return nil }
        defer { g_free(text) }
        return String(cString: text)
    }
}
