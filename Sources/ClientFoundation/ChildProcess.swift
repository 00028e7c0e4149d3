import Foundation
import Synchronization

/// The one way clientctl and its tests run a child process: `posix_spawn(3)`, bounded.
///
/// - Not Foundation's `Process`: its `run()` lists `/proc/self/fd` into a buffer that
///   `readdir` overruns past about 1,365 open descriptors (a SIGSEGV in `memmove` once in
///   CI while a test held 1,100 connections). Here the child closes every descriptor above
///   2 itself (`posix_spawn_file_actions_addclosefrom_np`, `close_range(2)` in glibc) and
///   the parent reads nothing.
/// - The child leads a process group of its own, so a deadline kills it with every process
///   it started that stayed in the group (``onTimeout`` can reach further, such as
///   descendants that left it).
/// - Output goes to files (unlinked temporary files for ``Output/memory(cap:)``), never to
///   a pipe a chatty child or a grandchild holding it open could stall; at most `cap` bytes
///   of each are read back.
/// - The deadline is a Dispatch timer, not a task's sleep: on a busy cooperative pool a task
///   can resume tens of seconds late (a 1 s deadline once fired after 33 s). It is disarmed
///   before the child is reaped (`waitid(WNOWAIT)` first), so a reused pid is never killed.
/// - ``run()`` waits on a thread of its own and resumes a continuation: no thread of the
///   cooperative pool blocks while a child runs.
package struct ChildProcess: Sendable {
    /// The child's standard input.
    package enum Input: Sendable {
        /// `/dev/null`.
        case none
        /// These bytes (from an unlinked temporary file, so a child that does not read them
        /// never blocks the parent).
        case data(Data)
        /// A descriptor of the caller's, duplicated onto the child's standard input; the
        /// caller keeps and closes it.
        case fileDescriptor(Int32)
    }

    /// Where standard output or standard error goes.
    package enum Output: Sendable {
        /// `/dev/null`.
        case discard
        /// The parent's own descriptor (1 or 2).
        case inherit
        /// A file at this path, created or truncated (mode 0600); nothing is read back.
        case file(String)
        /// Kept in memory: at most `cap` bytes read back after the child ended (the rest is
        /// counted as overflow).
        case memory(cap: Int)
    }

    /// How the child ended.
    package enum Termination: Sendable, Equatable, CustomStringConvertible {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signaled(Int32)

        /// The shell's convention: the status, or 128 + the signal number.
        package var shellStatus: Int32 {
            switch self {
            case .exited(let status): status
            case .signaled(let signal): 128 + signal
            }
        }

        package var description: String {
            switch self {
            case .exited(let status): "exit status \(status)"
            case .signaled(let signal): "signal \(signal)"
            }
        }
    }

    /// What a finished child did.
    package struct Result: Sendable {
        package var termination: Termination
        /// Standard output when it was ``Output/memory(cap:)``, else empty.
        package var standardOutput = Data()
        /// Standard error when it was ``Output/memory(cap:)``, else empty.
        package var standardError = Data()
        /// The child wrote more than the cap on standard output (the bytes past it are lost).
        package var outputOverflowed = false
        /// The child wrote more than the cap on standard error.
        package var errorOverflowed = false
        /// The deadline killed it: how many processes ``onTimeout`` counted (at least 1).
        package var killedAtDeadline: Int?
        /// True when the deadline killed it.
        package var timedOut: Bool { killedAtDeadline != nil }
    }

    /// A path, or a name looked up in `PATH` (then `/usr/bin`, `/bin`, `/usr/sbin`, `/sbin`).
    package var executable: String
    package var arguments: [String]
    /// Variables set on top of this process's environment.
    package var environment: [String: String] = [:]
    /// The child's working directory (this process's when `nil`).
    package var directory: String?
    package var input: Input = .none
    package var standardOutput: Output = .memory(cap: 1 << 20)
    package var standardError: Output = .memory(cap: 1 << 20)
    /// How long the child may run; past it the group is killed. `nil` for no limit.
    package var timeout: Duration?
    /// Called at the deadline with the child's pid, before its group is killed, while the
    /// child is not reaped yet (its pid cannot be reused): kills what the group kill cannot
    /// reach and returns how many processes it killed.
    package var onTimeout: (@Sendable (Int32) -> Int)?
    /// Called with the child's pid right after it started (a terminal handover, a record).
    package var onStart: (@Sendable (Int32) -> Void)?

    package init(
        _ executable: String, _ arguments: [String] = [], environment: [String: String] = [:], directory: String? = nil,
        input: Input = .none, standardOutput: Output = .memory(cap: 1 << 20), standardError: Output = .memory(cap: 1 << 20),
        timeout: Duration? = nil
    ) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.directory = directory
        self.input = input
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.timeout = timeout
    }

    /// A child that could not be started.
    package struct SpawnError: Error, CustomStringConvertible {
        package let executable: String
        package let errno: Int32
        package var description: String { "cannot run \(executable): \(String(cString: strerror(errno)))" }
    }

    /// Runs the child to its end, suspending the task (the wait is on a thread of its own).
    package func run() async throws -> Result {
        let running = try start()
        return await running.wait()
    }

    /// Runs the child to its end, blocking the calling thread: only for callers already on
    /// a thread of their own (``BlockingExecutor``, a synchronous tool run).
    package func runBlocking() throws -> Result {
        let running = try start()
        return running.waitBlocking()
    }

    /// Starts the child and returns its handle (see ``Running``).
    package func start() throws -> Running {
        let path = try Self.resolve(executable)
        let streams = try Streams(input: input, output: standardOutput, error: standardError)
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        let pid: Int32
        do {
            pid = try Spawn.spawn(
                path: path, arguments: [executable] + arguments, environment: env.map { "\($0.key)=\($0.value)" },
                directory: directory, descriptors: streams.childDescriptors)
        } catch {
            streams.closeChildEnds()
            streams.close()
            throw error
        }
        streams.closeChildEnds()
        let running = Running(pid: pid, streams: streams)
        onStart?(pid)
        if let timeout { running.arm(after: timeout, onTimeout: onTimeout) }
        return running
    }

    /// `executable` as a path to spawn.
    static func resolve(_ executable: String) throws -> String {
        if executable.contains("/") { return executable }
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        guard
            let found = (folders + ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]).map({ $0 + "/" + executable }).first(where: { access($0, X_OK) == 0 })
        else { throw SpawnError(executable: executable, errno: ENOENT) }
        return found
    }
}

extension ChildProcess {
    /// A started child: its pid, a wait that suspends (or blocks, for threads of one's own),
    /// and signals to its group.
    package final class Running: Sendable {
        /// The child's pid, which is also its process group's id.
        package let pid: Int32
        private let streams: Streams
        private struct State {
            var exited = false
            var killed: Int?
            var result: Result?
            var waiters: [CheckedContinuation<Result, Never>] = []
            /// Threads blocked in ``waitBlocking()`` while another caller reaps.
            var blocked: [DispatchSemaphore] = []
            var reaping = false
        }
        private let state = Mutex(State())

        init(pid: Int32, streams: Streams) {
            self.pid = pid
            self.streams = streams
        }

        deinit {
            // A handle dropped unwaited must not leave a zombie or a runaway group.
            let done = state.withLock { $0.result != nil || $0.reaping }
            if !done {
                _ = kill(-pid, SIGKILL)
                let pid = pid
                let streams = streams
                Thread.detachNewThread {
                    var status: Int32 = 0
                    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                    streams.close()
                }
            }
        }

        /// The end of the child, suspending the task until then (a thread of its own waits).
        package func wait() async -> Result {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result, Never>) in
                let start = state.withLock { state -> (Result?, Bool) in
                    if let result = state.result { return (result, false) }
                    state.waiters.append(continuation)
                    defer { state.reaping = true }
                    return (nil, !state.reaping)
                }
                if let result = start.0 {
                    continuation.resume(returning: result)
                } else if start.1 {
                    Thread.detachNewThread { [self] in _ = reap() }
                }
            }
        }

        /// The end of the child, blocking the calling thread until then. It never waits for
        /// a task: called on Swift's cooperative pool (a `deinit` there), a wait that needed
        /// the pool to make progress deadlocked once every pool thread waited so.
        package func waitBlocking() -> Result {
            let done = DispatchSemaphore(value: 0)
            let start = state.withLock { state -> (known: Result?, reaper: Bool) in
                if let result = state.result { return (result, false) }
                defer { state.reaping = true }
                if state.reaping { state.blocked.append(done) }
                return (nil, !state.reaping)
            }
            if let known = start.known { return known }
            if start.reaper { return reap() }
            // Another caller reaps: it signals once the result is recorded.
            done.wait()
            return state.withLock { $0.result } ?? Result(termination: .exited(-1))
        }

        /// Sends `signal` to the child's whole process group, unless it has ended.
        package func signal(_ signal: Int32) {
            state.withLock { state in
                guard !state.exited else { return }
                _ = kill(-pid, signal)
            }
        }

        /// Sends `signal` to the child alone, unless it has ended.
        package func signalChild(_ signal: Int32) {
            state.withLock { state in
                guard !state.exited else { return }
                _ = kill(pid, signal)
            }
        }

        /// True until the child has ended.
        package var isRunning: Bool { !hasEnded }

        /// True once the child has ended (it may not be reaped yet).
        package var hasEnded: Bool {
            if state.withLock({ $0.exited }) { return true }
            var info = siginfo_t()
            let found = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)
            return found == 0 && info._sifields._sigchld.si_pid == pid
        }

        /// The deadlines' own queue: a queue of one's own gets a thread when it needs one,
        /// whereas the global queue's few threads can all be held by blocking work of others
        /// (a 1 s deadline once fired 6 s late beside the whole suite).
        private static let deadlines = DispatchQueue(label: "ChildProcess.deadline")

        func arm(after timeout: Duration, onTimeout: (@Sendable (Int32) -> Int)?) {
            let (seconds, attoseconds) = timeout.components
            let nanoseconds = Int(clamping: seconds) &* 1_000_000_000 &+ Int(attoseconds / 1_000_000_000)
            Self.deadlines.asyncAfter(deadline: .now() + .nanoseconds(max(0, nanoseconds))) { [weak self] in
                guard let self else { return }  // dropped: its deinit killed the group
                state.withLock { state in
                    // Ended means the child may be reaped any moment and its pid reused: the
                    // timer is disarmed (this check, under the lock the reaper takes first).
                    guard !state.exited else { return }
                    let counted = onTimeout?(pid) ?? 1
                    _ = kill(-pid, SIGKILL)
                    state.killed = max(1, counted)
                }
            }
        }

        /// Waits for the end (without reaping), disarms the deadline, reaps, reads the
        /// output and hands the result to every waiter.
        private func reap() -> Result {
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
            let killed = state.withLock { state -> Int? in
                state.exited = true
                return state.killed
            }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            let termination: Termination =
                (status & 0x7f) == 0 ? .exited((status >> 8) & 0xff) : .signaled(status & 0x7f)
            var result = Result(termination: termination, killedAtDeadline: killed)
            (result.standardOutput, result.outputOverflowed) = streams.readOutput()
            (result.standardError, result.errorOverflowed) = streams.readError()
            streams.close()
            let (waiters, blocked) = state.withLock { state in
                state.result = result
                defer { (state.waiters, state.blocked) = ([], []) }
                return (state.waiters, state.blocked)
            }
            for waiter in waiters { waiter.resume(returning: result) }
            for thread in blocked { thread.signal() }
            return result
        }
    }
}
