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
        key = KeyedPageScript.newKey()
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
        KeyedPageScript.install(on: view, name: Self.handlerName, script: script, callback: Self.callback, target: self)
    }

    private static let callback: KeyedPageScript.Callback = { _, value, _, data in
        guard let value, let data else { return 0 }
        Unmanaged<PageErrors>.fromOpaque(data).takeUnretainedValue().received(value)
        return 0  // no answer: the page's promise rejects, and the script ignores it
    }

    /// Reads `{key, message}`: the key first, lengths before anything is copied.
    private func received(_ value: UnsafeMutablePointer<JSCValue>) {
        guard view.showsApp, jsc_value_is_object(value) != 0,
            let sent = KeyedPageScript.shortString(jsc_value_object_get_property(value, "key"), atMost: key.count), sent == key,
            let message = KeyedPageScript.shortString(jsc_value_object_get_property(value, "message"), atMost: Self.maxMessage)
        else { return }
        onError(message, view.pageVersion)
    }
}
