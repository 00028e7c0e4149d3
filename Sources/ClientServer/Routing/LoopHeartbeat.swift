import NIOCore

/// A beat the server runs on its own event loop every ``interval``, each time only once
/// every event loop of the group it serves on has run a task since the last beat: a loop
/// that hangs (a blocking call, a deadlock) stops the beats for good. `clientctl serve`
/// sends systemd's `WATCHDOG=1` from it, so systemd restarts a server that no longer
/// answers (docs/serving.md#systemd).
package struct LoopHeartbeat: Sendable {
    /// The pause between the end of one round (every loop answered, the beat ran) and the next.
    package var interval: Duration
    /// Called on the server's event loop: it must not block.
    package var beat: @Sendable () -> Void

    package init(interval: Duration, beat: @escaping @Sendable () -> Void) {
        self.interval = interval
        self.beat = beat
    }

    /// Starts beating on the listening `channel`'s event loop, watching every loop of
    /// `group`, until the channel closes.
    func start(on channel: any Channel, group: any EventLoopGroup) {
        let task = start(on: channel.eventLoop, watching: Array(group.makeIterator()))
        channel.closeFuture.whenComplete { _ in task.cancel() }
    }

    /// Starts beating on `home`: each round submits a task to every one of `loops` and
    /// beats once all of them have run; the next round starts ``interval`` after.
    package func start(on home: any EventLoop, watching loops: [any EventLoop]) -> RepeatedTask {
        let beat = self.beat
        // The next round is scheduled when this one's future completes: a loop that never
        // runs its task leaves the future pending, so no round, and no beat, follows.
        return home.scheduleRepeatedAsyncTask(initialDelay: .zero, delay: TimeAmount(interval)) { _ in
            EventLoopFuture.andAllSucceed(loops.map { $0.submit {} }, on: home).map { beat() }
        }
    }
}
