import Foundation

/// A request as received by ``LoopbackHTTPServer`` and kept in its log.
public struct LoopbackRequest: Sendable, CustomStringConvertible {
    /// 1-based position among all requests this server received (across restarts).
    public let index: Int
    /// 1-based serial number of the TCP connection that carried it.
    public let connection: Int
    /// `GET`, `HEAD`, …
    public let method: String
    /// The raw request target, e.g. `/a/b.tgz?x=1`.
    public let target: String
    /// The path part of the target, percent-decoded (`/a/b.tgz`).
    public let path: String
    /// The raw query string without `?`, or nil when the target has none.
    public let query: String?
    /// Header fields, names lowercased; repeated fields joined with `, `.
    public let headers: [String: String]
    /// `HTTP/1.1` or `HTTP/1.0`.
    public let version: String

    /// The value of a header (case-insensitive name).
    public subscript(header name: String) -> String? { headers[name.lowercased()] }

    /// Query parameters by name (last wins), percent-decoded. A bare `name` maps to "".
    public var queryItems: [String: String] {
        guard let query else { return [:] }
        var items: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : ""
            items[name] = value
        }
        return items
    }

    public var description: String { "#\(index) conn\(connection) \(method) \(target)" }
}

/// One request and what the server did with it.
public struct LoopbackExchange: Sendable, CustomStringConvertible {
    public let request: LoopbackRequest
    /// The status sent, or nil when the connection was dropped before a response.
    public internal(set) var status: Int?
    /// Body bytes actually written to the socket.
    public internal(set) var bodyBytesSent: Int64
    /// True once the response was fully delivered as planned (faults included).
    public internal(set) var finished: Bool

    public var description: String {
        "\(request) -> \(status.map(String.init) ?? "dropped") \(bodyBytesSent)B"
    }
}

/// What the server sends back. Build one with the static helpers, then adjust fields.
public struct LoopbackResponse: Sendable {
    /// Where the body bytes come from.
    public enum Body: Sendable {
        case empty
        case data(Data)
        /// A region of a file, read in chunks while sending (never whole in memory).
        case file(path: String, offset: Int64, length: Int64)

        public var count: Int64 {
            switch self {
            case .empty: return 0
            case .data(let d): return Int64(d.count)
            case .file(_, _, let length): return length
            }
        }
    }

    /// How the body is delivered: faults are expressed here.
    public struct Delivery: Sendable {
        /// What happens after `stopAfter` body bytes.
        public enum Ending: Sendable {
            /// Close the connection normally (FIN): the body is truncated.
            case close
            /// Reset the connection (RST, `SO_LINGER` 0).
            case reset
            /// Keep the connection open without sending anything until the client gives up
            /// or the server stops.
            case stall
        }
        /// Close the connection (with RST) right after reading the request, sending nothing.
        public var dropWithoutResponse = false
        /// Stop after this many body bytes, then do `ending`.
        public var stopAfter: Int64?
        public var ending: Ending = .close
        /// Slow drip: send at most `dripBytes` every `dripInterval` seconds.
        public var dripBytes: Int?
        public var dripInterval: Double = 0
        public init() {}
    }

    public var status: Int
    /// Extra header fields. `Content-Length` is added from the body unless present here.
    public var headers: [(String, String)]
    public var body: Body
    /// The `Content-Length` to declare instead of the body's real length (a lying server).
    public var declaredLength: Int64?
    /// Send no `Content-Length`; the body then ends when the connection closes.
    public var omitContentLength = false
    public var delivery = Delivery()

    public init(status: Int, headers: [(String, String)] = [], body: Body = .empty) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response whose body is the UTF-8 of `text`.
    public static func text(_ text: String, status: Int = 200, contentType: String = "text/plain") -> LoopbackResponse {
        LoopbackResponse(status: status, headers: [("Content-Type", contentType)], body: .data(Data(text.utf8)))
    }

    /// A body-less response with this status (and a short text body for errors).
    public static func status(_ status: Int) -> LoopbackResponse {
        if status == 304 || status == 204 || status < 200 { return LoopbackResponse(status: status) }
        return .text("\(status) \(LoopbackResponse.reason(status))\n", status: status)
    }

    /// The first value of a header (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// Replaces (or adds) a header.
    public mutating func setHeader(_ name: String, _ value: String?) {
        headers.removeAll { $0.0.lowercased() == name.lowercased() }
        if let value { headers.append((name, value)) }
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 204: return "No Content"
        case 206: return "Partial Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 304: return "Not Modified"
        case 400: return "Bad Request"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 416: return "Range Not Satisfiable"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return "Status"
        }
    }
}

/// Parses an HTTP/1.x request head (everything before the blank line).
enum LoopbackRequestParser {
    struct Head {
        var method: String
        var target: String
        var version: String
        var headers: [String: String]
    }

    static func parse(_ bytes: ArraySlice<UInt8>) -> Head? {
        guard let text = String(bytes: bytes, encoding: .isoLatin1) else { return nil }
        var lines = text.components(separatedBy: "\r\n")
        guard !lines.isEmpty else { return nil }
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1."), !requestLine[0].isEmpty else { return nil }
        var headers: [String: String] = [:]
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if let old = headers[name] { headers[name] = old + ", " + value } else { headers[name] = value }
        }
        return Head(
            method: String(requestLine[0]), target: String(requestLine[1]),
            version: String(requestLine[2]), headers: headers)
    }
}
