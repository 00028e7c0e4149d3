internal import CWebKitGTK
import Foundation

/// Who may use the page bridge, and how much (docs/native-shell.md#the-bridge). Confined
/// to the GTK main thread, like the view that owns it.
///
/// WebKitGTK gives a script message no frame: every frame's `window.webkit.messageHandlers`
/// reaches the same handler. So a user script injected into the top frame only, before
/// any of the page's scripts, wraps that frame's `postMessage`: it turns the message into
/// JSON in the page, and sends `{key, json}` with a key drawn at random for this run, or
/// only `{key, tooLarge}` when the JSON is over ``maxMessageBytes`` (a long message never
/// leaves the page's process). A message without the key came from another frame (an
/// iframe, `srcdoc`, `data:` or `blob:`) and is refused. Each message is then read by a
/// checker run in the message's own JavaScript context (the UI process's, not the page's),
/// which reads lengths before it copies anything: only JSON of at most ``maxMessageBytes``
/// holding a flat object of at most ``maxFields`` strings, numbers and booleans gets
/// through. At most ``maxWaiting`` messages wait for their answers; more are refused at
/// once. Refusals are counted and reported, coalesced, at most once a second.
final class BridgeGuard: @unchecked Sendable {
    // @unchecked Sendable: it holds JavaScriptCore pointers (`JSCContext`, `JSCValue`, C types
    // of WebKitGTK, not Sendable), confined to the GTK main thread: every method is called
    // there (the report timer too).

    /// Why a message was refused (the counters of the `bridgeRefused` event).
    enum Refusal: String, CaseIterable, Sendable, Error {
        /// Posted without the top frame's key: another frame, or a document of its own.
        case notTopFrame
        /// The view shows something else than the app's origin.
        case notApp
        /// Over ``BridgeGuard/maxMessageBytes``.
        case tooLarge
        /// Not a flat object of strings, numbers and booleans.
        case malformed
        /// ``BridgeGuard/maxWaiting`` messages are waiting already.
        case queueFull
        /// Read, and refused by the bridge or the engine (an unknown action, another
        /// version named, a conflict): the page's promise rejects with the engine's reason,
        /// and at most one `error` line a second says so.
        case callRefused

        /// What the page's promise rejects with.
        var message: String {
            switch self {
            case .notTopFrame: return "messages are accepted only from the app's top-level page"
            case .notApp: return "messages are accepted only from pages of the app"
            case .tooLarge: return "a message is at most \(BridgeGuard.maxMessageBytes) characters as JSON"
            case .malformed: return "a message is an object of at most \(BridgeGuard.maxFields) strings, numbers or booleans"
            case .queueFull: return "\(BridgeGuard.maxWaiting) messages are waiting for their answers: this one is refused"
            case .callRefused: return "the call was refused"
            }
        }
    }

    /// Largest message read, as JSON (UTF-16 code units): the shim's are below 200.
    static let maxMessageBytes = 64 * 1024
    /// Most fields of one message.
    static let maxFields = 8
    /// Most messages waiting for their answers at once.
    static let maxWaiting = 256

    /// Drawn for this run; never leaves the top frame's wrapper and the checker.
    let key: String
    /// Refusals so far, by reason, reported at most once a second.
    let refusals = CoalescedCounts<Refusal>()
    /// Messages accepted and not answered yet.
    private(set) var waiting = 0
    /// The checker compiled in the context messages arrive in (held: WebKit's shared one).
    private var checker: (context: UnsafeMutablePointer<JSCContext>, function: UnsafeMutablePointer<JSCValue>)?

    init() {
        var generator = SystemRandomNumberGenerator()
        key = (0..<4).map { _ in String(generator.next() as UInt64, radix: 16) }.joined(separator: "-")
    }

    /// Injected into the top frame at document start: its `postMessage` carries the key.
    var topFrameScript: String {
        """
        (function () {
          var h = window.webkit && window.webkit.messageHandlers && window.webkit.messageHandlers.\(PageBridge.handlerName);
          if (!h) return;
          var post = h.postMessage, stringify = JSON.stringify, key = "\(key)";
          Object.defineProperty(h, "postMessage", { value: function (message) {
            var json;
            try { json = stringify(message); } catch (e) { json = null; }
            if (typeof json === "string" && json.length > \(Self.maxMessageBytes)) return post.call(h, { key: key, tooLarge: json.length });
            return post.call(h, { key: key, json: typeof json === "string" ? json : null });
          } });
          // Held by the window: a handler's wrapper nothing references is garbage collected,
          // and the next `messageHandlers.\(PageBridge.handlerName)` is a new one without the key.
          Object.defineProperty(window, Symbol("\(PageBridge.handlerName)"), { value: h });
        })();
        """
    }

    /// Injected into every frame at document start: in a frame that is not the top one,
    /// `postMessage` sends only `{frame: true}`, so what a frame posts (a 100 MB string)
    /// never leaves its web process; the checker refuses it as `notTopFrame`.
    static var frameScript: String {
        """
        (function () {
          if (window === window.top) return;
          var h = window.webkit && window.webkit.messageHandlers && window.webkit.messageHandlers.\(PageBridge.handlerName);
          if (!h) return;
          var post = h.postMessage;
          Object.defineProperty(h, "postMessage", { value: function () { return post.call(h, { frame: true }); } });
          Object.defineProperty(window, Symbol("\(PageBridge.handlerName)"), { value: h });
        })();
        """
    }

    /// The checker: `"!reason"`, or the message's JSON. It reads a string's length before
    /// it parses or copies it.
    private var checkerSource: String {
        """
        (function (m) {
          if (typeof m !== "object" || m === null || m.key !== "\(key)") return "!notTopFrame";
          if (m.tooLarge !== undefined) return "!tooLarge";
          var s = m.json, n = 0, b;
          if (typeof s !== "string") return "!malformed";
          if (s.length > \(Self.maxMessageBytes)) return "!tooLarge";
          try { b = JSON.parse(s); } catch (e) { return "!malformed"; }
          if (typeof b !== "object" || b === null || Array.isArray(b)) return "!malformed";
          for (var k in b) {
            var t = typeof b[k];
            if (++n > \(Self.maxFields) || (t !== "string" && t !== "number" && t !== "boolean" && b[k] !== null)) return "!malformed";
          }
          return s;
        })
        """
    }

    /// Reads a posted value: the page's message as JSON, or why it is refused (counted).
    func read(_ value: UnsafeMutablePointer<JSCValue>) -> Result<String, Refusal> {
        guard waiting < Self.maxWaiting else { return .failure(count(.queueFull)) }
        guard let context = jsc_value_get_context(value), let checker = checker(in: context) else {
            return .failure(count(.malformed))
        }
        var arguments: [UnsafeMutablePointer<JSCValue>?] = [value]
        let result = jsc_value_function_callv(checker, 1, &arguments)
        jsc_context_clear_exception(context)
        guard let result else { return .failure(count(.malformed)) }
        defer { g_object_unref(result) }
        guard jsc_value_is_string(result) != 0, let raw = jsc_value_to_string(result) else { return .failure(count(.malformed)) }
        defer { g_free(raw) }
        let text = String(cString: raw)
        guard text.hasPrefix("!") else { return .success(text) }
        return .failure(count(Refusal(rawValue: String(text.dropFirst())) ?? .malformed))
    }

    /// A message was accepted: it waits until ``answered()``.
    func accepted() { waiting += 1 }

    /// An accepted message was answered.
    func answered() { waiting = max(0, waiting - 1) }

    /// Counts a refusal and schedules a report.
    @discardableResult
    func count(_ refusal: Refusal) -> Refusal {
        refusals.count(refusal)
        return refusal
    }

    /// The checker for `context`, compiled once per context (the context is held while
    /// it is cached, so its address cannot be reused by another).
    private func checker(in context: UnsafeMutablePointer<JSCContext>) -> UnsafeMutablePointer<JSCValue>? {
        if let checker, checker.context == context { return checker.function }
        guard let function = jsc_context_evaluate(context, checkerSource, -1) else { return nil }
        guard jsc_value_is_function(function) != 0 else {
            g_object_unref(function)
            return nil
        }
        if let old = checker {
            g_object_unref(old.function)
            g_object_unref(old.context)
        }
        g_object_ref(context)
        checker = (context, function)
        return function
    }
}
