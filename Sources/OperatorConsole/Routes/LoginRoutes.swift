import ConsoleAccess
import Foundation
import HTTPTypes
import Hummingbird

/// `GET /login`, `POST /login` (fields `name`, `password`), `POST /logout`. A login is
/// throttled per name and per address (429 with `Retry-After`); a login from another
/// origin is refused (403); failures and successes go to the audit trail.
struct LoginRoutes: Sendable {
    let console: OperatorConsole
    let gate: Gate

    func form(_ request: Request) -> Response {
        if gate.signedIn(request) != nil { return Reply.seeOther("/") }
        return Reply.html(LoginPage.render())
    }

    func login(_ request: Request, context: ConsoleRequestContext) async -> Response {
        let address = context.sourceAddress
        let trail = console.trail
        guard gate.sameOrigin(request) else {
            await trail.record(operator: "-", address: address, act: "login", target: "-", result: "refused: the request came from another origin")
            return Reply.html(LoginPage.render(problem: "Refused: this form was not sent from the console's own page."), status: .forbidden)
        }
        let form: FormBody
        switch await FormBody.read(request) {
        case .success(let body): form = body
        case .failure(.tooLarge): return Reply.text(.contentTooLarge, "413: the form is larger than \(FormBody.maxBytes) bytes")
        case .failure(.notAForm(let why)): return Reply.text(.badRequest, "400: \(why)")
        }
        let name = form["name"] ?? ""
        let password = Array((form["password"] ?? "").utf8)
        let shownName = OperatorAccount.isValid(name: name) ? name : "(not a name)"
        let now = console.uptime()
        if let wait = console.throttle.check(name: name, address: address, now: now) {
            let seconds = LoginThrottle.retryAfterSeconds(wait)
            await trail.record(
                operator: shownName, address: address, act: "login", target: shownName, result: "refused: throttled for \(seconds) s")
            var headers = HTTPFields()
            headers[.retryAfter] = "\(seconds)"
            return Reply.html(
                LoginPage.render(problem: "Too many attempts: try again in \(seconds) s.", name: name), status: .tooManyRequests, headers: headers)
        }
        let file: OperatorFile
        do {
            file = try console.operatorFile()
        } catch {
            console.logger.error("operators file: \(error.message)")
            return Reply.html(LoginPage.render(problem: "The console cannot read its operators file: \(error.message)"), status: .serviceUnavailable)
        }
        guard !name.isEmpty, let account = await file.authenticated(name: name, password: password) else {
            console.throttle.failed(name: name, address: address, now: now)
            await trail.record(operator: shownName, address: address, act: "login", target: shownName, result: "refused: wrong name or password")
            return Reply.html(LoginPage.render(problem: "Wrong name or password.", name: name), status: .unauthorized)
        }
        console.throttle.succeeded(name: name, address: address, now: now)
        // A new password ends the sessions opened with the old one.
        let previous = console.loginHashes.withLock { hashes in
            defer { hashes[account.name] = account.passwordHash }
            return hashes[account.name]
        }
        if let previous, previous != account.passwordHash { console.sessions.close(name: account.name) }
        let session = console.sessions.open(name: account.name, role: account.role, now: now)
        await trail.record(operator: account.name, address: address, act: "login", target: account.name, result: "ok")
        // The browser keeps the cookie for the session's whole lifetime: the store ends an idle
        // session itself, and a cookie that expired after the first idle timeout would log out
        // an operator who never stopped working.
        let lifetime = max(1, Int(console.sessions.lifetime.components.seconds))
        var headers = HTTPFields()
        headers[.setCookie] = gate.setCookie(session.id, maxAge: lifetime)
        return Reply.seeOther("/", headers: headers)
    }

    func logout(_ request: Request, context: ConsoleRequestContext) async -> Response {
        var headers = HTTPFields()
        headers[.setCookie] = gate.clearCookie()
        guard let user = gate.signedIn(request) else { return Reply.seeOther("/login", headers: headers) }
        guard gate.sameOrigin(request) else { return Reply.text(.forbidden, "403: the request came from another origin") }
        guard case .success(let form) = await FormBody.read(request), gate.csrfMatches(user, form["csrf"]) else {
            return Reply.text(.forbidden, "403: the form's CSRF token is not this session's")
        }
        console.sessions.close(id: user.session.id)
        await console.trail.record(operator: user.name, address: context.sourceAddress, act: "logout", target: user.name, result: "ok")
        return Reply.seeOther("/login", headers: headers)
    }
}
