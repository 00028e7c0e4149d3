internal import CWebKitGTK
import Foundation
import Synchronization

/// Streams the `app://` scheme's file bodies to WebKit with backpressure
/// (docs/native-shell.md#ranges-and-memory): each body goes through a pipe of
/// ``pipeBytes`` whose read end WebKit reads as a `GUnixInputStream`, and one thread of its
/// own fills every pipe from its file with `splice(2)` (file to pipe inside the kernel: no
/// buffer in the shell, no copy) when WebKit has made room. So a body holds at most a pipe's
/// bytes in flight, WebKit's reads pace the file, and a page that goes away (WebKit closes
/// the read end: `EPIPE`) ends its body at once. Neither the GTK main thread nor Swift's
/// cooperative pool ever waits on a file or a pipe here.
final class ResponsePump: Sendable {
    /// The one pump of the process (started at its first body).
    static let shared = ResponsePump()
    /// Capacity asked for each body's pipe (the kernel may round it up to a page).
    static let pipeBytes: Int32 = 64 << 10

    /// One body: `remaining` bytes of `file` from `offset` into the pipe `pipe`.
    private struct Job: Sendable {
        let file: Int32
        var offset: Int64
        var remaining: Int64
        let pipe: Int32
        /// Called once on the pump's thread, after both descriptors are closed.
        let done: @Sendable () -> Void
    }

    /// Bytes the pump may hand to WebKit past the last point the web process is known to
    /// have taken in. WebKit reads a scheme's stream as fast as it can and queues what it
    /// read for the web process without a bound (4.7 GiB in issue 34); the pump so asks the
    /// web process, through the same ordered channel, to confirm it has caught up (a
    /// ``drainCheck`` round trip), and stops filling pipes meanwhile once this is out.
    static let window: Int64 = 24 << 20

    /// What the web process confirmed it took in.
    private struct Credit {
        /// Bytes pumped before the last confirmed drain check was sent.
        var drained: Int64 = 0
        var checking = false
    }
    private let credit = Mutex(Credit())
    /// Sends a drain check to the view's web process and calls its argument when the web
    /// process has handled everything sent to it before (see ``AppScheme``); without one,
    /// bodies are not paced beyond their pipes.
    private let drainCheck = Mutex<(@Sendable (@escaping @Sendable () -> Void) -> Void)?>(nil)

    /// Installs the round trip the pump paces bodies by.
    func pace(by check: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        drainCheck.withLock { $0 = check }
    }

    /// Bodies handed over and not yet taken by the pump's thread.
    private let incoming = Mutex<[Job]>([])
    /// Wakes the pump's thread when a body comes: a byte written to `wake[1]`, read from `wake[0]`.
    private let wake: [Int32]

    private init() {
        var ends: [Int32] = [-1, -1]
        let made = clientctl_pipe2(&ends, O_CLOEXEC | O_NONBLOCK)
        precondition(made == 0, "clientctl-shell: cannot create the response pump's wake pipe (errno \(errno))")
        wake = ends
        let thread = Thread { [self] in run() }
        thread.name = "clientctl-pump"
        thread.start()
    }

    /// Returns the read end of a pipe that will carry `length` bytes of `file` from `offset`,
    /// for WebKit (which closes it); takes `file` over (closed when the body ends). `done`
    /// runs once the body ended: sent, cut short (the file shrank, a read failed) or refused
    /// by its reader (the page went away).
    func stream(file: Int32, from offset: Int64, length: Int64, done: @escaping @Sendable () -> Void) throws -> Int32 {
        var ends: [Int32] = [0, 0]
        guard clientctl_pipe2(&ends, O_CLOEXEC) == 0 else {
            let code = errno
            close(file)
            throw PumpError(message: "cannot create a pipe for a response body (errno \(code))")
        }
        // A full pipe must never block the pump; a smaller pipe than the default (64 KiB on
        // Linux: asked again in case the system's default is larger) bounds the bytes in flight.
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        _ = clientctl_set_pipe_size(ends[1], Self.pipeBytes)
        incoming.withLock { $0.append(Job(file: file, offset: offset, remaining: length, pipe: ends[1], done: done)) }
        wakeUp()
        return ends[0]
    }

    private func wakeUp() {
        var one: UInt8 = 1
        _ = write(wake[1], &one, 1)  // a full wake pipe already wakes the pump
    }

    /// Asks for a drain check when none is out and bytes were pumped since the last one.
    private func checkDrain(pumped: Int64) {
        let ask = credit.withLock { credit -> Bool in
            guard !credit.checking, pumped > credit.drained else { return false }
            credit.checking = true
            return true
        }
        guard ask else { return }
        guard let check = drainCheck.withLock({ $0 }) else {
            credit.withLock { $0 = Credit(drained: pumped, checking: false) }
            return
        }
        check { [self] in
            credit.withLock { $0 = Credit(drained: max($0.drained, pumped), checking: false) }
            wakeUp()
        }
    }

    struct PumpError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// The pump's thread: waits for room in any pipe (or a new body), then fills what it can.
    private func run() {
        // splice into a pipe whose reader is gone raises SIGPIPE on the calling thread:
        // blocked here (left pending on this thread alone), so the call returns EPIPE.
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
        var jobs: [Job] = []
        var polled: [pollfd] = []
        var pumped: Int64 = 0
        while true {
            // Past the window, only a confirmed drain (or a new body) wakes the pump.
            var allowance = Self.window - (pumped - credit.withLock { $0.drained })
            polled.removeAll(keepingCapacity: true)
            polled.append(pollfd(fd: wake[0], events: Int16(POLLIN), revents: 0))
            if allowance > 0 {
                for job in jobs { polled.append(pollfd(fd: job.pipe, events: Int16(POLLOUT), revents: 0)) }
            }
            guard poll(&polled, nfds_t(polled.count), -1) >= 0 else { continue }  // EINTR
            allowance = Self.window - (pumped - credit.withLock { $0.drained })
            let before = allowance
            var waiting: [Job] = []
            waiting.reserveCapacity(jobs.count)
            for (index, job) in jobs.enumerated() {
                if index + 1 >= polled.count || polled[index + 1].revents == 0 {
                    waiting.append(job)
                } else if let left = fill(job, allowance: &allowance) {
                    waiting.append(left)
                }
            }
            if polled[0].revents != 0 {
                var drained = [UInt8](repeating: 0, count: 256)
                while read(wake[0], &drained, drained.count) > 0 {}
                let new = incoming.withLock { jobs in
                    let taken = jobs
                    jobs.removeAll()
                    return taken
                }
                for job in new {
                    if let left = fill(job, allowance: &allowance) { waiting.append(left) }
                }
            }
            jobs = waiting
            pumped += before - allowance
            checkDrain(pumped: pumped)
        }
    }

    /// Moves what the pipe takes now, within `allowance` (lowered by what moved); returns
    /// the job when it waits for room or allowance, nil when it ended.
    private func fill(_ start: Job, allowance: inout Int64) -> Job? {
        var job = start
        while job.remaining > 0 {
            guard allowance > 0 else { return job }
            var offset = job.offset
            let moved = clientctl_splice_to_pipe(job.file, &offset, job.pipe, UInt(min(job.remaining, allowance, 1 << 20)))
            if moved > 0 {
                job.offset = offset
                job.remaining -= Int64(moved)
                allowance -= Int64(moved)
                continue
            }
            if moved < 0 && errno == EINTR { continue }
            if moved < 0 && errno == EAGAIN { return job }
            break  // 0: the file ended early; EPIPE: the reader is gone; any other error
        }
        // Closing the write end ends WebKit's stream: at the declared length, or short
        // (WebKit then fails the load rather than hand the page a truncated body as whole).
        close(job.pipe)
        close(job.file)
        job.done()
        return nil
    }
}
