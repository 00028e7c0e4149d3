internal import CWebKitGTK
import Foundation

/// What the apply driver needs from the view (docs/apply-policies.md#the-native-shell):
/// the user's input, measured from the view's own events, and the page's top-level
/// navigations, held back while a staged version takes over. Main thread only.
extension ShellView {
    /// Listens to the input events the view receives (keys, buttons, pointer motion,
    /// scrolling, touch). The handlers run before WebKit's and never consume an event.
    func watchInput() {
        guard let view else { return }
        let me = Unmanaged.passUnretained(self).toOpaque()
        let widget = UnsafeMutableRawPointer(view)
        for signal in ["key-press-event", "button-press-event", "motion-notify-event", "scroll-event", "touch-event"] {
            _ = clientctl_signal_connect(widget, signal, unsafeBitCast(Self.inputCallback, to: GCallback.self), me)
        }
    }

    private static let inputCallback: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, gpointer?) -> gboolean = {
        _, _, data in
        guard let data else { return 0 }
        Unmanaged<ShellView>.fromOpaque(data).takeUnretainedValue().onInput()
        return 0  // WebKit still gets the event
    }

    /// A top-level document of the app is about to be shown (its response arrived): when the
    /// driver takes the navigation over, the response is dropped, the staged version takes
    /// over, and the same address is loaded again from it. Returns true when taken over.
    func takeOverNavigation(to uri: String) -> Bool {
        if navigationBypass == uri {
            navigationBypass = nil
            return false
        }
        return onNavigation(uri)
    }

    /// Loads `uri` (an address of the app) once more without offering it to the driver.
    func loadAgain(_ uri: String) {
        guard let view else { return }
        dialogs.dismiss(because: "page-replaced")
        navigationBypass = uri
        appLoadPending = true
        webkit_web_view_load_uri(view, uri)
    }
}
