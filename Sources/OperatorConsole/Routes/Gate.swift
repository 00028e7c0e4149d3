import ConsoleAccess
import Foundation
import HTTPTypes
import Hummingbird

/// Who a request comes from and whether a POST may be taken: the session cookie, the
/// operator it names (still in the operators file, with the same role), the `Origin`, the
/// CSRF token.
struct Gate: Sendable {
    let console: OperatorConsole

    /// The cookie's name.
    static let cookie = "console_session"

    /// The operator of `request`'s session, or nil (no cookie, expired, operator removed,
    /// their role or password changed: the session ends).
    func signedIn(_ request: Request) -> SignedIn? {
        guard let id = Self.sessionID(request.headers) else { return nil }
        guard let session = console.sessions.session(id: id, now: console.uptime()) else { return nil }
        guard let file = try? console.operatorFile(), let account = file.account(named: session.name),
            account.role == session.role, console.loginHashes.withLock({ $0[session.name] }) == account.passwordHash
        else {
            console.sessions.close(id: id)
            return nil
        }
        return SignedIn(session: session)
    }

    /// Whether `request`'s `Origin` (or, without one, its `Referer`) is the console's own.
    func sameOrigin(_ request: Request) -> Bool {
        guard let check = console.origins.withLock({ $0 }) else { return false }
        return check.allows(originHeader: request.headers[.origin], refererHeader: request.headers[.referer])
    }

    /// Whether `token` is `user`'s session's CSRF token.
    func csrfMatches(_ user: SignedIn, _ token: String?) -> Bool {
        guard let token else { return false }
        return user.session.csrfMatches(token)
    }

    /// The session cookie's value in `headers`, if any.
    static func sessionID(_ headers: HTTPFields) -> String? {
        for line in headers[values: .cookie] {
            for pair in line.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == cookie {
                    return parts[1].trimmingCharacters(in: .whitespaces)
                }
            }
        }
        return nil
    }

    /// `Set-Cookie` of a session: `HttpOnly; SameSite=Strict; Path=/`, `Secure` under TLS
    /// or behind an https public URL, and a `Max-Age` of its absolute lifetime.
    func setCookie(_ id: String, maxAge: Int) -> String {
        "\(Self.cookie)=\(id); Path=/; HttpOnly; SameSite=Strict; Max-Age=\(maxAge)" + (console.configuration.secureCookies ? "; Secure" : "")
    }

    /// `Set-Cookie` that ends the session in the browser.
    func clearCookie() -> String {
        "\(Self.cookie)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0" + (console.configuration.secureCookies ? "; Secure" : "")
    }
}
