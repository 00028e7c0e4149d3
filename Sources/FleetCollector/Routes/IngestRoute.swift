import FleetReports
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// `POST /v1/reports`: the checks of a batch, in order (docs/fleet-reports.md#the-collector):
/// the source's rate, the content type and encoding, a place among the bodies its source
/// address may send at once, the body's size as sent and its pace (``BodyReader``), a place
/// in flight, its size decompressed, ``ReportBatch/decode``, the device's rate, then one
/// transaction. Every refusal stores nothing.
struct IngestRoute: Sendable {
    let store: any ReportStore
    let limiter: RateLimiter
    let gate: InFlightGate
    let metrics: CollectorMetrics
    let bodyTimeout: Duration
    let admission: AdmissionMode
    let now: @Sendable () -> Date
    let logger: Logger

    func handle(_ request: Request, context: CollectorRequestContext) async -> Response {
        if case .limited(let wait) = limiter.admit(address: context.sourceAddress) {
            return refuse(.rateLimited, .tooManyRequests, "rate limit: too many batches from \(context.sourceAddress)", retryAfter: wait)
        }
        let type = request.headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard type == "application/json" else {
            return refuse(
                .contentType, .unsupportedMediaType, "Content-Type must be application/json, got \(type.map { "\"\($0.prefix(60))\"" } ?? "none")")
        }
        let encoding = request.headers[.contentEncoding]?.trimmingCharacters(in: .whitespaces).lowercased() ?? "identity"
        guard encoding == "zstd" || encoding == "identity" else {
            return refuse(.encoding, .unsupportedMediaType, "Content-Encoding must be zstd or none, got \"\(encoding.prefix(60))\"")
        }
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > ReportBatch.maxBytes {
            return refuse(.tooLarge, .contentTooLarge, "body is \(length) bytes, more than the \(ReportBatch.maxBytes)-byte limit")
        }
        // The body first, on a place of its source address: a slow body holds no place of
        // other devices. The collector-wide places are for decoding and storing only.
        guard gate.reads.enter(context.sourceAddress) else {
            return refuse(
                .rateLimited, .tooManyRequests,
                "rate limit: \(gate.reads.limit) bodies are being read from \(context.sourceAddress) at once; retry later", retryAfter: 5)
        }
        let read = await BodyReader(limit: bodyTimeout, minBytesPerSecond: gate.minBodyBytesPerSecond).read(request.body, channel: context.channel)
        gate.reads.leave(context.sourceAddress)
        var body: [UInt8]
        switch read {
        case .body(let bytes): body = bytes
        case .tooLarge: return refuse(.tooLarge, .contentTooLarge, "body is more than the \(ReportBatch.maxBytes)-byte limit")
        case .tooSlow(let why): return refuse(.timeout, .requestTimeout, why)
        case .failed(let why): return refuse(.malformed, .badRequest, why)
        }
        guard gate.enter() else {
            return refuse(.unavailable, .serviceUnavailable, "too many batches in flight; retry later", retryAfter: 5)
        }
        defer { gate.leave() }
        if encoding == "zstd" {
            do {
                body = try BoundedZstd.decompress(body, limit: ReportBatch.maxBytes)
            } catch BoundedZstd.Failure.tooLarge {
                return refuse(.tooLarge, .contentTooLarge, "decompressed body is more than the \(ReportBatch.maxBytes)-byte limit")
            } catch {
                return refuse(.encoding, .badRequest, "body: not a valid zstd stream (\(error))")
            }
        }
        let batch: ReportBatch
        do {
            batch = try ReportBatch.decode(body)
        } catch let error as FleetReportsError {
            switch error.code {
            case .tooLarge: return refuse(.tooLarge, .contentTooLarge, error.message)
            case .unknownSchema: return refuse(.unknownSchema, .badRequest, error.message)
            case .malformed: return refuse(.malformed, .badRequest, error.message)
            default: return refuse(.invalidField, .badRequest, error.message)
            }
        } catch {
            return refuse(.malformed, .badRequest, "\(error)")
        }
        if let refusal = BatchSignature.refusal(of: batch, body: body, header: request.headers[BatchSignature.headerName]) {
            return refuse(.badSignature, .unauthorized, refusal)
        }
        if case .limited(let wait) = limiter.admit(device: batch.device) {
            return refuse(.rateLimited, .tooManyRequests, "rate limit: too many batches from device \(batch.device)", retryAfter: wait)
        }
        let result: IngestResult
        do {
            result = try await store.insert(batch, received: now(), admission: admission)
        } catch {
            logger.error("cannot store a batch: \(error)")
            return refuse(.unavailable, .serviceUnavailable, "the report store is unavailable; retry later", retryAfter: 30)
        }
        switch result.verdict {
        case .accepted:
            let fresh = result.accepted == batch.reports.count ? batch.reports : batch.reports.filter { result.storedSeqs.contains($0.seq) }
            metrics.stored(batch, result: result, fresh: fresh)
        case .held:
            metrics.held(result)
        case .refused(let refusal):
            switch refusal.reason {
            case .keyMismatch: return refuse(.keyMismatch, .conflict, refusal.message)
            case .keyBound: return refuse(.keyBound, .conflict, refusal.message)
            case .appMismatch: return refuse(.appMismatch, .conflict, refusal.message)
            case .unsignedBound: return refuse(.unsigned, .conflict, refusal.message)
            case .unsigned: return refuse(.unsigned, .forbidden, refusal.message)
            case .rejected: return refuse(.rejected, .forbidden, refusal.message)
            case .heldFull: return refuse(.heldFull, .tooManyRequests, refusal.message, retryAfter: 3600)
            }
        }
        let held = result.verdict == .held ? ",\"held\":true" : ""
        let data = Data("{\"accepted\":\(result.accepted),\"duplicates\":\(result.duplicates)\(held)}\n".utf8)
        return Refusal.json(data)
    }

    func refuse(_ reason: RefusalReason, _ status: HTTPResponse.Status, _ message: String, retryAfter: Int? = nil) -> Response {
        metrics.refused(reason)
        return Refusal.response(status, message, retryAfter: retryAfter)
    }
}
