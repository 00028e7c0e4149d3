import ClientFoundation
import Foundation

/// Runs a command to completion and captures its output, for tests that drive real tools
/// (`openssl`, `bsdtar`, the built `clientctl`): a thin layer over ClientFoundation's
/// ``ChildProcess``, the one runner of the product and the tests (posix_spawn, not
/// Foundation's `Process`, whose `run()` overran readdir's buffer past about 1,365 open
/// descriptors).
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

        init(_ ran: ChildProcess.Result) {
            status = ran.termination.shellStatus
            stdout = ran.standardOutput
            stderr = ran.standardError
        }
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
        var child = Self.child(executable, arguments, input: input, environment: environment, directory: directory)
        // ChildProcess's deadline is a Dispatch timer, disarmed before the child is reaped
        // (so a reused pid is never killed); at it, every descendant is killed (even one
        // that left the child's process group), then the group.
        child.timeout = timeout
        child.onTimeout = { pid in ProcessTree.kill(pid) }
        let ran = try await child.run()
        let result = Result(ran)
        if let killed = ran.killedAtDeadline {
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

    /// The same, blocking the calling thread: only for quick tools (`bsdtar`, `openssl`)
    /// called from synchronous helpers, which finish in milliseconds.
    @discardableResult
    public static func run(
        _ executable: String, _ arguments: [String], input: Data? = nil,
        environment: [String: String] = [:], directory: String? = nil
    ) throws -> Result {
        Result(try child(executable, arguments, input: input, environment: environment, directory: directory).runBlocking())
    }

    /// At most this many children started by ``run(_:_:input:environment:directory:)-async``
    /// run at once (one more than the cores): waiting no longer blocks a thread, so
    /// without a gate the parallel suite would start dozens of `clientctl` and Chromium
    /// processes together and starve everything of CPU.
    public static let gate = AsyncGate(limit: ProcessInfo.processInfo.activeProcessorCount + 1)

    /// The child to run: a name is looked up by `/usr/bin/env` in the child's environment
    /// (as before, so a `PATH` in `environment` counts); stdin is `input` (empty when
    /// `nil`); stdout and stderr are kept whole (in unlinked files while it runs).
    private static func child(
        _ executable: String, _ arguments: [String], input: Data?, environment: [String: String], directory: String?
    ) -> ChildProcess {
        let (path, all) = executable.contains("/") ? (executable, arguments) : ("/usr/bin/env", [executable] + arguments)
        return ChildProcess(
            path, all, environment: environment, directory: directory, input: .data(input ?? Data()),
            standardOutput: .memory(cap: .max), standardError: .memory(cap: .max))
    }

    /// True when `name` is an executable found in `PATH`.
    public static func isAvailable(_ name: String) -> Bool {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return paths.contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
    }
}
