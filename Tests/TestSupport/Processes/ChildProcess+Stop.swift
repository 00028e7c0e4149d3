import ClientFoundation
import Foundation

extension ChildProcess.Running {
    /// Sends `signal` and waits for the end, bounded: a server that has not ended 30 s after
    /// the signal is killed (and its status says so), so a stuck shutdown fails its test
    /// instead of blocking a test thread for ever. Returns the exit status (or 128 + signal).
    func stop(_ signal: Int32, within seconds: Int = 30) -> Int32 {
        signalChild(signal)
        let deadline = ContinuousClock.now + .seconds(seconds)
        while isRunning && ContinuousClock.now < deadline { usleep(20_000) }
        if isRunning { signalChild(SIGKILL) }
        return waitBlocking().termination.shellStatus
    }

    /// Kills and reaps it if it still runs: what a harness's `deinit` does.
    func killIfRunning() {
        guard isRunning else { return }
        signalChild(SIGKILL)
        _ = waitBlocking()
    }
}
