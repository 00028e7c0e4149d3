import AuditTrail
import ClientFoundation
import FleetReports
import Foundation
import Hummingbird

/// The pages: `/` (channels), `/channel/NAME`, `/devices`, `/audit?page=N`. Without a
/// session each sends the browser to `/login`.
struct PageRoutes: Sendable {
    let console: OperatorConsole
    let gate: Gate

    /// What an act's redirect may say (`?done=ACT`): fixed texts, never the request's.
    static let notices = [
        "halt": "Halted: devices do not take the release while the halt holds.",
        "lift": "Lifted: the release rolls out as its manifest says again.",
        "cap": "Capped: the rollout's percent is lower now.",
        "admit": "Admitted: the device's reports count now.",
        "reject": "Rejected: the device's reports are dropped.",
    ]

    func overview(_ request: Request) async -> Response {
        guard let user = gate.signedIn(request) else { return Reply.seeOther("/login") }
        let names = ChannelState.channels(in: console.configuration.releases)
        let now = console.now()
        let states = names.map { name in
            Result { try ChannelState.read(releases: console.configuration.releases, channel: name, now: now) }.mapError(Self.consoleError)
        }
        let reader = console.reader
        let pending = await Self.result { try await reader.pending() }.map { $0.counts["pending"] ?? $0.devices.count }
        return Reply.html(OverviewPage.render(channels: states, names: names, pending: pending, user: user))
    }

    func channel(_ request: Request, name: String, notice: String? = nil, problem: String? = nil, status: HTTPResponse.Status = .ok) async
        -> Response
    {
        guard let user = gate.signedIn(request) else { return Reply.seeOther("/login") }
        let state: ChannelState
        do {
            state = try ChannelState.read(releases: console.configuration.releases, channel: name, now: console.now())
        } catch {
            let refusal = Self.consoleError(error)
            let page = Markup.page(title: "No such channel", user: user, problem: refusal.message, body: "")
            return Reply.html(page, status: refusal.code == .rejected ? .internalServerError : .notFound)
        }
        let reader = console.reader
        async let fleet = Self.result { try await reader.fleet(app: state.app, channel: state.channel) }
        async let problems = Self.result { () -> ProblemSummary? in
            guard let data = try await reader.problems(app: state.app, channel: state.channel) else { return nil }
            do {
                return try ProblemSummary.decode(Array(data))
            } catch let error as FleetReportsError {
                throw OperatorConsoleError(.rejected, "the collector's problems answer was refused: \(error.message)")
            }
        }
        async let pending = Self.result { try await reader.pending() }
        let parts = ChannelPage.Parts(state: state, fleet: await fleet, problems: await problems, pending: await pending)
        let shown = notice ?? request.uri.queryParameters["done"].flatMap { Self.notices[String($0)] }
        return Reply.html(ChannelPage.render(parts, user: user, notice: shown, problem: problem), status: status)
    }

    func devices(_ request: Request) async -> Response {
        guard let user = gate.signedIn(request) else { return Reply.seeOther("/login") }
        let notice = request.uri.queryParameters["done"].flatMap { Self.notices[String($0)] }
        let body: String
        switch await Self.result({ try await console.reader.pending() }) {
        case .success(let list): body = DevicesSection.render(list, user: user)
        case .failure(let error): body = "<p class=\"problem\">\(Markup.escape(error.message))</p>"
        }
        return Reply.html(Markup.page(title: "Pending devices", user: user, notice: notice, body: body))
    }

    func audit(_ request: Request) async -> Response {
        guard let user = gate.signedIn(request) else { return Reply.seeOther("/login") }
        let size = console.configuration.auditPageSize
        let asked = request.uri.queryParameters["page"].flatMap { Int(String($0)) }.map { max(1, $0) } ?? 1
        let path = console.configuration.audit
        do {
            guard FileManager.default.fileExists(atPath: path) else {
                return Reply.html(AuditPage.render([], total: 0, page: 1, pageSize: size, user: user))
            }
            // Read from the end: a page costs the same however long the trail.
            let total = try AuditTrail.readNewest(path, limit: 1).first?.seq ?? 0
            let page = min(asked, max(1, (total + size - 1) / size))
            let entries = try AuditTrail.readNewest(path, skipping: (page - 1) * size, limit: size)
            return Reply.html(AuditPage.render(entries, total: total, page: page, pageSize: size, user: user))
        } catch {
            let message = (error as? any ClientctlError)?.message ?? "\(error)"
            return Reply.html(
                Markup.page(title: "Audit trail", user: user, problem: "The audit trail cannot be read: \(message)", body: ""),
                status: .internalServerError)
        }
    }

    /// `body`'s value, or its failure as the console's error.
    static func result<T: Sendable>(_ body: @Sendable () async throws -> T) async -> Result<T, OperatorConsoleError> {
        do {
            return .success(try await body())
        } catch {
            return .failure(consoleError(error))
        }
    }

    static func consoleError(_ error: any Error) -> OperatorConsoleError {
        if let error = error as? OperatorConsoleError { return error }
        if let error = error as? any ClientctlError { return OperatorConsoleError(.rejected, error.message) }
        return OperatorConsoleError(.rejected, "\(error)")
    }
}
