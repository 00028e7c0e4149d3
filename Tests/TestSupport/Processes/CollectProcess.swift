import ClientFoundation
import Foundation

/// A `clientctl collect` child process for tests: a read token file of its own, a free
/// port on 127.0.0.1, stopped (or killed) with a real signal.
public final class CollectProcess: Sendable {
    /// The running collector.
    package let process: ChildProcess.Running
    public let stderrPath: String
    public let port: Int
    /// The read token (in `tokenPath`, mode 600).
    public let token: String
    public let tokenPath: String

    public var baseURL: String { "http://127.0.0.1:\(port)/" }
    public var pid: Int32 { process.pid }

    /// Starts `clientctl collect --listen 127.0.0.1:0 --database DATABASE --read-token-file …`
    /// with `arguments` and waits until it listens.
    public init(database: String, arguments: [String] = [], scratch: String) async throws {
        let id = UUID().uuidString
        let stderrPath = scratch + "/collect-\(id).stderr"
        self.stderrPath = stderrPath
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        token = "token-" + id.replacingOccurrences(of: "-", with: "").lowercased()
        tokenPath = scratch + "/read-token-\(id)"
        guard FileManager.default.createFile(atPath: tokenPath, contents: Data((token + "\n").utf8), attributes: [.posixPermissions: 0o600])
        else { throw HarnessError("cannot write \(tokenPath)") }
        let all = ["collect", "--listen", "127.0.0.1:0", "--database", database, "--read-token-file", tokenPath] + arguments
        let process = try ChildProcess(
            ClientctlBinary.path, all, input: .none, standardOutput: .discard, standardError: .file(stderrPath)
        ).start()
        self.process = process
        port = try await ListeningLine.wait(
            for: process, stderrPath: stderrPath, marker: "collecting on http://127.0.0.1:", what: "clientctl collect")
    }

    deinit { process.killIfRunning() }

    public var stderr: String { ListeningLine.read(stderrPath) }

    /// Sends `signal` and waits (30 s at most, then SIGKILL) for the end; returns the status.
    @discardableResult
    public func stop(_ signal: Int32 = SIGTERM) -> Int32 { process.stop(signal) }

    /// `POST /v1/reports` with `body` as JSON (`encoding`: a Content-Encoding header;
    /// `headers`: more, as `Name: value`).
    public func post(_ body: Data, contentType: String = "application/json", encoding: String? = nil, headers more: [String] = []) async throws
        -> CurlResponse
    {
        var headers = ["Content-Type: \(contentType)"] + more
        if let encoding { headers.append("Content-Encoding: \(encoding)") }
        return try await Curl.request(baseURL + "v1/reports", method: "POST", headers: headers, body: body)
    }

    /// `GET path` with the read token as a bearer token (`token: nil`: none).
    public func read(_ path: String, token: String?) async throws -> CurlResponse {
        try await Curl.request(baseURL + path.drop { $0 == "/" }, headers: token.map { ["Authorization: Bearer \($0)"] } ?? [])
    }
}
