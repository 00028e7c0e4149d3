import FleetReports
import Foundation
import Hummingbird

/// The read endpoints: the fleet summary, the metrics and the page, behind the read token.
struct ReadRoutes: Sendable {
    let collector: Collector

    /// `GET /v1/fleet?app=ID&channel=NAME[&window=SECONDS][&version=V…][&label=KEY=VALUE…]`.
    func fleet(_ request: Request) async -> Response {
        if let why = collector.configuration.readToken.refusal(request.headers, allowBasic: false) {
            return Refusal.response(.unauthorized, why)
        }
        switch await summary(request) {
        case .success(let summary):
            guard let data = try? FleetSummary.encoder().encode(summary) else {
                return Refusal.response(.internalServerError, "cannot encode the summary")
            }
            return Refusal.json(data)
        case .failure(let refusal): return refusal.response
        }
    }

    /// `GET /metrics`.
    func metrics(_ request: Request) -> Response {
        if let why = collector.configuration.readToken.refusal(request.headers, allowBasic: false) {
            return Refusal.response(.unauthorized, why)
        }
        return Refusal.text(collector.metrics.text(), contentType: "text/plain; version=0.0.4; charset=utf-8")
    }

    /// `GET /?app=ID&channel=NAME[&label=KEY=VALUE…]`: the fleet page (HTTP basic auth, the
    /// token as password).
    func page(_ request: Request) async -> Response {
        if let why = collector.configuration.readToken.refusal(request.headers, allowBasic: true) {
            var response = Refusal.response(.unauthorized, why)
            response.headers[.wwwAuthenticate] = "Basic realm=\"clientctl collect\", charset=\"UTF-8\""
            return response
        }
        guard let render = collector.page else { return Refusal.response(.notFound, "this collector serves no page") }
        switch await summary(request) {
        case .success(let summary):
            var response = Refusal.text(render(summary), contentType: "text/html; charset=utf-8")
            // The page loads nothing and runs nothing (FleetHTML's policy); nor is it cached.
            response.headers[.contentSecurityPolicy] =
                "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; base-uri 'none'; form-action 'none'"
            response.headers[.cacheControl] = "no-store"
            return response
        case .failure(let refusal): return refusal.response
        }
    }

    struct Failure: Error {
        let response: Response
    }

    func summary(_ request: Request) async -> Result<FleetSummary, Failure> {
        let query = request.uri.queryParameters
        guard let app = query["app"].map(String.init), FleetReportsNames.valid(app, maxBytes: 255) else {
            return .failure(Failure(response: Refusal.response(.badRequest, "app: missing or not an identifier (?app=ID&channel=NAME)")))
        }
        guard let channel = query["channel"].map(String.init), FleetReportsNames.valid(channel, maxBytes: 64) else {
            return .failure(Failure(response: Refusal.response(.badRequest, "channel: missing or not an identifier (?app=ID&channel=NAME)")))
        }
        var window = collector.configuration.windowSeconds
        if let text = query["window"] {
            guard let n = Int(text), CollectorConfiguration.windowRange.contains(n) else {
                let range = CollectorConfiguration.windowRange
                return .failure(
                    Failure(response: Refusal.response(.badRequest, "window: not a number of seconds in \(range.lowerBound)…\(range.upperBound)")))
            }
            window = n
        }
        let versions = query[values: "version"].map(String.init)
        guard versions.count <= FleetSummaryQuery.maxAskedVersions else {
            return .failure(
                Failure(
                    response: Refusal.response(
                        .badRequest, "version: \(versions.count) asked, at most \(FleetSummaryQuery.maxAskedVersions) (?version=V&version=W)")))
        }
        if let bad = versions.first(where: { !FleetReportsNames.validVersion($0) }) {
            return .failure(
                Failure(
                    response: Refusal.response(
                        .badRequest, "version: \"\(bad.prefix(80))\" is not a version (1 to 64 of letters, digits, '.', '+', '-', '_')")))
        }
        let labels: LabelFilter
        switch Self.labelFilter(query[values: "label"].map(String.init)) {
        case .success(let filter): labels = filter
        case .failure(let problem): return .failure(Failure(response: Refusal.response(.badRequest, problem.message)))
        }
        do {
            let summary = try await collector.store.summary(
                app: app, channel: channel, windowSeconds: window, now: collector.now(), versions: versions, labels: labels)
            return .success(summary)
        } catch {
            collector.logger.error("summary failed: \(error)")
            return .failure(Failure(response: Refusal.response(.serviceUnavailable, "the report store is unavailable; retry later", retryAfter: 30)))
        }
    }
}

extension ReadRoutes {
    /// Why a query's `label` parameters are refused: one line for a 400.
    struct LabelProblem: Error {
        let message: String
    }

    /// The filter of a query's `label=KEY=VALUE` parameters (at most `LabelFilter.maxLabels`,
    /// each of the label grammar, one value a key); none: every device.
    static func labelFilter(_ texts: [String]) -> Result<LabelFilter, LabelProblem> {
        do {
            return .success(try LabelFilter(texts))
        } catch let error as FleetReportsError {
            return .failure(LabelProblem(message: error.message + " (?label=KEY=VALUE&label=…)"))
        } catch {
            return .failure(LabelProblem(message: "label: \(error)"))
        }
    }
}

/// The identifier rule of a batch's `app` and `channel`, and the version rule of its
/// reports, for query parameters.
enum FleetReportsNames {
    /// A report's version: 1 to 64 bytes of ASCII letters, digits, `.`, `+`, `-`, `_`.
    static func validVersion(_ s: String) -> Bool {
        let bytes = Array(s.utf8)
        return !bytes.isEmpty && bytes.count <= 64
            && bytes.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5a) || ($0 >= 0x61 && $0 <= 0x7a) || $0 == 0x2e || $0 == 0x2b || $0 == 0x2d
                    || $0 == 0x5f
            }
    }

    static func valid(_ s: String, maxBytes: Int) -> Bool {
        let bytes = Array(s.utf8)
        return !bytes.isEmpty && bytes.count <= maxBytes
            && bytes.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5a) || ($0 >= 0x61 && $0 <= 0x7a) || $0 == 0x2e || $0 == 0x5f || $0 == 0x2d
            }
    }
}
