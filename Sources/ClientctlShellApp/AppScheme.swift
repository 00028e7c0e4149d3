internal import CWebKitGTK
import Foundation
import ServingCore
import ShellRules

/// The `app://<appId>/` URI scheme: the client served to the web view without a port,
/// by the same serving core as `clientctl serve` (docs/native-shell.md#the-app-scheme).
///
/// Registered as secure (a secure context, like https: crypto and storage APIs see it
/// so; service workers and `ws:` URLs derived from the origin need `--origin loopback`)
/// and CORS-enabled (`fetch` and module scripts work). Requests for another
/// host than the app id get 404; the serving core answers the rest off the main thread
/// and the response is finished back on it.
final class AppScheme: @unchecked Sendable {
    // @unchecked Sendable: it keeps the `WebKitWebView` pointer (a GTK object, not Sendable)
    // of the last request, touched on the GTK main thread only; the rest is immutable and
    // Sendable. Only `onDocument` runs on main.
    static let name = "app"
    let appID: String
    let core: ServingCore
    /// Requests wait here until the engine has chosen the first version.
    let ready: FirstVersionLatch
    /// Called on the main thread with the version of every index.html served (the page's version).
    let onDocument: @Sendable (String) -> Void

    /// The web view the last request came from (main thread only): ``ResponsePump`` paces
    /// bodies by round trips to its web process.
    private var view: UnsafeMutablePointer<WebKitWebView>?

    init(appID: String, core: ServingCore, ready: FirstVersionLatch, onDocument: @escaping @Sendable (String) -> Void) {
        self.appID = appID
        self.core = core
        self.ready = ready
        self.onDocument = onDocument
    }

    /// `app://<appId>/`.
    var origin: String { "\(Self.name)://\(appID)" }

    /// Registers the scheme on `context` and marks it secure and CORS-enabled.
    func register(on context: UnsafeMutablePointer<WebKitWebContext>) {
        let security = webkit_web_context_get_security_manager(context)
        webkit_security_manager_register_uri_scheme_as_secure(security, Self.name)
        webkit_security_manager_register_uri_scheme_as_cors_enabled(security, Self.name)
        let me = Unmanaged.passRetained(self).toOpaque()  // lives as long as the process
        webkit_web_context_register_uri_scheme(
            context, Self.name,
            { request, data in
                guard let request, let data else { return }
                Unmanaged<AppScheme>.fromOpaque(data).takeUnretainedValue().handle(request)
            }, me, nil)
        ResponsePump.shared.pace { [self] drained in GMain.async { [self] in checkDrain(drained) } }
    }

    /// On the main thread: evaluates an empty script in a world of its own in the view's page.
    /// The web process handles its messages in order, so the answer comes once it has taken
    /// in every body chunk WebKit sent it before (or at once when there is no page to ask).
    private func checkDrain(_ drained: @escaping @Sendable () -> Void) {
        guard let view else { return drained() }
        final class Box {
            let drained: @Sendable () -> Void
            init(_ drained: @escaping @Sendable () -> Void) { self.drained = drained }
        }
        let box = Unmanaged.passRetained(Box(drained)).toOpaque()
        webkit_web_view_evaluate_javascript(
            view, "0", -1, "clientctl-pump", nil, nil,
            { source, result, data in
                guard let data else { return }
                let box = Unmanaged<Box>.fromOpaque(data).takeRetainedValue()
                var error: UnsafeMutablePointer<GError>?
                if let source, let result,
                    let value = webkit_web_view_evaluate_javascript_finish(OpaquePointer(source).map { UnsafeMutablePointer($0) }, result, &error)
                {
                    g_object_unref(value)
                }
                if let error { g_error_free(error) }
                box.drained()
            }, box)
    }

    /// On the main thread: read what is asked, answer it from a task, finish on main.
    private func handle(_ request: UnsafeMutablePointer<WebKitURISchemeRequest>) {
        let uri = String(cString: webkit_uri_scheme_request_get_uri(request))
        guard let parts = URLComponents(string: uri), parts.host == appID else {
            finish(request, .notFoundElsewhere)
            return
        }
        var fileRequest = FileRequest(path: parts.percentEncodedPath.isEmpty ? "/" : parts.percentEncodedPath, query: parts.percentEncodedQuery)
        if let method = webkit_uri_scheme_request_get_http_method(request) {
            let name = String(cString: method)
            guard name == "GET" || name == "HEAD" else {
                finish(request, .methodNotAllowed)
                return
            }
            fileRequest.isHead = name == "HEAD"
        }
        if let headers = webkit_uri_scheme_request_get_http_headers(request) {
            func header(_ name: String) -> String? { soup_message_headers_get_one(headers, name).map { String(cString: $0) } }
            fileRequest.ifNoneMatch = header("If-None-Match")
            fileRequest.range = header("Range")
            fileRequest.ifRange = header("If-Range")
        }
        g_object_ref(request)
        let held = MainThreadObject(pointer: request)
        let core = self.core
        let ready = self.ready
        Task {
            await ready.wait()
            let prepared: PreparedAnswer
            do {
                prepared = try await PreparedAnswer.make(try await core.answer(fileRequest), slots: core.shellStreams)
            } catch {
                prepared = PreparedAnswer.failure("\(error)")
            }
            GMain.async { [self] in
                finish(held.pointer, prepared)
                g_object_unref(held.pointer)
            }
        }
    }

    /// Hands `answer` to WebKit (main thread).
    private func finish(_ request: UnsafeMutablePointer<WebKitURISchemeRequest>, _ answer: PreparedAnswer) {
        if answer.isDocument, let version = answer.version { onDocument(version) }
        if let from = webkit_uri_scheme_request_get_web_view(request), from != view {
            g_object_ref(from)
            if let view { g_object_unref(view) }
            view = from
        }
        let stream: UnsafeMutablePointer<GInputStream>?
        switch answer.source {
        case .bytes(let held):
            // The bytes stay where they are (a cached file's shared buffer): GBytes holds
            // their storage until WebKit is done with them.
            let (address, count, owner) = held.retain()
            let bytes = g_bytes_new_with_free_func(address, gsize(count), { owner in owner.map(HeldBytes.release) }, owner)
            stream = g_memory_input_stream_new_from_bytes(bytes)
            g_bytes_unref(bytes)
        case .descriptor(let fd):
            // The read end of the body's pipe, filled by ResponsePump as WebKit reads it.
            stream = g_unix_input_stream_new(fd, gboolean(1))  // closes fd when done
        }
        let response = webkit_uri_scheme_response_new(stream, gint64(answer.length))
        webkit_uri_scheme_response_set_status(response, guint(answer.status), nil)
        if let type = answer.contentType { webkit_uri_scheme_response_set_content_type(response, type) }
        let headers = soup_message_headers_new(SOUP_MESSAGE_HEADERS_RESPONSE)
        for (name, value) in answer.headers { soup_message_headers_append(headers, name, value) }
        webkit_uri_scheme_response_set_http_headers(response, headers)  // takes ownership
        webkit_uri_scheme_request_finish_with_response(request, response)
        g_object_unref(response)
        if let stream { g_object_unref(stream) }
    }
}
