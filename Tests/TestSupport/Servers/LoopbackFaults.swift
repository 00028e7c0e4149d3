import Foundation
import Synchronization

/// Fault injection for a ``LoopbackHTTPServer``, per path and per request count.
///
/// ```swift
/// let faults = LoopbackFaults()
/// faults.add(.status(503), path: "/app.tgz", requests: 1...2)   // 1st and 2nd GET fail
/// faults.add(.reset(afterBytes: 4096), path: "/app.tgz", requests: 3...3)
/// let server = try LoopbackHTTPServer(handler: faults.wrap(LoopbackHTTPServer.folder(dir)))
/// ```
/// Request counts are 1-based and counted per path among requests that reach the
/// handler (dropped connections of ``LoopbackHTTPServer/dropConnections(_:)`` don't count).
/// When several rules match one request they are all applied, in the order added.
public final class LoopbackFaults: Sendable {
    /// One kind of misbehaviour.
    public enum Kind: Sendable {
        /// Answer with this status (and a short text body) instead of the real response.
        case status(Int)
        /// Send the head and this many body bytes, then reset the connection (RST).
        case reset(afterBytes: Int64)
        /// Send the head (with the full `Content-Length`) and this many body bytes, then
        /// close normally: a truncated body.
        case truncate(afterBytes: Int64)
        /// Send the head and this many body bytes, then go silent with the connection open.
        case stall(afterBytes: Int64)
        /// Declare this `Content-Length` but send the real body (longer or shorter).
        case declaredLength(Int64)
        /// Append these bytes to the body (declared length grows with it): a body longer
        /// than the manifest says.
        case appendBytes(Data)
        /// Send no `Content-Length`; the body ends when the connection closes.
        case noContentLength
        /// Send the body `bytes` at a time, sleeping `every` seconds in between.
        case drip(bytes: Int, every: Double)
        /// Replace the `ETag` header (nil removes it).
        case etag(String?)
        /// Replace the body with these bytes (correct length): a server serving wrong data.
        case replaceBody(Data)
        /// Close the connection (RST) after reading the request, sending nothing.
        case dropConnection
        /// Any other change.
        case custom(@Sendable (inout LoopbackResponse) -> Void)
    }

    private struct Rule {
        var kind: Kind
        var path: String?
        var requests: ClosedRange<Int>?
    }

    private struct State {
        var rules: [Rule] = []
        var counts: [String: Int] = [:]
    }
    private let state = Mutex(State())

    public init() {}

    /// Adds a rule. `path` nil matches every path; `requests` nil matches every request
    /// (otherwise the 1-based count of requests to that path, e.g. `1...2`).
    public func add(_ kind: Kind, path: String? = nil, requests: ClosedRange<Int>? = nil) {
        state.withLock { $0.rules.append(Rule(kind: kind, path: path, requests: requests)) }
    }

    /// Adds a rule for the first `count` requests to `path`.
    public func first(_ count: Int, _ kind: Kind, path: String? = nil) {
        guard count > 0 else { return }
        add(kind, path: path, requests: 1...count)
    }

    /// Removes every rule (counts are kept).
    public func clear() { state.withLock { $0.rules.removeAll() } }

    /// How many requests to `path` were seen.
    public func count(path: String) -> Int { state.withLock { $0.counts[path] ?? 0 } }

    /// Wraps `handler` so matching requests get their faults.
    public func wrap(_ handler: @escaping LoopbackHTTPServer.Handler) -> LoopbackHTTPServer.Handler {
        return { [self] request in
            let matching = state.withLock { state in
                let n = (state.counts[request.path] ?? 0) + 1
                state.counts[request.path] = n
                return state.rules.filter { rule in
                    (rule.path == nil || rule.path == request.path) && (rule.requests?.contains(n) ?? true)
                }.map(\.kind)
            }
            var response = handler(request)
            for kind in matching { Self.apply(kind, to: &response) }
            return response
        }
    }

    static func apply(_ kind: Kind, to response: inout LoopbackResponse) {
        switch kind {
        case .status(let code):
            let delivery = response.delivery
            response = .status(code)
            response.delivery = delivery
        case .reset(let n):
            response.delivery.stopAfter = n
            response.delivery.ending = .reset
        case .truncate(let n):
            response.delivery.stopAfter = n
            response.delivery.ending = .close
        case .stall(let n):
            response.delivery.stopAfter = n
            response.delivery.ending = .stall
        case .declaredLength(let n):
            response.declaredLength = n
        case .appendBytes(let extra):
            response.body = .data(bodyData(response.body) + extra)
        case .noContentLength:
            response.omitContentLength = true
        case .drip(let bytes, let every):
            response.delivery.dripBytes = max(1, bytes)
            response.delivery.dripInterval = every
        case .etag(let tag):
            response.setHeader("ETag", tag)
        case .replaceBody(let data):
            response.body = .data(data)
        case .dropConnection:
            response.delivery.dropWithoutResponse = true
        case .custom(let change):
            change(&response)
        }
    }

    /// Reads a body into memory (for the small test files faults are applied to).
    static func bodyData(_ body: LoopbackResponse.Body) -> Data {
        switch body {
        case .empty: return Data()
        case .data(let d): return d
        case .file(let path, let offset, let length):
            guard let handle = FileHandle(forReadingAtPath: path) else { return Data() }
            defer { try? handle.close() }
            try? handle.seek(toOffset: UInt64(offset))
            return (try? handle.read(upToCount: Int(length))) ?? Data()
        }
    }
}
