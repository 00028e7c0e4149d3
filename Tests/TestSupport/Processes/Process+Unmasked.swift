import Foundation

extension Process {
    /// Starts the process with no signal blocked, as systemd or a login shell starts one.
    ///
    /// Foundation's `run()` spawns the child with the calling thread's signal mask, and a
    /// test runs on a dispatch worker thread, which blocks nearly every signal (SIGTERM,
    /// SIGINT, SIGCHLD, SIGUSR1, …). A child started from there ignores `terminate()`: a
    /// `sleep 60` then holds the test thread that waits for it for the whole minute, and
    /// two such waits stall every test of the process on a 2-core machine. A shell or a
    /// server under test would also run with a mask no device ever gives it. So the mask
    /// is cleared for the spawn and restored after it (`/proc/PID/status` of the child
    /// shows `SigBlk: 0000000000000000`).
    public func runUnmasked() throws {
        var none = sigset_t()
        sigemptyset(&none)
        var previous = sigset_t()
        pthread_sigmask(SIG_SETMASK, &none, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        try run()
    }
}
