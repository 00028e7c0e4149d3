import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The state of one ``URLSessionTransport`` request, shared by the session's delegate
/// queue, the idle watchdog and the waiting task.
final class TransportTransfer: @unchecked Sendable {
    // @unchecked Sendable: every field is only touched under `lock`. The sink is called
    // under the lock too, so `release()` cannot return while a chunk is being delivered.
    private let lock = NSLock()
    private let url: URL
    private let idleTimeout: Double
    private var head: (@Sendable (TransportResponse) throws -> Void)?
    private var sink: (@Sendable (UnsafeRawBufferPointer) throws -> Void)?
    private var continuation: CheckedContinuation<TransportResponse, any Error>?
    private var response: TransportResponse?
    private var failure: (any Error)?
    private var received: Int64 = 0
    private var lastActivity = DispatchTime.now().uptimeNanoseconds
    private var done = false

    init(url: URL, idleTimeout: Double, head: @escaping @Sendable (TransportResponse) throws -> Void,
         sink: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void) {
        self.head = head
        self.url = url
        self.idleTimeout = idleTimeout
        self.sink = sink
    }

    func setContinuation(_ c: CheckedContinuation<TransportResponse, any Error>) {
        lock.withLock { continuation = c }
    }

    /// Seconds since the last byte (or the start).
    func idleFor() -> Double {
        lock.withLock { Double(DispatchTime.now().uptimeNanoseconds &- lastActivity) / 1e9 }
    }

    /// Records the head and hands it to the caller; false when the transfer must stop.
    func received(_ urlResponse: URLResponse) -> Bool {
        lock.withLock {
            lastActivity = DispatchTime.now().uptimeNanoseconds
            guard !done, failure == nil else { return false }
            guard let http = urlResponse as? HTTPURLResponse else {
                failure = UpdaterError.network(url, .other("not an HTTP response"))
                return false
            }
            var headers: [String: String] = [:]
            for (key, value) in http.allHeaderFields {
                if let k = key as? String, let v = value as? String { headers[k.lowercased()] = v }
            }
            let response = TransportResponse(status: http.statusCode, headers: headers)
            self.response = response
            do {
                try head?(response)
                return true
            } catch {
                failure = error
                return false
            }
        }
    }

    /// Hands a chunk to the sink; false when the transfer must stop.
    func deliver(_ data: Data) -> Bool {
        lock.withLock {
            guard !done, failure == nil, let sink else { return false }
            lastActivity = DispatchTime.now().uptimeNanoseconds
            do {
                try data.withUnsafeBytes { try sink($0) }
                received += Int64(data.count)
                return true
            } catch {
                failure = error
                return false
            }
        }
    }

    /// Records why the transfer is being cancelled (first reason wins).
    func fail(_ error: any Error) {
        lock.withLock { if failure == nil && !done { failure = error } }
    }

    func complete(_ error: (any Error)?) {
        let (c, result) = lock.withLock { () -> (CheckedContinuation<TransportResponse, any Error>?, Result<TransportResponse, any Error>) in
            let c = continuation
            continuation = nil
            done = true
            return (c, outcome(error))
        }
        c?.resume(with: result)
    }

    /// Drops the sink: after this no chunk can reach it.
    func release() {
        lock.withLock {
            sink = nil
            head = nil
            done = true
        }
    }

    private func outcome(_ error: (any Error)?) -> Result<TransportResponse, any Error> {
        if let failure { return .failure(failure) }
        let declared = declaredLength()
        if let error {
            var failure = Self.classify(error, idleTimeout: idleTimeout)
            if case .other = failure, let declared, received < declared {
                // libcurl reports "transfer closed with N bytes remaining" with no URLError code.
                failure = .truncated(received: received, expected: declared)
            }
            return .failure(UpdaterError.network(url, failure))
        }
        guard let response else { return .failure(UpdaterError.network(url, .other("no HTTP response"))) }
        if let declared, received < declared {
            return .failure(UpdaterError.network(url, .truncated(received: received, expected: declared)))
        }
        return .success(response)
    }

    /// The body length the server promised, when it can be compared with the bytes seen.
    private func declaredLength() -> Int64? {
        guard let response, response.status != 304, response.status != 204 else { return nil }
        let encoded = response[header: "content-encoding"].map { $0.lowercased() != "identity" } ?? false
        if encoded { return nil }
        return response[header: "content-length"].flatMap { Int64($0) }
    }

    static func classify(_ error: any Error, idleTimeout: Double) -> TransportFailure {
        guard let urlError = error as? URLError else { return .other("\(error)") }
        switch urlError.code {
        case .cannotConnectToHost: return .refused
        case .networkConnectionLost: return .reset
        case .timedOut: return .timedOut(seconds: idleTimeout)
        case .cannotFindHost, .dnsLookupFailed: return .dns
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
             .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected:
            return .tls
        default:
            return .other("\(urlError.localizedDescription) (URLError \(urlError.code.rawValue))")
        }
    }
}
