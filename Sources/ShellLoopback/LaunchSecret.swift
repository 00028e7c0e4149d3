import Foundation
import Synchronization

/// The per-launch secret of the native shell's loopback origin (`clientctl-shell --origin
/// loopback`, docs/native-shell.md#origins-app-or-loopback-http): only the shell's own
/// web view may use its port.
///
/// WebKitGTK lets the shell add no header to the view's requests, but the view keeps
/// cookies. So the shell navigates to `/?clientctl-launch=TOKEN` with a token it minted
/// (``mintToken()``: one use, at most a minute old); the server exchanges it for a cookie
/// holding ``cookie`` (`HttpOnly`, `SameSite=Strict`, a session cookie) and redirects to
/// `/`. Every later request must carry that cookie: the view's pages, their subresources,
/// `fetch`, service workers and WebSocket handshakes do; another process, or a page in
/// another browser, has neither the token nor the cookie. Both are 256 random bits drawn
/// for this run and compared in constant time.
package final class LaunchSecret: Sendable {
    /// The query parameter of the launch URL, and the cookie's name.
    package static let name = "clientctl-launch"
    /// How long a minted token may wait for its navigation.
    static let tokenLifetime: Duration = .seconds(60)
    /// Most tokens waiting at once (an older one is dropped).
    static let maxTokens = 8

    /// The cookie's value: what every request of the view carries.
    let cookie: String
    private struct Token {
        let value: String
        let expires: ContinuousClock.Instant
    }
    private let tokens = Mutex<[Token]>([])

    package init() { cookie = Self.random() }

    /// A new one-time token for the launch URL (`/?clientctl-launch=TOKEN`).
    package func mintToken() -> String {
        let token = Self.random()
        let now = ContinuousClock.now
        tokens.withLock { tokens in
            tokens.removeAll { $0.expires <= now }
            if tokens.count >= Self.maxTokens { tokens.removeFirst() }
            tokens.append(Token(value: token, expires: now + Self.tokenLifetime))
        }
        return token
    }

    /// Spends `token`: true when it was minted, is unused and has not expired.
    package func redeem(_ token: String) -> Bool {
        let now = ContinuousClock.now
        return tokens.withLock { tokens in
            guard let index = tokens.firstIndex(where: { Self.same($0.value, token) }) else { return false }
            let expires = tokens.remove(at: index).expires
            return expires > now
        }
    }

    /// True when `token` was minted, is unused and has not expired, without spending it
    /// (``ConnectionAdmission`` trusts the connection that carries it).
    func isWaiting(_ token: String) -> Bool {
        let now = ContinuousClock.now
        return tokens.withLock { tokens in tokens.contains { $0.expires > now && Self.same($0.value, token) } }
    }

    /// True when one of the `Cookie` header values holds this run's cookie.
    func admits(cookieHeaders: [String]) -> Bool {
        for header in cookieHeaders {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == Self.name else { continue }
                if Self.same(parts[1].trimmingCharacters(in: .whitespaces), cookie) { return true }
            }
        }
        return false
    }

    /// The `Set-Cookie` value the exchange answers with.
    var setCookie: String { "\(Self.name)=\(cookie); Path=/; HttpOnly; SameSite=Strict" }

    /// The token named by a query string (`a=1&clientctl-launch=…`), if any.
    static func token(inQuery query: String?) -> String? {
        guard let query else { return nil }
        for item in query.split(separator: "&") {
            let parts = item.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0] == name { return String(parts[1]) }
        }
        return nil
    }

    /// Compares without stopping at the first difference.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// 256 random bits as hex.
    static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }
}
