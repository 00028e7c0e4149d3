import ArchivePublishing
import AuditTrail
import ClientFoundation
import DeviceIdentity
import Foundation
import HTTPTypes
import Hummingbird
import SignedManifest

/// `POST /act/{halt,lift,cap,admit,reject}`: checked in order — the `Origin`, the session,
/// the CSRF token, the role, the form — each refusal a 4xx naming why and an entry in the
/// audit trail; then the act, its entry, and a `303` back to the page it came from.
struct ActRoutes: Sendable {
    let console: OperatorConsole
    let gate: Gate

    static let channelActs: Set<String> = ["halt", "lift", "cap"]
    static let deviceActs: Set<String> = ["admit", "reject"]

    func act(_ request: Request, context: ConsoleRequestContext) async -> Response {
        let act = context.parameters.get("act") ?? ""
        let address = context.sourceAddress
        let trail = console.trail
        guard Self.channelActs.contains(act) || Self.deviceActs.contains(act) else {
            return Reply.text(.notFound, "404: no act '\(act.prefix(32))': halt, lift, cap, admit or reject")
        }
        let user = gate.signedIn(request)
        let who = user?.name ?? "-"
        let form: FormBody?
        switch await FormBody.read(request) {
        case .success(let body): form = body
        case .failure(.tooLarge): return Reply.text(.contentTooLarge, "413: the form is larger than \(FormBody.maxBytes) bytes")
        case .failure: form = nil
        }
        let target = Self.target(act, form)
        func refuse(_ status: HTTPResponse.Status, _ why: String) async -> Response {
            await trail.record(operator: who, address: address, act: act, target: target, result: "refused: \(why)")
            return Reply.text(status, "\(status.code): \(why)")
        }
        guard gate.sameOrigin(request) else { return await refuse(.forbidden, "the request came from another origin") }
        guard let user else { return await refuse(.forbidden, "no session: log in first") }
        guard let form else { return await refuse(.badRequest, "the body is not a form") }
        guard gate.csrfMatches(user, form["csrf"]) else { return await refuse(.forbidden, "the form's CSRF token is not this session's") }
        guard user.mayAct else { return await refuse(.forbidden, "\(user.name) is a viewer: a viewer sees, an operator acts") }
        // An act no one could read about later is not done: a trail that cannot be extended
        // refuses it before anything is signed or sent.
        do {
            try AuditTrail.checkAppendable(console.configuration.audit)
        } catch {
            let why = (error as? any ClientctlError)?.message ?? "\(error)"
            console.logger.error("act refused, the audit trail cannot be extended: \(why)")
            return Reply.text(.serviceUnavailable, "503: the audit trail cannot be extended, so nothing was done: \(why)")
        }
        if Self.deviceActs.contains(act) {
            return await deviceAct(act, form: form, user: user, address: address)
        }
        return await channelAct(act, form: form, user: user, address: address, request: request)
    }

    /// What the trail names as the act's target: `CHANNEL VERSION` or the device id, as given.
    static func target(_ act: String, _ form: FormBody?) -> String {
        if deviceActs.contains(act) { return String((form?["device"] ?? "-").prefix(64)) }
        return "\((form?["channel"] ?? "-").prefix(64)) \((form?["version"] ?? "-").prefix(64))"
    }

    private func deviceAct(_ act: String, form: FormBody, user: SignedIn, address: String) async -> Response {
        let trail = console.trail
        let text = form["device"] ?? ""
        guard text.utf8.count == 32, text.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
            let device = DeviceID(text)
        else {
            await trail.record(operator: user.name, address: address, act: act, target: String(text.prefix(64)), result: "refused: not a device id")
            return Reply.text(.badRequest, "400: device: not a device id (32 lowercase hex digits)")
        }
        do {
            let change = try await console.reader.change(act, device: device)
            let after = change.devices > 0 ? (act == "admit" ? "accepted" : "rejected") : "unchanged"
            let problem = await trail.record(
                operator: user.name, address: address, act: act, target: text, before: "pending", after: after, result: "ok")
            if let problem { return Reply.text(.internalServerError, "500: \(act) done, but \(problem)") }
            return Reply.seeOther("/devices?done=\(act)")
        } catch {
            let message = PageRoutes.consoleError(error).message
            await trail.record(
                operator: user.name, address: address, act: act, target: text, before: "pending", result: "failed: \(message)")
            return Reply.text(.badGateway, "502: \(act) failed: \(message)")
        }
    }

    private func channelAct(_ act: String, form: FormBody, user: SignedIn, address: String, request: Request) async -> Response {
        let trail = console.trail
        let channel = form["channel"] ?? ""
        let target = Self.target(act, form)
        let pages = PageRoutes(console: console, gate: gate)
        func fail(_ status: HTTPResponse.Status, _ why: String, before: String = "") async -> Response {
            await trail.record(
                operator: user.name, address: address, act: act, target: target, before: before,
                result: status == .conflict ? "refused: \(why)" : "failed: \(why)")
            guard ChannelState.validName(channel) else { return Reply.text(status, "\(status.code): \(why)") }
            return await pages.channel(request, name: channel, problem: "\(act) refused: \(why)", status: status)
        }
        guard ChannelState.validName(channel) else { return await fail(.badRequest, "'\(channel.prefix(64))' is not a channel name") }
        guard let version = Version(form["version"] ?? "") else { return await fail(.badRequest, "version: not a SemVer version") }
        let basis: RestrictionBasis
        switch form["basis"] {
        case "none"?: basis = .none
        case let hex? where hex.utf8.count == 64 && hex.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }):
            basis = .sha256(hex)
        default: return await fail(.badRequest, "basis: missing or not what the page gave")
        }
        let acts = ChannelActs(configuration: console.configuration, now: console.now)
        let done: ChannelActs.Done
        do {
            switch act {
            case "halt":
                done = try await acts.halt(channel: channel, version: version, basis: basis)
            case "cap":
                guard let text = form["percent"], let percent = Double(text.trimmingCharacters(in: .whitespaces)) else {
                    return await fail(.badRequest, "percent: not a number")
                }
                done = try await acts.cap(channel: channel, version: version, basis: basis, percent: percent)
            default:
                let state = try ChannelState.read(releases: console.configuration.releases, channel: channel, now: console.now())
                let author = ChannelActs.haltAuthor(
                    trail: console.configuration.audit, channel: channel, version: version, restriction: state.restriction)
                done = try await acts.lift(channel: channel, version: version, basis: basis, haltedBy: author)
            }
        } catch {
            let refusal = PageRoutes.consoleError(error)
            let status: HTTPResponse.Status = refusal.code == .rejected || refusal.code == .invalidArgument ? .conflict : .internalServerError
            return await fail(status, refusal.message)
        }
        let result = done.pushProblem.map { "failed: \($0)" } ?? "ok"
        let problem = await trail.record(
            operator: user.name, address: address, act: act, target: target, before: done.before, after: done.after, result: result)
        if let why = done.pushProblem ?? problem {
            return await pages.channel(request, name: channel, problem: "\(act): \(why)", status: .internalServerError)
        }
        return Reply.seeOther("/channel/\(channel)?done=\(act)")
    }
}
