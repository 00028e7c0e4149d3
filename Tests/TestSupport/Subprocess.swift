import Foundation

/// Runs a command to completion and captures its output, for tests that drive real tools
/// (`openssl`, `bsdtar`, the built `clientctl`).
///
/// Output goes through temporary files rather than pipes, so a chatty child can never
/// block on a full pipe buffer.
public enum Subprocess {
    /// What a finished command did.
    public struct Result: Sendable {
        /// Exit status (or 128 + signal number when killed by a signal).
        public var status: Int32
        public var stdout: Data
        public var stderr: Data
        /// `stdout` as UTF-8 text.
        public var output: String { String(decoding: stdout, as: UTF8.self) }
        /// `stderr` as UTF-8 text.
        public var errorOutput: String { String(decoding: stderr, as: UTF8.self) }
    }

    /// Runs `executable` (a path, or a name looked up in `PATH`) with `arguments`.
    ///
    /// The wait for the child suspends the calling task instead of blocking its thread:
    /// Swift Testing runs the suite's tests on the cooperative pool (one thread per core),
    /// and a test blocked on a child for seconds (a `clientctl` run, Chromium) would starve
    /// every in-process server and timer of the tests beside it.
    /// - Parameters:
    ///   - input: bytes for the child's stdin (empty stdin when `nil`).
    ///   - environment: extra variables on top of this process's environment.
    ///   - directory: the child's working directory.
    ///   - gate: where the child waits for a place (``gate`` by default); `nil` for a light,
    ///     short client (`curl`) inside a timed window of a test, such as a trial's
    ///     startup timeout, which must not queue behind slow children.
    ///   - timeout: how long the child may run (10 minutes by default, far above any
    ///     command a test runs); past it the child and every process it started are killed
    ///     and ``TimedOut`` names the command, so a hung child fails its test instead of
    ///     holding the whole suite until CI's limit.
    @discardableResult
    public static func run(
        _ executable: String, _ arguments: [String], input: Data? = nil,
        environment: [String: String] = [:], directory: String? = nil,
        gate: AsyncGate? = Subprocess.gate, timeout: Duration = .seconds(600)
    ) async throws -> Result {
        try await gate?.enter()
        defer { gate?.leave() }
        let child = try Child(executable, arguments, input: input, environment: environment, directory: directory)
        defer { child.cleanUp() }
        let deadline = Deadline()
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            // Disarmed as soon as Foundation reports the child reaped: its pid may be reused after.
            child.process.terminationHandler = { _ in
                deadline.disarm()
                done.resume()
            }
            do {
                try child.process.run()
                deadline.arm(pid: child.process.processIdentifier, after: timeout)
            } catch {
                child.process.terminationHandler = nil
                done.resume(throwing: error)
            }
        }
        let result = child.result()
        if let killed = deadline.killed {
            throw TimedOut(command: ([executable] + arguments).joined(separator: " "), timeout: timeout, killed: killed, stderr: result.errorOutput)
        }
        return result
    }

    /// A child of ``run(_:_:input:environment:directory:gate:timeout:)-async`` ran past its
    /// timeout and was killed with the processes it started.
    public struct TimedOut: Error, CustomStringConvertible {
        public let command: String
        public let timeout: Duration
        /// How many processes were killed (the child and its descendants).
        public let killed: Int
        /// The end of what the child wrote on stderr.
        public let stderr: String

        public var description: String {
            "`\(command.prefix(300))` ran longer than \(timeout) and was killed with \(killed - 1) processes it started; "
                + "its stderr ended: \(stderr.suffix(1000))"
        }
    }

    /// Kills a child and its descendants when its time is up, unless disarmed first. The
    /// timer is Dispatch's, not a task's: under the whole suite the cooperative pool's two
    /// threads can be busy for tens of seconds, and a deadline must not wait for them.
    private final class Deadline: @unchecked Sendable {
        // @unchecked Sendable: its state is guarded by `lock`.
        private let lock = NSLock()
        private var timer: DispatchWorkItem?
        private var killedCount: Int?
        private var disarmed = false

        /// How many processes the timer killed, if it fired.
        var killed: Int? { lock.withLock { killedCount } }

        /// Called right after the child started, possibly after it ended (then it does nothing).
        func arm(pid: Int32, after timeout: Duration) {
            let item = DispatchWorkItem { [self] in
                lock.withLock {
                    // Disarmed means the child was reaped and its pid may be reused.
                    guard !disarmed else { return }
                    killedCount = ProcessTree.kill(pid)
                }
            }
            lock.withLock {
                guard !disarmed else { return }
                timer = item
                let (seconds, attoseconds) = timeout.components
                let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
                DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds), execute: item)
            }
        }

        /// Stops the timer (the child has ended).
        func disarm() {
            lock.withLock {
                disarmed = true
                timer?.cancel()
            }
        }
    }

    /// The same, blocking the calling thread: only for quick tools (`bsdtar`, `openssl`)
    /// called from synchronous helpers, which finish in milliseconds.
    @discardableResult
    public static func run(
        _ executable: String, _ arguments: [String], input: Data? = nil,
        environment: [String: String] = [:], directory: String? = nil
    ) throws -> Result {
        let child = try Child(executable, arguments, input: input, environment: environment, directory: directory)
        defer { child.cleanUp() }
        try child.process.run()
        child.process.waitUntilExit()
        return child.result()
    }

    /// At most this many children started by ``run(_:_:input:environment:directory:)-async``
    /// run at once (one more than the cores): waiting no longer blocks a thread, so
    /// without a gate the parallel suite would start dozens of `clientctl` and Chromium
    /// processes together and starve everything of CPU.
    public static let gate = AsyncGate(limit: ProcessInfo.processInfo.activeProcessorCount + 1)

    /// A configured child process whose output goes to files in a scratch folder.
    private final class Child: @unchecked Sendable {
        // @unchecked Sendable: handed to the termination handler only to resume a continuation.
        let process = Process()
        let scratch = NSTemporaryDirectory() + "/subprocess-\(getpid())-\(UUID().uuidString)"
        let handles: [FileHandle]

        init(_ executable: String, _ arguments: [String], input: Data?, environment: [String: String], directory: String?) throws {
            try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: scratch + "/stdout", contents: nil)
            _ = FileManager.default.createFile(atPath: scratch + "/stderr", contents: nil)
            _ = FileManager.default.createFile(atPath: scratch + "/stdin", contents: input ?? Data())
            if executable.contains("/") {
                process.executableURL = URL(fileURLWithPath: executable)
                process.arguments = arguments
            } else {
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = [executable] + arguments
            }
            if !environment.isEmpty {
                process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            }
            if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
            let stdout = try FileHandle(forWritingTo: URL(fileURLWithPath: scratch + "/stdout"))
            let stderr = try FileHandle(forWritingTo: URL(fileURLWithPath: scratch + "/stderr"))
            let stdin = try FileHandle(forReadingFrom: URL(fileURLWithPath: scratch + "/stdin"))
            process.standardOutput = stdout
            process.standardError = stderr
            process.standardInput = stdin
            handles = [stdout, stderr, stdin]
        }

        func result() -> Result {
            for handle in handles { try? handle.close() }
            let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
            return Result(
                status: status,
                stdout: FileManager.default.contents(atPath: scratch + "/stdout") ?? Data(),
                stderr: FileManager.default.contents(atPath: scratch + "/stderr") ?? Data())
        }

        func cleanUp() {
            for handle in handles { try? handle.close() }
            try? FileManager.default.removeItem(atPath: scratch)
        }
    }

    /// True when `name` is an executable found in `PATH`.
    public static func isAvailable(_ name: String) -> Bool {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return paths.contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
    }
}
