import ClientFoundation
import ClientShim
import Foundation

/// A `clientctl serve` child process for tests: started on a free port, talked to with
/// `curl`, stopped with a real signal.
public final class ServeProcess: Sendable {
    /// The running serve (``ChildProcess``: posix_spawn, not Foundation's `Process`).
    package let process: ChildProcess.Running
    /// Started under a wrapper (`faketime`): signals go to the whole process group.
    let wrapped: Bool
    public let stderrPath: String
    public let port: Int

    public var baseURL: String { "http://127.0.0.1:\(port)/" }
    public var pid: Int32 { process.pid }

    /// Starts `clientctl serve --root ROOT --port 0 …` and waits until it listens; with
    /// `ulimit`, under that open-file limit (`bash -c 'ulimit -n N; exec clientctl …'`);
    /// `environment` is added to this process's; `wrapper` runs it (`faketime -f +0 env …`).
    public init(
        root: String, arguments: [String] = [], scratch: String, ulimit: Int? = nil, environment: [String: String] = [:],
        wrapper: [String] = []
    ) async throws {
        let stderrPath = scratch + "/serve-\(UUID().uuidString).stderr"
        self.stderrPath = stderrPath
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        let serveArguments = ["serve", "--root", root, "--port", "0", "--check-interval", "0"] + arguments
        let (executable, all) =
            if let ulimit {
                ("/bin/bash", ["-c", "ulimit -n \(ulimit) && exec \"$0\" \"$@\"", ClientctlBinary.path] + serveArguments)
            } else if let first = wrapper.first {
                (first, Array(wrapper.dropFirst()) + [ClientctlBinary.path] + serveArguments)
            } else {
                (ClientctlBinary.path, serveArguments)
            }
        let process = try ChildProcess(
            executable, all, environment: environment, input: .none, standardOutput: .discard, standardError: .file(stderrPath)
        ).start()
        self.process = process
        self.wrapped = !wrapper.isEmpty
        port = try await ListeningLine.wait(
            for: process, stderrPath: stderrPath, marker: "serving http://127.0.0.1:", what: "clientctl serve")
    }

    deinit {
        // A wrapper (faketime) runs serve as a child of its own: the whole group goes.
        if wrapped, process.isRunning {
            process.signal(SIGKILL)
            _ = process.waitBlocking()
        }
        process.killIfRunning()
        if wrapped { FaketimeLeftovers.remove(pid: process.pid) }
    }

    public var stderr: String { ListeningLine.read(stderrPath) }

    /// Sends `signal` and waits for the process to end; returns its exit status (or 128 + signal).
    /// Under a wrapper the signal goes to the whole process group, serve included.
    @discardableResult
    public func stop(_ signal: Int32 = SIGTERM) -> Int32 {
        guard wrapped else { return process.stop(signal) }
        process.signal(signal)
        let deadline = ContinuousClock.now + .seconds(30)
        while process.isRunning && ContinuousClock.now < deadline { usleep(20_000) }
        if process.isRunning { process.signal(SIGKILL) }
        let status = process.waitBlocking().termination.shellStatus
        FaketimeLeftovers.remove(pid: process.pid)
        return status
    }

    /// `POST /__clientctl/<name>` as the shim sends it.
    public func control(_ name: String) async throws -> CurlResponse {
        try await Curl.request(baseURL + "__clientctl/" + name, method: "POST", headers: ["X-Clientctl-Shim: 1"])
    }

    public func get(_ path: String) async throws -> CurlResponse {
        try await Curl.request(baseURL + path.drop { $0 == "/" })
    }
}
