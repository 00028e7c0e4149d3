import ClientFoundation
import Foundation

/// Watches WebKit's network process, a child of the shell named `WebKitNetworkProcess`
/// (`WebKitNetworkPr` in `/proc/PID/stat`, which keeps 15 characters), and reports its end
/// (docs/native-shell.md#a-page-that-dies). WebKitGTK has no signal for it; when it dies
/// (a crash, the OOM killer, a SIGKILL) WebKit starts a new one at the next request, which
/// holds none of the old one's session cookies: under `--origin loopback` every request of
/// the page would then be refused (`403`), so the view loads a fresh launch URL. Under
/// `app://` the scheme is answered by the shell itself and the page keeps working: the end
/// is reported only.
///
/// Checked once a second on a queue of its own, never on the GTK main thread (reading
/// `/proc` must not be able to hold the window): the known process's `/proc/PID/stat`
/// (gone, a zombie, or no longer the shell's child means it ended), and while none is
/// known, the shell's children in `/proc`. The end is handed to the main thread.
final class NetworkProcessWatch: @unchecked Sendable {
    // @unchecked Sendable: it holds a libdispatch timer source (`DispatchSourceTimer`, a C
    // `dispatch_source_t`, not Sendable); it and `known` are read and written on `queue` only.
    /// `comm` of WebKit's network process.
    static let processName = "WebKitNetworkPr"
    private let queue = DispatchQueue(label: "clientctl.shell.network-process")
    private var known: Int32?
    private var timer: (any DispatchSourceTimer)?
    /// Called on the GTK main thread with the pid of a network process that ended.
    let onEnded: @Sendable (Int32) -> Void

    init(onEnded: @escaping @Sendable (Int32) -> Void) { self.onEnded = onEnded }

    /// Checks every `interval` until the process exits.
    func start(every interval: Duration = .seconds(1)) {
        queue.async { [self] in
            let source = DispatchSource.makeTimerSource(queue: queue)
            source.schedule(deadline: .now() + interval.inSeconds, repeating: interval.inSeconds)
            source.setEventHandler { [self] in check() }
            source.resume()
            timer = source
        }
    }

    /// One check (on `queue`).
    private func check() {
        let shell = getpid()
        if let pid = known {
            if Self.isLiveChild(pid, of: shell) { return }
            known = nil
            let ended = onEnded
            GMain.async { ended(pid) }
        }
        known = Self.children(of: shell).first { $0.name == Self.processName }?.pid
    }

    /// `/proc/PID/stat`'s parent and name when `pid` lives (not a zombie).
    private static func stat(_ pid: Int32) -> (parent: Int32, name: String)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")")
        else { return nil }
        let rest = text[text.index(after: close)...].split(separator: " ")
        guard rest.count > 1, rest[0] != "Z", rest[0] != "X", let parent = Int32(rest[1]) else { return nil }
        return (parent, String(text[text.index(after: open)..<close]))
    }

    private static func isLiveChild(_ pid: Int32, of shell: Int32) -> Bool {
        guard let entry = stat(pid) else { return false }
        return entry.parent == shell && entry.name == processName
    }

    /// The shell's live children (`/proc/*/stat` naming it as parent).
    private static func children(of shell: Int32) -> [(pid: Int32, name: String)] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry in
            guard let pid = Int32(entry), let found = stat(pid), found.parent == shell else { return nil }
            return (pid, found.name)
        }
    }
}

extension ShellView {
    /// Watches WebKit's network process (``NetworkProcessWatch``): when it ends, `report` gets
    /// the event's fields (its pid, the version of the page shown, whether the page is
    /// reloaded) and, when `reloads` (`--origin loopback`), the view loads a fresh launch
    /// URL, whose token the new network process exchanges for the run's cookie.
    func watchNetworkProcess(reloads: Bool, report: @escaping @Sendable ([String: Any]) -> Void) {
        let watch = NetworkProcessWatch { [self] pid in  // on the GTK main thread
            var fields: [String: Any] = ["pid": Int(pid), "reloaded": reloads]
            if let version = pageVersion ?? servedDocument { fields["version"] = version }
            report(fields)
            if reloads { loadApp() }
        }
        watch.start()
    }
}
