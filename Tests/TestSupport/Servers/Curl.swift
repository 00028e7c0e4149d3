import Foundation

/// What `curl` got back: the status, the header fields (lowercased names) and the body.
public struct CurlResponse: Sendable {
    public let status: Int
    public let headers: [String: String]
    public let data: Data
    /// The body as UTF-8 text.
    public var body: String { String(decoding: data, as: UTF8.self) }
    /// A header field by lowercased name.
    public subscript(_ name: String) -> String? { headers[name] }
}

/// HTTP through the real `curl` (the one HTTP client of the binary and pipeline tests).
public enum Curl {
    /// One request; `HEAD` is sent as `curl -I` (no body awaited).
    /// - Parameters:
    ///   - headers: request header lines (`"Name: value"`).
    ///   - body: the request body (sent as is).
    /// - Throws: ``HarnessError`` when curl fails (no connection, no answer in 20 s).
    public static func request(
        _ url: String, method: String = "GET", headers: [String] = [], body: Data? = nil
    ) async throws -> CurlResponse {
        let dir = try TemporaryDirectory("curl")
        var args = ["-s", "-D", dir("head"), "-o", dir("body"), "--max-time", "20"]
        args += method == "HEAD" ? ["-I"] : method == "GET" ? [] : ["-X", method]
        for h in headers { args += ["-H", h] }
        if let body {
            try body.write(to: URL(fileURLWithPath: dir("request")))
            args += ["--data-binary", "@" + dir("request")]
        }
        let result = try await Subprocess.run("curl", args + [url], gate: nil)
        guard result.status == 0 else { throw HarnessError("curl \(method) \(url) failed (\(result.status)): \(result.errorOutput)") }
        let head = try String(contentsOfFile: dir("head"), encoding: .utf8)
        var fields: [String: String] = [:]
        var status: Int?
        for line in head.split(separator: "\r\n") {
            if line.hasPrefix("HTTP/") {
                // A later status line (after 100 Continue) starts a new block.
                status = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
                fields = [:]
            } else if let colon = line.firstIndex(of: ":") {
                fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        guard let status else { throw HarnessError("curl \(method) \(url): no status line in \(head.debugDescription)") }
        let data = FileManager.default.contents(atPath: dir("body")) ?? Data()
        return CurlResponse(status: status, headers: fields, data: data)
    }
}
