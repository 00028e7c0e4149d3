internal import CWebKitGTK

/// The GTK main thread: GTK and WebKit are called there only. Work from the engine's tasks
/// hops onto it through the default main context (`g_idle_add`, which is thread-safe).
enum GMain {
    private final class Work {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Runs `body` on the GTK main thread, after what is already queued there.
    static func async(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Work(body)).toOpaque()
        g_idle_add_full(
            G_PRIORITY_DEFAULT,
            { data in
                guard let data else { return gboolean(0) }
                Unmanaged<Work>.fromOpaque(data).takeRetainedValue().body()
                return gboolean(0)  // G_SOURCE_REMOVE: run once
            }, box, nil)
    }

    /// Runs `body` on the GTK main thread and returns its result to the calling task.
    static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            async { continuation.resume(returning: body()) }
        }
    }

    /// `duration` in whole milliseconds for GLib's timers: at least `least`, at most
    /// what a `guint` holds.
    private static func milliseconds(_ duration: Duration, atLeast least: Double) -> guint {
        guint(min(max(least, duration / .milliseconds(1)), Double(guint.max)))
    }

    /// Calls `body` on the GTK main thread after `delay`, once.
    static func after(_ delay: Duration, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Work(body)).toOpaque()
        g_timeout_add_full(
            G_PRIORITY_DEFAULT, milliseconds(delay, atLeast: 0),
            { data in
                guard let data else { return gboolean(0) }
                Unmanaged<Work>.fromOpaque(data).takeRetainedValue().body()
                return gboolean(0)
            }, box, nil)
    }

    /// Calls `body` on the GTK main thread each time the process gets `signal` (one that
    /// GLib's `g_unix_signal_add` takes: SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2,
    /// SIGWINCH), in place of its default action; the handler only wakes the main loop.
    static func onSignal(_ signal: Int32, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Work(body)).toOpaque()
        g_unix_signal_add_full(
            G_PRIORITY_HIGH, signal,
            { data in
                guard let data else { return gboolean(0) }
                Unmanaged<Work>.fromOpaque(data).takeUnretainedValue().body()
                return gboolean(1)  // G_SOURCE_CONTINUE: every time the signal comes
            }, box,
            { data in
                guard let data else { return }
                Unmanaged<Work>.fromOpaque(data).release()
            })
    }

    /// Calls `body` on the GTK main thread every `interval`, for as long as the main loop
    /// runs: a main loop that hangs stops the calls.
    static func every(_ interval: Duration, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Work(body)).toOpaque()
        g_timeout_add_full(
            G_PRIORITY_DEFAULT, milliseconds(interval, atLeast: 1),
            { data in
                guard let data else { return gboolean(0) }
                Unmanaged<Work>.fromOpaque(data).takeUnretainedValue().body()
                return gboolean(1)  // G_SOURCE_CONTINUE: run again
            }, box,
            { data in
                guard let data else { return }
                Unmanaged<Work>.fromOpaque(data).release()  // the source is gone
            })
    }
}

/// A GObject pointer handed from the GTK main thread to a task and back. GObject's
/// reference count is atomic; the object itself is only touched on the main thread.
struct MainThreadObject<T>: @unchecked Sendable {
    let pointer: T
}
