internal import CWebKitGTK
import Foundation

/// Every dialog a page can make WebKit raise, decided by the shell
/// (docs/native-shell.md#dialogs). Confined to the GTK main thread, like the view that
/// owns it.
///
/// WebKit's own handlers would print through GTK's print dialog (a nested main loop that
/// holds the page's `print()`, ignores SIGTERM and whose "Print to File" writes anywhere),
/// open file and colour choosers that stay on screen after the page that asked is gone,
/// and ask for permissions and credentials. So:
/// - `print()`, colour choosers, permission requests (denied), notifications and HTTP
///   authentication are refused in every mode;
/// - in `--kiosk`, `alert`, `confirm` and `prompt` are answered at once without a dialog
///   (`alert` returns, `confirm` is false, `prompt` is null) and file choosers are
///   cancelled;
/// - outside kiosk mode, `alert`, `confirm`, `prompt` and a file chooser open as the
///   shell's own modal dialog, one at a time and never in a nested main loop; it is closed
///   (answered as dismissed) as soon as its page is replaced (a switch, a rollback, a
///   reload), its web process ends, or the shell stops;
/// - `beforeunload` never holds a load: the page is always left.
///
/// Refusals are counted by kind and reported (``refusals``) at most once a second.
final class PageDialogs: @unchecked Sendable {
    // @unchecked Sendable: it holds GTK and WebKit pointers (C types, not Sendable), confined
    // to the GTK main thread: every method and signal handler runs there, and the pointers
    // are never handed to another thread.

    /// What a page asked for.
    enum Kind: String, CaseIterable, Sendable {
        case print, alert, confirm, prompt
        case beforeUnload = "beforeunload"
        case fileChooser = "fileChooser"
        case colorChooser = "colorChooser"
        case permission, notification, authentication
    }

    /// `--kiosk`: no dialog ever opens.
    let kiosk: Bool
    /// The window dialogs are modal for (nil once it is closed).
    var parent: () -> UnsafeMutablePointer<GtkWidget>? = { nil }
    /// Called when a dialog opened (outside kiosk mode).
    var onOpened: (Kind) -> Void = { _ in }
    /// Called when the open dialog closed: `answered` by the user, or `page-replaced`,
    /// `page-gone`, `stopping`.
    var onClosed: (Kind, String) -> Void = { _, _ in }
    /// Refusals so far, by kind, reported at most once a second.
    let refusals = CoalescedCounts<Kind>()
    /// The one dialog open now.
    private var open: OpenDialog?

    private struct OpenDialog {
        let kind: Kind
        let widget: UnsafeMutablePointer<GtkWidget>
        /// Answers the page: `response` is GTK's response id (`nil`: dismissed unseen).
        let answer: (_ response: Int32?) -> Void
    }

    init(kiosk: Bool) { self.kiosk = kiosk }

    /// Connects the handlers to `view` (once, when the view is built).
    func connect(to view: UnsafeMutablePointer<WebKitWebView>) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        let handlers: [(String, GCallback)] = [
            ("print", unsafeBitCast(Self.printCallback, to: GCallback.self)),
            ("script-dialog", unsafeBitCast(Self.scriptDialogCallback, to: GCallback.self)),
            ("run-file-chooser", unsafeBitCast(Self.fileChooserCallback, to: GCallback.self)),
            ("run-color-chooser", unsafeBitCast(Self.colorChooserCallback, to: GCallback.self)),
            ("permission-request", unsafeBitCast(Self.permissionCallback, to: GCallback.self)),
            ("show-notification", unsafeBitCast(Self.notificationCallback, to: GCallback.self)),
            ("authenticate", unsafeBitCast(Self.authenticateCallback, to: GCallback.self)),
        ]
        for (signal, handler) in handlers { _ = clientctl_signal_connect(view, signal, handler, me) }
        // A chosen file is never recorded in ~/.local/share/recently-used.xbel.
        clientctl_disable_recent_files()
    }

    /// Closes the open dialog, answering the page as if it was dismissed (`reason`:
    /// `page-replaced`, `page-gone`, `stopping`).
    func dismiss(because reason: String) {
        guard let dialog = open else { return }
        open = nil
        dialog.answer(nil)
        gtk_widget_destroy(dialog.widget)
        onClosed(dialog.kind, reason)
    }

    /// Counts a refusal and schedules a report.
    func count(_ kind: Kind) { refusals.count(kind) }

    // MARK: - Script dialogs

    private func scriptDialog(_ dialog: OpaquePointer) -> Bool {
        let type = webkit_script_dialog_get_dialog_type(dialog)
        let kind: Kind
        switch type {
        case WEBKIT_SCRIPT_DIALOG_ALERT: kind = .alert
        case WEBKIT_SCRIPT_DIALOG_CONFIRM: kind = .confirm
        case WEBKIT_SCRIPT_DIALOG_PROMPT: kind = .prompt
        default:
            // beforeunload: the page is left, in every mode (a switch or a rollback must
            // never wait for a person).
            webkit_script_dialog_confirm_set_confirmed(dialog, 1)
            count(.beforeUnload)
            return true
        }
        guard !kiosk, open == nil, let window = parent() else {
            // Answered at once: alert returns, confirm is false, prompt is null.
            if kind == .confirm { webkit_script_dialog_confirm_set_confirmed(dialog, 0) }
            count(kind)
            return true
        }
        let message = webkit_script_dialog_get_message(dialog).map { String(cString: $0) } ?? ""
        let buttons = kind == .alert ? GTK_BUTTONS_OK : GTK_BUTTONS_OK_CANCEL
        guard let widget = clientctl_message_dialog_new(clientctl_gtk_window(window), GTK_MESSAGE_OTHER, buttons, message) else {
            count(kind)
            return true
        }
        var entry: UnsafeMutablePointer<GtkWidget>?
        if kind == .prompt, let field = gtk_entry_new() {
            if let text = webkit_script_dialog_prompt_get_default_text(dialog) { gtk_entry_set_text(clientctl_gtk_entry(field), text) }
            gtk_entry_set_activates_default(clientctl_gtk_entry(field), 1)
            gtk_box_pack_end(clientctl_message_dialog_area(widget), field, 0, 0, 0)
            entry = field
        }
        gtk_dialog_set_default_response(clientctl_gtk_dialog(widget), gint(GTK_RESPONSE_OK.rawValue))
        webkit_script_dialog_ref(dialog)
        let held = MainThreadObject(pointer: dialog)
        show(widget, kind: kind) { response in
            let dialog = held.pointer
            let accepted = response == GTK_RESPONSE_OK.rawValue
            switch kind {
            case .confirm: webkit_script_dialog_confirm_set_confirmed(dialog, accepted ? 1 : 0)
            case .prompt:
                if accepted, let entry, let text = gtk_entry_get_text(clientctl_gtk_entry(entry)) {
                    webkit_script_dialog_prompt_set_text(dialog, text)
                }
            default: break
            }
            webkit_script_dialog_close(dialog)
            webkit_script_dialog_unref(dialog)
        }
        return true
    }

    // MARK: - File choosers

    private func fileChooser(_ request: UnsafeMutablePointer<WebKitFileChooserRequest>) -> Bool {
        guard !kiosk, open == nil, let window = parent(),
            let widget = clientctl_file_chooser_dialog_new(clientctl_gtk_window(window), "Choose a file")
        else {
            webkit_file_chooser_request_cancel(request)
            count(.fileChooser)
            return true
        }
        let chooser = clientctl_gtk_file_chooser(widget)
        gtk_file_chooser_set_select_multiple(chooser, webkit_file_chooser_request_get_select_multiple(request))
        gtk_file_chooser_set_local_only(chooser, 1)
        if let filter = webkit_file_chooser_request_get_mime_types_filter(request) { gtk_file_chooser_set_filter(chooser, filter) }
        g_object_ref(request)
        let held = MainThreadObject(pointer: request)
        show(widget, kind: .fileChooser) { response in
            let request = held.pointer
            if response == GTK_RESPONSE_ACCEPT.rawValue, let list = gtk_file_chooser_get_filenames(chooser) {
                var names: [UnsafeMutablePointer<gchar>?] = []
                var node: UnsafeMutablePointer<GSList>? = list
                while let item = node {
                    names.append(item.pointee.data?.assumingMemoryBound(to: gchar.self))
                    node = item.pointee.next
                }
                names.append(nil)
                names.withUnsafeBufferPointer { buffer in
                    buffer.baseAddress.map { base in
                        base.withMemoryRebound(to: UnsafePointer<gchar>?.self, capacity: buffer.count) {
                            webkit_file_chooser_request_select_files(request, $0)
                        }
                    }
                }
                g_slist_free_full(list, g_free)
            } else {
                webkit_file_chooser_request_cancel(request)
            }
            g_object_unref(request)
        }
        return true
    }

    /// Shows `widget` as the open dialog; `answer` runs once, when the user answers or the
    /// dialog is dismissed.
    private func show(_ widget: UnsafeMutablePointer<GtkWidget>, kind: Kind, answer: @escaping (Int32?) -> Void) {
        open = OpenDialog(kind: kind, widget: widget, answer: answer)
        // Named as the app's window: a window manager lists it with the app.
        if let window = parent(), let title = gtk_window_get_title(clientctl_gtk_window(window)) {
            gtk_window_set_title(clientctl_gtk_window(widget), title)
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = clientctl_signal_connect(widget, "response", unsafeBitCast(Self.responseCallback, to: GCallback.self), me)
        gtk_widget_show_all(widget)
        onOpened(kind)
    }

    private func responded(_ widget: UnsafeMutableRawPointer, _ response: Int32) {
        guard let dialog = open, UnsafeMutableRawPointer(dialog.widget) == widget else { return }
        open = nil
        dialog.answer(response)
        gtk_widget_destroy(dialog.widget)
        onClosed(dialog.kind, "answered")
    }

    // MARK: - Signals (C callbacks; `data` is this object, unretained: it lives as long as the view)

    private static func me(_ data: gpointer?) -> PageDialogs? {
        data.map { Unmanaged<PageDialogs>.fromOpaque($0).takeUnretainedValue() }
    }

    private static let responseCallback: @convention(c) (gpointer?, gint, gpointer?) -> Void = { widget, response, data in
        guard let widget else { return }
        me(data)?.responded(widget, response)
    }

    private static let printCallback: @convention(c) (gpointer?, gpointer?, gpointer?) -> gboolean = { _, _, data in
        me(data)?.count(.print)
        return 1  // handled: no print dialog, print() returns
    }

    private static let scriptDialogCallback: @convention(c) (gpointer?, OpaquePointer?, gpointer?) -> gboolean = { _, dialog, data in
        guard let dialog, let me = me(data) else { return 0 }
        return me.scriptDialog(dialog) ? 1 : 0
    }

    private static let fileChooserCallback: @convention(c) (gpointer?, UnsafeMutablePointer<WebKitFileChooserRequest>?, gpointer?) -> gboolean = {
        _, request, data in
        guard let request, let me = me(data) else { return 0 }
        return me.fileChooser(request) ? 1 : 0
    }

    private static let colorChooserCallback: @convention(c) (gpointer?, UnsafeMutablePointer<WebKitColorChooserRequest>?, gpointer?) -> gboolean = {
        _, request, data in
        if let request { webkit_color_chooser_request_cancel(request) }
        me(data)?.count(.colorChooser)
        return 1
    }

    private static let permissionCallback: @convention(c) (gpointer?, OpaquePointer?, gpointer?) -> gboolean = { _, request, data in
        if let request { webkit_permission_request_deny(request) }
        me(data)?.count(.permission)
        return 1
    }

    private static let notificationCallback: @convention(c) (gpointer?, gpointer?, gpointer?) -> gboolean = { _, _, data in
        me(data)?.count(.notification)
        return 1
    }

    private static let authenticateCallback: @convention(c) (gpointer?, UnsafeMutablePointer<WebKitAuthenticationRequest>?, gpointer?) -> gboolean = {
        _, request, data in
        if let request { webkit_authentication_request_cancel(request) }
        me(data)?.count(.authentication)
        return 1
    }
}
