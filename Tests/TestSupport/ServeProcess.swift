import ClientShim
import Foundation

/// A `clientctl serve` child process for tests: started on a free port, talked to with
/// `curl`, stopped with a real signal.
public final class ServeProcess: @unchecked Sendable {
    // @unchecked: used from one test task at a time.
    public let process = Process()
    public let stderrPath: String
    public private(set) var port = 0

    public var baseURL: String { "http://127.0.0.1:\(port)/" }
    public var pid: Int32 { process.processIdentifier }

    /// Starts `clientctl serve --root ROOT --port 0 …` and waits until it listens; with
    /// `ulimit`, under that open-file limit (`bash -c 'ulimit -n N; exec clientctl …'`);
    /// `environment` is added to this process's.
    public init(
        root: String, arguments: [String] = [], scratch: String, ulimit: Int? = nil, environment: [String: String] = [:]
    ) async throws {
        stderrPath = scratch + "/serve-\(UUID().uuidString).stderr"
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        let serveArguments = ["serve", "--root", root, "--port", "0", "--check-interval", "0"] + arguments
        if let ulimit {
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["-c", "ulimit -n \(ulimit) && exec \"$0\" \"$@\"", ClientctlBinary.path] + serveArguments
        } else {
            process.executableURL = URL(fileURLWithPath: ClientctlBinary.path)
            process.arguments = serveArguments
        }
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        try process.run()
        // Looks once more after the deadline: a test task that waited past it on a busy pool
        // must still see a line serve printed meanwhile (a CI run refused a listening serve).
        let deadline = Date().addingTimeInterval(30)
        while true {
            if let found = Self.port(in: stderr) {
                port = found
                return
            }
            guard process.isRunning, Date() < deadline else { break }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        if process.isRunning { process.terminate() }
        throw HarnessError("clientctl serve did not start listening: \(stderr)")
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    public var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    public static func port(in text: String) -> Int? {
        guard let range = text.range(of: "serving http://127.0.0.1:") else { return nil }
        let digits = text[range.upperBound...].prefix { $0.isNumber }
        return Int(digits)
    }

    /// Sends `signal` and waits for the process to end; returns its exit status (or 128 + signal).
    @discardableResult
    public func stop(_ signal: Int32 = SIGTERM) -> Int32 {
        kill(process.processIdentifier, signal)
        // Bounded: a serve that has not ended 30 s after the signal is killed (and its status
        // says so), so a stuck shutdown fails its test instead of blocking a test thread.
        let deadline = ContinuousClock.now + .seconds(30)
        while process.isRunning && ContinuousClock.now < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    }

    /// `POST /__clientctl/<name>` as the shim sends it.
    public func control(_ name: String) async throws -> CurlResponse {
        try await Curl.request(baseURL + "__clientctl/" + name, method: "POST", headers: ["X-Clientctl-Shim: 1"])
    }

    public func get(_ path: String) async throws -> CurlResponse {
        try await Curl.request(baseURL + path.drop { $0 == "/" })
    }
}
