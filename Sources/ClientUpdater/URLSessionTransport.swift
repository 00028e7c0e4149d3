import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The production ``Transport``: `URLSession` (libcurl underneath on Linux) for `http:`
/// and `https:`, the disk for `file:`.
///
/// - The body goes to the sink chunk by chunk from the session's delegate queue; chunks
///   for one request arrive serially. Caveat (Linux): swift-corelibs-foundation cannot
///   pause libcurl, so when the sink is slower than the network, chunks wait in memory
///   on the delegate queue (108 MiB peak for 500 MB in BENCHMARKS.md). ``DefaultTransport``
///   therefore uses this class only for `https:`.
/// - Idle timeout: a watchdog cancels the task when no byte arrived for
///   ``TransportRequest/idleTimeout`` seconds (libcurl's own timer is a backstop).
/// - Content coding: every request says `Accept-Encoding: identity`. A server that
///   compresses anyway is decoded by libcurl; the caller's sink then counts *decoded*
///   bytes, so its cap (64 KiB manifest, signed `size`) still bounds memory and disk, and
///   an archive sent gzip-encoded fails its hash instead of being silently accepted.
/// - Redirects are not followed: the 3xx response is returned for the caller to judge.
/// - No cookies, no URL cache (conditional requests reach the server and a 304 comes back).
/// - Failures below HTTP throw ``UpdaterError`` `.network` whose `underlying` is a
///   ``TransportFailure`` (refused, reset, timed out, DNS, truncated).
public final class URLSessionTransport: HeadFirstTransport, @unchecked Sendable {
    // @unchecked Sendable: `session` and `delegate` are thread-safe (URLSession is, and the
    // delegate guards its table with a lock); nothing else is mutable.
    private let session: URLSession
    private let delegate: URLSessionTransportDelegate

    /// - Parameter maxConnectionsPerHost: parallel connections to one host.
    public init(maxConnectionsPerHost: Int = 6) {
        let config = URLSessionConfiguration.ephemeral
        config.httpMaximumConnectionsPerHost = maxConnectionsPerHost
        config.requestCachePolicy = .reloadIgnoringLocalCacheData
        config.urlCache = nil
        config.httpCookieStorage = nil
        config.httpShouldSetCookies = false
        config.timeoutIntervalForResource = 7 * 24 * 3600
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "URLSessionTransport"
        delegate = URLSessionTransportDelegate()
        session = URLSession(configuration: config, delegate: delegate, delegateQueue: queue)
    }

    deinit { session.invalidateAndCancel() }

    public func get(
        _ request: TransportRequest,
        head: @Sendable (TransportResponse) throws -> Void,
        sink: @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> TransportResponse {
        switch request.url.scheme?.lowercased() {
        case "file":
            return try FileTransport.get(request, head: head, sink: sink)
        case "http", "https":
            return try await withoutActuallyEscaping(head) { escapableHead in
                try await withoutActuallyEscaping(sink) { escapableSink in
                    try await fetch(request, head: escapableHead, sink: escapableSink)
                }
            }
        default:
            throw UpdaterError(.unsupported, "GET \(request.url.absoluteString): unsupported URL scheme (use https:, http: or file:)")
        }
    }

    private func fetch(
        _ request: TransportRequest,
        head: @escaping @Sendable (TransportResponse) throws -> Void,
        sink: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> TransportResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = "GET"
        urlRequest.timeoutInterval = request.idleTimeout + 5
        urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        urlRequest.setValue("clientctl", forHTTPHeaderField: "User-Agent")
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }

        let task = session.dataTask(with: urlRequest)
        let transfer = TransportTransfer(url: request.url, idleTimeout: request.idleTimeout, head: head, sink: sink)
        delegate.register(transfer, for: task)
        let watchdog = Task {
            let step = min(max(request.idleTimeout / 4, 0.01), 1)
            while !Task.isCancelled {
                try await Task.sleep(nanoseconds: UInt64(step * 1_000_000_000))
                if transfer.idleFor() >= request.idleTimeout {
                    transfer.fail(UpdaterError.network(request.url, .timedOut(seconds: request.idleTimeout)))
                    task.cancel()
                    return
                }
            }
        }
        defer {
            watchdog.cancel()
            delegate.unregister(task)
            transfer.release()
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<TransportResponse, any Error>) in
                transfer.setContinuation(continuation)
                task.resume()
            }
        } onCancel: {
            transfer.fail(CancellationError())
            task.cancel()
        }
    }
}

/// The session delegate: routes callbacks to the transfer of each task.
final class URLSessionTransportDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked Sendable: `transfers` is only touched under `lock`.
    private let lock = NSLock()
    private var transfers: [Int: TransportTransfer] = [:]

    func register(_ transfer: TransportTransfer, for task: URLSessionTask) {
        lock.withLock { transfers[task.taskIdentifier] = transfer }
    }

    func unregister(_ task: URLSessionTask) {
        _ = lock.withLock { transfers.removeValue(forKey: task.taskIdentifier) }
    }

    private func transfer(_ task: URLSessionTask) -> TransportTransfer? {
        lock.withLock { transfers[task.taskIdentifier] }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        let proceed = transfer(dataTask)?.received(response) ?? false
        completionHandler(proceed ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let transfer = transfer(dataTask) else { return }
        if !transfer.deliver(data) { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        transfer(task)?.complete(error)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
