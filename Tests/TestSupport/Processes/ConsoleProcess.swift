import ClientFoundation
import Foundation

/// A `clientctl console` child process for tests: started with the arguments given (plus
/// `--listen 127.0.0.1:0`), waited for until it prints `console on http://127.0.0.1:PORT/`
/// on stdout, stopped with a real signal.
public final class ConsoleProcess: Sendable {
    package let process: ChildProcess.Running
    public let stdoutPath: String
    public let stderrPath: String
    public let port: Int

    public let scheme: String
    public var baseURL: String { "\(scheme)://127.0.0.1:\(port)" }

    /// Starts `clientctl console --listen 127.0.0.1:0 ARGUMENTS` and waits until it listens
    /// (`tls`: with `--tls-cert` among the arguments, on https).
    public init(arguments: [String], scratch: String, tls: Bool = false) async throws {
        scheme = tls ? "https" : "http"
        let id = UUID().uuidString
        stdoutPath = scratch + "/console-\(id).stdout"
        stderrPath = scratch + "/console-\(id).stderr"
        let process = try ChildProcess(
            ClientctlBinary.path, ["console", "--listen", "127.0.0.1:0"] + arguments, input: .none, standardOutput: .file(stdoutPath),
            standardError: .file(stderrPath)
        ).start()
        self.process = process
        port = try await ListeningLine.wait(
            for: process, stderrPath: stdoutPath, marker: "console on \(scheme)://127.0.0.1:", what: "clientctl console")
    }

    deinit { process.killIfRunning() }

    public var stdout: String { ListeningLine.read(stdoutPath) }
    public var stderr: String { ListeningLine.read(stderrPath) }

    /// Sends `signal` and waits (30 s at most, then SIGKILL) for the end; returns the status.
    @discardableResult
    public func stop(_ signal: Int32 = SIGTERM) -> Int32 { process.stop(signal) }
}
