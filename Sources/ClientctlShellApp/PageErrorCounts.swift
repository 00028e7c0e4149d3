internal import CWebKitGTK
import ClientEngine
import Foundation

/// The top page's uncaught errors and unhandled rejections after its acknowledgement
/// (docs/native-shell.md#errors-after-start, docs/page-errors.md): counted in the page
/// itself and posted at most about once a second, a count and up to three distinct
/// messages, so a page that throws 10,000 times a second costs the shell one message a
/// second. As ``PageErrors`` does, a user script in the top frame only, before the page's
/// scripts, posts to a handler of its own with a key drawn for this run that no frame and no
/// page script can read; a message without it is ignored.
///
/// Counted, as the shim counts them under `serve`: trusted `error` events of the app's own
/// scripts (`message @ /path:line`, never the query) and `unhandledrejection` events of the
/// top frame. Not counted: errors inside frames (the script is not in them), errors of
/// another origin's script (WebKit mutes them to "Script error." without a file), `error`
/// events a page makes itself, and anything before the
/// shell told the page that its acknowledgement was accepted (``startCounting()``: before
/// it, the page's errors are the trial's business, ``PageErrors``). Main thread only.
final class PageErrorCounts: @unchecked Sendable {
    // @unchecked Sendable: it holds the `ShellView` (a `WebKitWebView`, a GTK object) and is
    // confined to the GTK main thread: made, connected and called there.
    static let handlerName = "clientctlPageErrorCounts"
    /// The function the script defines (not writable, not configurable) for the shell to
    /// call once the page's acknowledgement was accepted: counting starts.
    static let startFunction = "__clientctlCountErrors"
    /// Longest message read (characters); the script cuts each one there already.
    static let maxMessage = 200
    let key: String
    let view: ShellView
    /// `count` errors of the page of `version` with up to three messages (main thread).
    let onErrors: (_ count: Int64, _ messages: [String], _ version: String) -> Void

    init(view: ShellView, onErrors: @escaping (_ count: Int64, _ messages: [String], _ version: String) -> Void) {
        key = KeyedPageScript.newKey()
        self.view = view
        self.onErrors = onErrors
    }

    /// Injected into the top frame at document start. Everything the script calls later is
    /// taken before the page's scripts run; the key is only ever handed to `postMessage`.
    var script: String {
        """
        (function () {
          var h = window.webkit && window.webkit.messageHandlers && window.webkit.messageHandlers.\(Self.handlerName);
          if (!h) return;
          var post = h.postMessage.bind(h), key = "\(key)", later = window.setTimeout.bind(window), now = Date.now;
          var counting = false, count = 0, messages = [], timer = 0, last = 0, max = \(ProblemTally.maxMessages);
          var own = location.protocol + "//" + location.host + "/";
          Object.defineProperty(window, "\(Self.startFunction)", { value: function () { counting = true; } });
          function flush() {
            timer = 0;
            last = now();
            if (!count) return;
            var message = { key: key, count: count, messages: messages };
            count = 0;
            messages = [];
            try { post(message).catch(function () {}); } catch (e) {}
          }
          // `text` is made only while a message may still be kept: a flood costs a count.
          function add(text) {
            if (!counting) return;
            count++;
            if (messages.length < max) {
              try {
                var m = text();
                if (messages.indexOf(m) < 0) messages.push(m);
              } catch (x) {}
            }
            if (!timer) timer = later(flush, Math.max(0, last + 1000 - now()));
          }
          // A message cut so that the script's place still fits the tally's bound.
          function cut(message, where) { return String(message).slice(0, Math.max(20, \(ProblemTally.maxMessageBytes) - where.length)) + where; }
          window.addEventListener("error", function (e) {
            // Only the app's own scripts: another origin's error is muted (no file) or not
            // the app's; an event the page makes itself is not trusted.
            var file = typeof e.filename === "string" ? e.filename : "";
            if (!e.isTrusted || file.slice(0, own.length) !== own) return;
            add(function () { return cut(e.message, " @ /" + file.slice(own.length).split(/[?#]/)[0] + ":" + e.lineno); });
          });
          // WebKit dispatches its own unhandledrejection events untrusted: all are counted.
          window.addEventListener("unhandledrejection", function (e) {
            add(function () {
              var r = e.reason, text;
              try { text = r && r.message !== undefined ? r.message : String(r); } catch (x) { text = "?"; }
              return cut("Unhandled rejection: " + String(text).slice(0, \(Self.maxMessage)), "");
            });
          });
          // The last second's count goes with the page (a navigation, a reload).
          window.addEventListener("pagehide", flush);
        })();
        """
    }

    /// Registers the handler and the script on the view's content manager (after ``ShellView/build(context:)``).
    func install() {
        KeyedPageScript.install(on: view, name: Self.handlerName, script: script, callback: Self.callback, target: self)
    }

    /// The page's acknowledgement was accepted: its script starts counting.
    func startCounting() {
        guard let webView = view.view, view.showsApp else { return }
        let call = "window.\(Self.startFunction) && window.\(Self.startFunction)();"
        webkit_web_view_evaluate_javascript(webView, call, -1, nil, nil, nil, nil, nil)
    }

    private static let callback: KeyedPageScript.Callback = { _, value, _, data in
        guard let value, let data else { return 0 }
        Unmanaged<PageErrorCounts>.fromOpaque(data).takeUnretainedValue().received(value)
        return 0  // no answer: the page's promise rejects, and the script ignores it
    }

    /// Reads `{key, count, messages}`: the key first, lengths before anything is copied; only
    /// for an app page whose load acknowledged (a page cannot start counting early itself).
    private func received(_ value: UnsafeMutablePointer<JSCValue>) {
        guard view.showsApp, let version = view.pageVersion, view.acknowledgedVersion == version, jsc_value_is_object(value) != 0,
            let sent = KeyedPageScript.shortString(jsc_value_object_get_property(value, "key"), atMost: key.count), sent == key,
            let count = Self.count(jsc_value_object_get_property(value, "count"))
        else { return }
        onErrors(count, Self.messages(jsc_value_object_get_property(value, "messages")), version)
    }

    /// A whole number of at least 1 (at most ``PageProblems/maxCount``); the value is released.
    private static func count(_ value: UnsafeMutablePointer<JSCValue>?) -> Int64? {
        guard let value else { return nil }
        defer { g_object_unref(value) }
        guard jsc_value_is_number(value) != 0 else { return nil }
        let number = jsc_value_to_double(value)
        guard number.isFinite, number >= 1 else { return nil }
        return Int64(min(number, Double(PageProblems.maxCount)))
    }

    /// Up to ``ProblemTally/maxMessages`` short strings of an array (others are skipped); the value is released.
    private static func messages(_ value: UnsafeMutablePointer<JSCValue>?) -> [String] {
        guard let value else { return [] }
        defer { g_object_unref(value) }
        guard jsc_value_is_array(value) != 0, let length = jsc_value_object_get_property(value, "length") else { return [] }
        let count = min(Int(jsc_value_to_int32(length)), ProblemTally.maxMessages)
        g_object_unref(length)
        guard count > 0 else { return [] }
        return (0..<count).compactMap { index in
            KeyedPageScript.shortString(
                jsc_value_object_get_property_at_index(value, UInt32(index)), atMost: maxMessage + ProblemTally.maxMessageBytes)
        }
    }
}
