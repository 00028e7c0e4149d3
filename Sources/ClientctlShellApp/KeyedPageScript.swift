internal import CWebKitGTK
import Foundation

/// What ``PageErrors`` and ``PageErrorCounts`` share: a user script in the top frame only,
/// at document start (before the page's scripts), that posts to a reply handler of its own
/// with a key drawn for this run, which no frame and no page script can read; and the
/// careful reading of what it posts (lengths before anything is copied). Main thread only.
enum KeyedPageScript {
    /// A fresh key: 256 random bits as four hex words.
    static func newKey() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(generator.next() as UInt64, radix: 16) }.joined(separator: "-")
    }

    /// The C signature of a `script-message-with-reply-received` handler.
    typealias Callback =
        @convention(c) (
            UnsafeMutablePointer<WebKitUserContentManager>?, UnsafeMutablePointer<JSCValue>?, OpaquePointer?, gpointer?
        ) -> gboolean

    /// Registers the reply handler `name` on `view`'s content manager, calling `callback` with
    /// `target` retained for the process's life, and adds `script` to the top frame at
    /// document start (after ``ShellView/build(context:)``).
    static func install(on view: ShellView, name: String, script: String, callback: Callback, target: AnyObject) {
        guard let webView = view.view, let manager = webkit_web_view_get_user_content_manager(webView) else { return }
        webkit_user_content_manager_register_script_message_handler_with_reply(manager, name, nil)
        _ = clientctl_signal_connect(
            manager, "script-message-with-reply-received::\(name)", unsafeBitCast(callback, to: GCallback.self),
            Unmanaged.passRetained(target).toOpaque())
        let userScript = webkit_user_script_new(script, WEBKIT_USER_CONTENT_INJECT_TOP_FRAME, WEBKIT_USER_SCRIPT_INJECT_AT_DOCUMENT_START, nil, nil)
        webkit_user_content_manager_add_script(manager, userScript)
        webkit_user_script_unref(userScript)
    }

    /// `value` as a string when it is one of at most `limit` characters (the value is released).
    static func shortString(_ value: UnsafeMutablePointer<JSCValue>?, atMost limit: Int) -> String? {
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
