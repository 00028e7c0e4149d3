import ClientFoundation

/// Opens once the engine has chosen the first version to serve. The view starts loading
/// the app at once, in parallel with the engine's start-up (its web and network processes
/// start meanwhile); scheme requests that arrive before the version is known wait here.
/// ClientFoundation's ``Latch``, its timed wait on the injected monotonic clock.
package final class FirstVersionLatch: Sendable {
    private let latch = Latch()
    private let clock: MonotonicClock

    /// A closed latch whose timed waits run on `clock`.
    package init(clock: MonotonicClock = .continuous) {
        self.clock = clock
    }

    /// Returns once the latch is open, or when the waiting task is cancelled.
    package func wait() async {
        try? await latch.wait()
    }

    /// Opens the latch (again is a no-op) and lets every waiting request go on.
    package func open() {
        latch.open()
    }

    /// Returns once the latch is open or `limit` has passed on the clock, whichever comes
    /// first (or when the task is cancelled). Nothing it starts outlives it.
    package func wait(atMost limit: Duration) async {
        _ = await latch.wait(atMost: limit, on: clock)
    }

    /// Requests waiting now.
    package var waiting: Int { latch.waiting }
}
