internal import CWebKitGTK
import Foundation

/// The window and its web view, confined to the GTK main thread (every method runs there;
/// the engine's tasks reach it through ``GMain``). Navigation stays inside the app's
/// origin, no second window opens and nothing is downloaded, the context menu is off in
/// kiosk mode, `file:` access is never granted and the inspector exists only with
/// `--inspect` (docs/native-shell.md#kiosk-and-safety). Only the app's top-level page
/// may use the bridge (``BridgeGuard``), and a web process that dies or hangs is reported
/// (docs/native-shell.md#a-page-that-dies).
final class ShellView: @unchecked Sendable {
    // @unchecked Sendable: it holds the GTK window and the `WebKitWebView` (C types, not
    // Sendable), confined to the GTK main thread: created there, and every method is called there.
    struct Settings: Sendable {
        var title: String
        var width: Int
        var height: Int
        var fullscreen: Bool
        var kiosk: Bool
        var inspect: Bool
    }

    /// The app's origin: `app://<appId>`, or the loopback listener's, which
    /// ``LoopbackOrigin/attach(_:)`` sets once its port is bound (before the first load).
    var origin: String
    let settings: Settings
    /// What ``loadApp()`` loads: the app's start page (with `--origin loopback`, a new
    /// launch URL every time: ``LoopbackOrigin/startURI()``).
    lazy var startURI: () -> String = { [origin] in origin + "/" }
    private(set) var window: UnsafeMutablePointer<GtkWidget>?
    private(set) var view: UnsafeMutablePointer<WebKitWebView>?
    /// The version of the document the view shows (set when a page load commits).
    var pageVersion: String?
    /// The version of the last page served (becomes ``pageVersion`` when its load commits).
    var servedDocument: String?
    /// Page loads committed so far: a bridge message names the load it came from.
    private(set) var loadGeneration = 0
    /// The version of the shown page when its load acknowledged start-up (once per load;
    /// nil until then): its errors and its web process's death count from here
    /// (docs/native-shell.md#errors-after-start).
    var acknowledgedVersion: String?
    /// Who may post to the bridge, and how much.
    let bridgeGuard = BridgeGuard()
    /// Main-frame loads of the app that failed (ShellView+LoadFailure.swift).
    let loadFailures = LoadFailures()
    /// The dialogs a page can raise (print, alerts, choosers, permissions): PageDialogs.swift.
    let dialogs: PageDialogs
    /// A load has started and not finished.
    var loadInFlight = false
    /// ``loadApp()`` asked for the app's page and no load has committed since.
    var appLoadPending = false
    /// Why the shell is ending the web process itself, `nil` when it is not: `unresponsive`
    /// or `fresh-process` (ShellView+Process.swift).
    var endingByShell: String?
    /// Loads of the app's page (``loadApp()``) in the current web process.
    var appLoadsInProcess = 0
    /// After this many loads of the app's page (start, switches, rollbacks, recoveries) in
    /// one web process, the next load gets a new one: WebKit's web process grows with every
    /// reload of a page over a kiosk's months of updates, and a new process starts from
    /// nothing (BENCHMARKS.md, "Real apps in the shell"). 0: never.
    var freshProcessAfter = 50
    /// Called once the window is closed (main thread).
    var onClose: () -> Void = {}
    /// The user did something in the view (ShellView+Apply.swift).
    var onInput: () -> Void = {}
    /// A top-level document of the app is about to be shown: true when the shell takes the
    /// navigation over for a switch (ShellView+Apply.swift).
    var onNavigation: (_ uri: String) -> Bool = { _ in false }
    /// An address loaded again after a switch: not offered to ``onNavigation`` once more.
    var navigationBypass: String?
    /// Another document replaced the page (its leases end with it).
    var onPageReplaced: () -> Void = {}
    /// Called with each `(action, body)` posted by the page and a reply function.
    var onMessage: (_ message: BridgeMessage, _ reply: @escaping (Result<String, BridgeRefusal>) -> Void) -> Void = { _, _ in }
    /// Called when a navigation, a new window or a download is refused (the URI and why:
    /// `outside-app`, `new-window`, `download`).
    var onRefusedNavigation: (_ uri: String, _ reason: String) -> Void = { _, _ in }
    /// Called when the web process ended: the reason (WebKit's, or the shell's own when it
    /// ended the process to load a page: `unresponsive`, `fresh-process`), the version of the
    /// page it showed (or was loading), whether the shell ended it, and the version of the
    /// page it showed when that page's load had acknowledged start-up.
    var onWebProcessTerminated: (_ reason: String, _ version: String?, _ byShell: Bool, _ acknowledged: String?) -> Void = { _, _, _, _ in }

    init(origin: String, settings: Settings) {
        self.origin = origin
        self.settings = settings
        self.dialogs = PageDialogs(kiosk: settings.kiosk)
    }

    /// Builds the window and the view; `context` has the app scheme registered.
    func build(context: UnsafeMutablePointer<WebKitWebContext>) {
        let manager = webkit_user_content_manager_new()
        webkit_user_content_manager_register_script_message_handler_with_reply(manager, PageBridge.handlerName, nil)
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = clientctl_signal_connect(
            manager, "script-message-with-reply-received::\(PageBridge.handlerName)",
            unsafeBitCast(Self.messageCallback, to: GCallback.self), me)
        for (source, time) in [
            (bridgeGuard.topFrameScript, WEBKIT_USER_SCRIPT_INJECT_AT_DOCUMENT_START),
            (PageBridge.firstPaintScript, WEBKIT_USER_SCRIPT_INJECT_AT_DOCUMENT_END),
        ] {
            let script = webkit_user_script_new(source, WEBKIT_USER_CONTENT_INJECT_TOP_FRAME, time, nil, nil)
            webkit_user_content_manager_add_script(manager, script)
            webkit_user_script_unref(script)
        }
        let frames = webkit_user_script_new(
            BridgeGuard.frameScript, WEBKIT_USER_CONTENT_INJECT_ALL_FRAMES, WEBKIT_USER_SCRIPT_INJECT_AT_DOCUMENT_START, nil, nil)
        webkit_user_content_manager_add_script(manager, frames)
        webkit_user_script_unref(frames)
        _ = clientctl_signal_connect(context, "download-started", unsafeBitCast(Self.downloadCallback, to: GCallback.self), me)

        let widget = clientctl_web_view_new(context, manager)
        guard let widget, let webView = clientctl_webkit_web_view(widget) else { return }
        view = webView
        let prefs = webkit_web_view_get_settings(webView)
        webkit_settings_set_enable_developer_extras(prefs, settings.inspect ? 1 : 0)
        webkit_settings_set_allow_file_access_from_file_urls(prefs, 0)
        webkit_settings_set_allow_universal_access_from_file_urls(prefs, 0)
        // Every window.open reaches the "create" signal below, which refuses and reports it
        // (with this off, WebKit's popup blocker would drop those without a gesture unseen).
        webkit_settings_set_javascript_can_open_windows_automatically(prefs, 1)
        _ = clientctl_signal_connect(webView, "decide-policy", unsafeBitCast(Self.policyCallback, to: GCallback.self), me)
        _ = clientctl_signal_connect(webView, "load-changed", unsafeBitCast(Self.loadCallback, to: GCallback.self), me)
        _ = clientctl_signal_connect(webView, "load-failed", unsafeBitCast(Self.loadFailedCallback, to: GCallback.self), me)
        _ = clientctl_signal_connect(webView, "context-menu", unsafeBitCast(Self.contextMenuCallback, to: GCallback.self), me)
        _ = clientctl_signal_connect(webView, "create", unsafeBitCast(Self.createCallback, to: GCallback.self), me)
        _ = clientctl_signal_connect(
            webView, "web-process-terminated", unsafeBitCast(Self.terminatedCallback, to: GCallback.self), me)
        _ = clientctl_signal_connect(
            webView, "notify::is-web-process-responsive", unsafeBitCast(Self.responsiveCallback, to: GCallback.self), me)
        dialogs.parent = { [unowned self] in window }
        dialogs.connect(to: webView)

        let win = gtk_window_new(GTK_WINDOW_TOPLEVEL)
        window = win
        gtk_window_set_title(clientctl_gtk_window(win), settings.title)
        gtk_window_set_default_size(clientctl_gtk_window(win), gint(settings.width), gint(settings.height))
        gtk_container_add(clientctl_gtk_container(win), widget)
        _ = clientctl_signal_connect(win, "destroy", unsafeBitCast(Self.destroyCallback, to: GCallback.self), me)
        if settings.fullscreen || settings.kiosk { gtk_window_fullscreen(clientctl_gtk_window(win)) }
        gtk_widget_show_all(win)
    }

    /// Loads the app's start page (after start-up, after every switch or rollback, and
    /// after the web process died). A web process that does not answer (a page's script
    /// that never returns) is ended first, so the load gets a new one.
    func loadApp() {
        guard let view else { return }
        dialogs.dismiss(because: "page-replaced")  // a dialog never outlives its page
        appLoadPending = true
        if webkit_web_view_get_is_web_process_responsive(view) == 0 {
            endProcess(because: "unresponsive")
        } else if freshProcessAfter > 0, appLoadsInProcess >= freshProcessAfter {
            endProcess(because: "fresh-process")
        }
        appLoadsInProcess += 1
        webkit_web_view_load_uri(view, startURI())
    }

    /// The serving core served a page of `version` (main thread).
    func documentServed(version: String) { servedDocument = version }

    /// Whether the view shows a page of the app's origin.
    var showsApp: Bool {
        guard let view, let uri = webkit_web_view_get_uri(view) else { return false }
        return Self.isInside(String(cString: uri), origin: origin)
    }

    /// `uri` is the app's origin or below it (not `app://<appId>.evil/`).
    static func isInside(_ uri: String, origin: String) -> Bool {
        uri == origin || uri.hasPrefix(origin + "/") || uri.hasPrefix(origin + "?") || uri.hasPrefix(origin + "#")
    }

    /// Delivers an engine event to the page (the shim's webkit backend listens).
    func deliver(event name: String, json: String) {
        guard let view, showsApp else { return }
        let script = "window.__clientctlEvent && window.__clientctlEvent(\(PageBridge.jsString(name)), \(json));"
        webkit_web_view_evaluate_javascript(view, script, -1, nil, nil, nil, nil, nil)
    }

    // MARK: - Signals (C callbacks; `data` is this view, unretained: it lives as long as the process)

    private static let messageCallback:
        @convention(c) (
            UnsafeMutablePointer<WebKitUserContentManager>?, UnsafeMutablePointer<JSCValue>?, OpaquePointer?, gpointer?
        ) -> gboolean = { _, value, reply, data in
            guard let value, let reply, let data else { return 0 }
            let me = Unmanaged<ShellView>.fromOpaque(data).takeUnretainedValue()
            me.received(value, reply: reply)
            return 1
        }

    private func received(_ value: UnsafeMutablePointer<JSCValue>, reply: OpaquePointer) {
        webkit_script_message_reply_ref(reply)
        let context = jsc_value_get_context(value)
        g_object_ref(context)
        let answer = MainThreadObject(pointer: (reply, context))
        let finish: (Result<String, BridgeRefusal>) -> Void = { result in
            let (reply, context) = answer.pointer
            switch result {
            case .success(let json): webkit_script_message_reply_return_value(reply, jsc_value_new_string(context, json))
            case .failure(let refusal): webkit_script_message_reply_return_error_message(reply, refusal.message)
            }
            webkit_script_message_reply_unref(reply)
            g_object_unref(context)
        }
        guard showsApp else {
            bridgeGuard.count(.notApp)
            finish(.failure(BridgeRefusal("messages are accepted only from pages of \(origin)/")))
            return
        }
        guard !loadFailures.documentFailed else {  // an error page is never the app's
            finish(.failure(BridgeRefusal("this page's load failed: it is loaded again")))
            return
        }
        switch bridgeGuard.read(value) {
        case .failure(let refusal):
            finish(.failure(BridgeRefusal(refusal.message)))
        case .success(let json):
            bridgeGuard.accepted()
            onMessage(BridgeMessage(json: json, pageVersion: pageVersion, load: loadGeneration)) { [bridgeGuard] result in
                bridgeGuard.answered()
                finish(result)
            }
        }
    }

    private static let policyCallback:
        @convention(c) (UnsafeMutablePointer<WebKitWebView>?, UnsafeMutablePointer<WebKitPolicyDecision>?, WebKitPolicyDecisionType, gpointer?)
            -> gboolean = { _, decision, type, data in
                guard let decision, let data else { return 0 }
                let me = Unmanaged<ShellView>.fromOpaque(data).takeUnretainedValue()
                return me.decide(decision, type: type) ? 1 : 0
            }

    /// Navigation inside the app's origin (and `about:blank`) is allowed, and frames may
    /// hold `about:srcdoc`, `data:` and `blob:` documents (never the top frame: see
    /// ``decideResponse(_:)``); anything else is refused, and outside kiosk mode web links
    /// the user clicked open in the desktop's browser.
    private func decide(_ decision: UnsafeMutablePointer<WebKitPolicyDecision>, type: WebKitPolicyDecisionType) -> Bool {
        if type == WEBKIT_POLICY_DECISION_TYPE_RESPONSE { return decideResponse(decision) }
        guard type == WEBKIT_POLICY_DECISION_TYPE_NAVIGATION_ACTION || type == WEBKIT_POLICY_DECISION_TYPE_NEW_WINDOW_ACTION else {
            return false
        }
        guard let navigation = clientctl_navigation_decision(decision),
            let action = webkit_navigation_policy_decision_get_navigation_action(navigation),
            let request = webkit_navigation_action_get_request(action), let raw = webkit_uri_request_get_uri(request)
        else {
            webkit_policy_decision_ignore(decision)
            return true
        }
        let uri = String(cString: raw)
        let frameDocument = uri == "about:srcdoc" || uri.hasPrefix("data:") || uri.hasPrefix("blob:")
        if type == WEBKIT_POLICY_DECISION_TYPE_NAVIGATION_ACTION, Self.isInside(uri, origin: origin) || uri == "about:blank" || frameDocument {
            webkit_policy_decision_use(decision)
            return true
        }
        webkit_policy_decision_ignore(decision)
        onRefusedNavigation(uri, type == WEBKIT_POLICY_DECISION_TYPE_NEW_WINDOW_ACTION ? "new-window" : "outside-app")
        let external = uri.hasPrefix("https://") || uri.hasPrefix("http://") || uri.hasPrefix("mailto:")
        if !settings.kiosk, external, webkit_navigation_action_is_user_gesture(action) != 0 {
            ShellEnvironment.openExternally(uri)
        }
        return true
    }

    private static let loadCallback: @convention(c) (UnsafeMutablePointer<WebKitWebView>?, WebKitLoadEvent, gpointer?) -> Void = {
        _, event, data in
        guard let data else { return }
        let me = Unmanaged<ShellView>.fromOpaque(data).takeUnretainedValue()
        switch event {
        case WEBKIT_LOAD_STARTED: me.loadInFlight = true
        case WEBKIT_LOAD_FINISHED: me.loadInFlight = false
        case WEBKIT_LOAD_COMMITTED:
            me.dialogs.dismiss(because: "page-replaced")
            me.onPageReplaced()
            me.appLoadPending = false
            me.pageVersion = me.showsApp ? me.servedDocument : nil
            me.loadGeneration += 1
            me.acknowledgedVersion = nil
            me.loadFailures.committed(showsApp: me.showsApp)
        default: break
        }
    }

    private static let contextMenuCallback: @convention(c) (gpointer?, gpointer?, gpointer?, gpointer?, gpointer?) -> gboolean = {
        _, _, _, _, data in
        guard let data else { return 0 }
        return Unmanaged<ShellView>.fromOpaque(data).takeUnretainedValue().settings.kiosk ? 1 : 0
    }

    /// No second window: `window.open` is refused here (`target=_blank` already by the policy above).
    private static let createCallback: @convention(c) (UnsafeMutablePointer<WebKitWebView>?, OpaquePointer?, gpointer?) -> gpointer? = {
        _, action, data in
        guard let data else { return nil }
        let me = Unmanaged<ShellView>.fromOpaque(data).takeUnretainedValue()
        let uri = action.flatMap { webkit_navigation_action_get_request($0) }.flatMap { webkit_uri_request_get_uri($0) }
        me.onRefusedNavigation(uri.map { String(cString: $0) } ?? "", "new-window")
        return nil
    }

    private static let destroyCallback: @convention(c) (gpointer?, gpointer?) -> Void = { _, data in
        guard let data else { return }
        let me = Unmanaged<ShellView>.fromOpaque(data).takeUnretainedValue()
        me.window = nil
        me.view = nil
        me.onClose()
    }
}

/// Why the shell refused a page's message (the page's promise rejects with it).
struct BridgeRefusal: Error, Sendable {
    let message: String
    init(_ message: String) { self.message = message }
}

extension ShellView {
    /// Writes a PNG of the visible view to `path`, then calls `done` with the failure, if
    /// any (main thread).
    func snapshot(to path: String, done: @escaping (String?) -> Void) {
        guard let view else {
            done("the window is closed")
            return
        }
        let box = Unmanaged.passRetained(SnapshotRequest(path: path, done: done)).toOpaque()
        webkit_web_view_get_snapshot(
            view, WEBKIT_SNAPSHOT_REGION_VISIBLE, WEBKIT_SNAPSHOT_OPTIONS_NONE, nil,
            { source, result, data in
                guard let data else { return }
                let request = Unmanaged<SnapshotRequest>.fromOpaque(data).takeRetainedValue()
                var error: UnsafeMutablePointer<GError>?
                let webView = UnsafeMutableRawPointer(source)?.assumingMemoryBound(to: WebKitWebView.self)
                guard let surface = webkit_web_view_get_snapshot_finish(webView, result, &error) else {
                    let message = error.flatMap { $0.pointee.message.map { String(cString: $0) } } ?? "no image"
                    if let error { g_error_free(error) }
                    request.done("cannot take a snapshot: \(message)")
                    return
                }
                defer { cairo_surface_destroy(surface) }
                let status = cairo_surface_write_to_png(surface, request.path)
                request.done(
                    status == CAIRO_STATUS_SUCCESS ? nil : "cannot write \(request.path): \(String(cString: cairo_status_to_string(status)))")
            }, box)
    }
}

private final class SnapshotRequest {
    let path: String
    let done: (String?) -> Void
    init(path: String, done: @escaping (String?) -> Void) {
        self.path = path
        self.done = done
    }
}
