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
    /// - Parameters:
    ///   - input: bytes for the child's stdin (empty stdin when `nil`).
    ///   - environment: extra variables on top of this process's environment.
    ///   - directory: the child's working directory.
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String], input: Data? = nil,
                           environment: [String: String] = [:], directory: String? = nil) throws -> Result {
        let scratch = NSTemporaryDirectory() + "/subprocess-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let outPath = scratch + "/stdout", errPath = scratch + "/stderr", inPath = scratch + "/stdin"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        _ = FileManager.default.createFile(atPath: inPath, contents: input ?? Data())

        let process = Process()
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
        let stdoutHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let stderrHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        let stdinHandle = try FileHandle(forReadingFrom: URL(fileURLWithPath: inPath))
        process.standardOutput = stdoutHandle
        process.standardError = stderrHandle
        process.standardInput = stdinHandle
        try process.run()
        process.waitUntilExit()
        try? stdoutHandle.close()
        try? stderrHandle.close()
        try? stdinHandle.close()
        let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return Result(status: status,
                      stdout: FileManager.default.contents(atPath: outPath) ?? Data(),
                      stderr: FileManager.default.contents(atPath: errPath) ?? Data())
    }

    /// True when `name` is an executable found in `PATH`.
    public static func isAvailable(_ name: String) -> Bool {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return paths.contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
    }
}
