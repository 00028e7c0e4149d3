import FleetReports
import Foundation
import Hummingbird

/// `GET /v1/problems?app=ID&channel=NAME[&window=SECONDS][&versions=N][&version=V…]`: what
/// breaks, per version (docs/fleet-reports.md#what-breaks), behind the read token, refused
/// as `GET /v1/fleet` refuses.
struct ProblemsRoute: Sendable {
    let collector: Collector

    func handle(_ request: Request) async -> Response {
        if let why = collector.configuration.readToken.refusal(request.headers, allowBasic: false) {
            return Refusal.response(.unauthorized, why)
        }
        let query = request.uri.queryParameters
        guard let app = query["app"].map(String.init), FleetReportsNames.valid(app, maxBytes: 255) else {
            return Refusal.response(.badRequest, "app: missing or not an identifier (?app=ID&channel=NAME)")
        }
        guard let channel = query["channel"].map(String.init), FleetReportsNames.valid(channel, maxBytes: 64) else {
            return Refusal.response(.badRequest, "channel: missing or not an identifier (?app=ID&channel=NAME)")
        }
        var window = collector.configuration.windowSeconds
        if let text = query["window"] {
            let range = CollectorConfiguration.windowRange
            guard let n = Int(text), range.contains(n) else {
                return Refusal.response(.badRequest, "window: not a number of seconds in \(range.lowerBound)…\(range.upperBound)")
            }
            window = n
        }
        var versions = ProblemSummary.defaultVersions
        if let text = query["versions"] {
            guard let n = Int(text), (1...ProblemSummary.maxVersions).contains(n) else {
                return Refusal.response(.badRequest, "versions: not a number of versions in 1…\(ProblemSummary.maxVersions)")
            }
            versions = n
        }
        let asked = query[values: "version"].map(String.init)
        guard asked.count <= ProblemSummary.maxVersions else {
            return Refusal.response(
                .badRequest, "version: \(asked.count) asked, at most \(ProblemSummary.maxVersions) (?version=V&version=W)")
        }
        if let bad = asked.first(where: { !FleetReportsNames.validVersion($0) }) {
            return Refusal.response(.badRequest, "version: \"\(bad.prefix(80))\" is not a version (1 to 64 of letters, digits, '.', '+', '-', '_')")
        }
        do {
            let answer = try await collector.store.problems(
                app: app, channel: channel, windowSeconds: window, now: collector.now(), versions: versions, asked: asked)
            guard let data = try? ProblemSummary.encoder().encode(answer) else {
                return Refusal.response(.internalServerError, "cannot encode the problems")
            }
            return Refusal.json(data)
        } catch {
            collector.logger.error("problems failed: \(error)")
            return Refusal.response(.serviceUnavailable, "the report store is unavailable; retry later", retryAfter: 30)
        }
    }
}
