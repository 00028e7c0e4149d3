import AuditTrail
import ConsoleAccess
import Foundation
import TestSupport
import Testing

/// The console's web security over HTTP on 127.0.0.1, as a browser or an attacker's page
/// would meet it: login and its cookie, the headers on every response, the Origin and CSRF
/// checks, the viewer's forged POST, no act by GET, the throttle; every refusal in the
/// audit trail and nothing changed on disk.
@Suite(.serialized) struct ConsoleAccessHTTPTests {
    static let policy = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// Every response carries the policy without script, nosniff, same-origin referrers and
    /// no-store: the login page, a redirect, a page, the stylesheet, a refusal.
    static func expectSecurityHeaders(_ r: CurlResponse, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(r["content-security-policy"] == policy, "\(what): \(r.headers)", sourceLocation: sourceLocation)
        #expect(r["content-security-policy"]?.contains("script") == false, sourceLocation: sourceLocation)
        #expect(r["x-content-type-options"] == "nosniff", "\(what)", sourceLocation: sourceLocation)
        #expect(r["referrer-policy"] == "same-origin", "\(what)", sourceLocation: sourceLocation)
        #expect(r["cache-control"] == "no-store", "\(what)", sourceLocation: sourceLocation)
    }

    @Test func loginSetsAStrictHttpOnlyCookieAndEveryResponseCarriesThePolicy() async throws {
        let rig = try await ConsoleRig()
        let form = try await rig.get("/login")
        #expect(form.status == 200 && form.body.contains("name=\"name\"") && form.body.contains("name=\"password\""))
        #expect(!form.body.lowercased().contains("<script") && !form.body.contains("style=\""))
        Self.expectSecurityHeaders(form, "login page")
        let away = try await rig.get("/")
        #expect(away.status == 303 && away["location"] == "/login")
        Self.expectSecurityHeaders(away, "redirect")

        let wrong = try await rig.post("/login", [("name", "alice"), ("password", "not it")])
        #expect(wrong.status == 401 && wrong.body.contains("Wrong name or password.") && wrong["set-cookie"] == nil)
        Self.expectSecurityHeaders(wrong, "failed login")

        let ok = try await rig.post("/login", [("name", "alice"), ("password", ConsoleRig.operatorPassword)])
        #expect(ok.status == 303 && ok["location"] == "/")
        let cookie = ok["set-cookie"] ?? ""
        let attributes = Set(cookie.split(separator: ";").dropFirst().map { $0.trimmingCharacters(in: .whitespaces) })
        #expect(attributes.contains("HttpOnly") && attributes.contains("SameSite=Strict") && attributes.contains("Path=/"), "\(cookie)")
        // The cookie lives as long as the session may (12 h): the console ends an idle one
        // itself, so a cookie cut at the 30-minute idle timeout would log out a busy operator.
        #expect(attributes.contains("Max-Age=43200") && !attributes.contains("Secure"), "\(cookie)")
        let session = try await rig.login()
        let page = try await rig.get("/", cookie: session)
        #expect(page.status == 200 && page.body.contains("data-field=\"version\">1.1.0<"), "\(page.body)")
        Self.expectSecurityHeaders(page, "channels page")
        let missing = try await rig.get("/nowhere", cookie: session)
        #expect(missing.status == 404)
        Self.expectSecurityHeaders(missing, "404")
        let wrongMethod = try await rig.post("/", [("a", "b")], cookie: session)
        #expect((400..<500).contains(wrongMethod.status), "\(wrongMethod.status)")
        Self.expectSecurityHeaders(wrongMethod, "POST /")
        let css = try await rig.get("/console.css")
        #expect(css.status == 200 && css["content-type"]?.hasPrefix("text/css") == true)
        Self.expectSecurityHeaders(css, "stylesheet")
        for path in ["/channel/stable", "/devices", "/audit"] {
            let r = try await rig.get(path, cookie: session)
            #expect(r.status == 200, "\(path): \(r.status)")
            #expect(!r.body.lowercased().contains("<script") && !r.body.contains("style=\"") && !r.body.contains("<style"), "\(path)")
            Self.expectSecurityHeaders(r, path)
        }

        // Logout ends the session (with the session's CSRF token only).
        let other = try await rig.login()
        let token = ConsoleRig.field("csrf", in: try await rig.get("/", cookie: other).body) ?? ""
        #expect(try await rig.post("/logout", [("csrf", "not it")], cookie: other).status == 403)
        let out = try await rig.post("/logout", [("csrf", token)], cookie: other)
        #expect(out.status == 303 && out["location"] == "/login" && out["set-cookie"]?.contains("Max-Age=0") == true)
        #expect(try await rig.get("/", cookie: other).status == 303)
        #expect(try await rig.get("/", cookie: session).status == 200)

        // The session ends with its idle timeout on the console's monotonic clock.
        rig.uptime.advance(.seconds(31 * 60))
        #expect(try await rig.get("/", cookie: session).status == 303)

        let trail = try rig.trail()
        #expect(trail.map(\.act) == ["login", "login", "login", "login", "logout"])
        #expect(trail.map(\.result) == ["refused: wrong name or password", "ok", "ok", "ok", "ok"])
        #expect(trail.allSatisfy { $0.address == "127.0.0.1" && $0.operatorName == "alice" })
        await rig.stop()
    }

    /// A POST from another origin, without the session's CSRF token, from a viewer, or
    /// without a session is refused 403; an act by GET is 405. Each attempt is in the
    /// trail and the release folder is as it was.
    @Test func forgedAndCrossOriginActsAreRefusedAndRecorded() async throws {
        let rig = try await ConsoleRig()
        let alice = try await rig.login()
        let victor = try await rig.login("victor", ConsoleRig.viewerPassword)
        let (csrf, basis, page) = try await rig.actFields(cookie: alice)
        #expect(page.contains("data-act=\"halt\" data-channel=\"stable\" data-version=\"1.1.0\""), "\(page)")
        let viewerPage = try await rig.get("/channel/stable", cookie: victor).body
        #expect(!viewerPage.contains("data-act=\"halt\"") && !viewerPage.contains("data-act=\"cap\"") && !viewerPage.contains("/act/"))
        let viewerCSRF = ConsoleRig.field("csrf", in: viewerPage) ?? ""
        #expect(!viewerCSRF.isEmpty && viewerCSRF != csrf)
        let before = try TreeSnapshot(rig.d.releases.path)
        let fields = [("channel", "stable"), ("version", "1.1.0"), ("basis", basis)]

        let crossSite = try await rig.post("/act/halt", fields + [("csrf", csrf)], cookie: alice, origin: .some("http://127.0.0.1:1"))
        #expect(crossSite.status == 403 && crossSite.body.contains("another origin"), "\(crossSite.body)")
        ConsoleAccessHTTPTests.expectSecurityHeaders(crossSite, "403")
        let noOrigin = try await rig.post("/act/halt", fields + [("csrf", csrf)], cookie: alice, origin: .none)
        #expect(noOrigin.status == 403)
        let nullOrigin = try await rig.post("/act/halt", fields + [("csrf", csrf)], cookie: alice, origin: .some("null"))
        #expect(nullOrigin.status == 403)
        let noToken = try await rig.post("/act/halt", fields, cookie: alice)
        #expect(noToken.status == 403 && noToken.body.contains("CSRF"), "\(noToken.body)")
        let otherToken = try await rig.post("/act/halt", fields + [("csrf", viewerCSRF)], cookie: alice)
        #expect(otherToken.status == 403 && otherToken.body.contains("CSRF"))
        let viewer = try await rig.post("/act/halt", fields + [("csrf", viewerCSRF)], cookie: victor)
        #expect(viewer.status == 403 && viewer.body.contains("victor is a viewer"), "\(viewer.body)")
        let noSession = try await rig.post("/act/halt", fields + [("csrf", csrf)])
        #expect(noSession.status == 403 && noSession.body.contains("log in"))
        let byGet = try await rig.get("/act/halt?channel=stable&version=1.1.0&csrf=\(csrf)", cookie: alice)
        #expect(byGet.status == 405 && byGet["allow"] == "POST")
        let crossLogin = try await rig.post(
            "/login", [("name", "alice"), ("password", ConsoleRig.operatorPassword)], origin: .some("http://evil.example"))
        #expect(crossLogin.status == 403 && crossLogin["set-cookie"] == nil)

        #expect(try TreeSnapshot(rig.d.releases.path) == before)
        let refused = try rig.trail().filter { $0.result.hasPrefix("refused") }
        #expect(refused.count == 8, "\(refused)")
        #expect(refused.filter { $0.act == "halt" }.allSatisfy { $0.target == "stable 1.1.0" })
        #expect(refused.contains { $0.operatorName == "victor" && $0.result == "refused: victor is a viewer: a viewer sees, an operator acts" })
        #expect(refused.contains { $0.operatorName == "alice" && $0.result == "refused: the request came from another origin" })
        await rig.stop()
    }

    /// Five wrong passwords for one name, then 429 with Retry-After, even for the right
    /// password; after the wait on the console's clock, the right password logs in.
    @Test func loginsAreThrottledWithRetryAfter() async throws {
        let rig = try await ConsoleRig()
        for _ in 0..<5 {
            #expect(try await rig.post("/login", [("name", "alice"), ("password", "guess")]).status == 401)
        }
        let held = try await rig.post("/login", [("name", "alice"), ("password", ConsoleRig.operatorPassword)])
        #expect(held.status == 429 && held["set-cookie"] == nil, "\(held.status)")
        let wait = Int(held["retry-after"] ?? "") ?? 0
        #expect((1...30).contains(wait), "\(held.headers)")
        ConsoleAccessHTTPTests.expectSecurityHeaders(held, "429")
        rig.uptime.advance(.seconds(wait))
        _ = try await rig.login()
        let results = try rig.trail().map(\.result)
        #expect(results.filter { $0 == "refused: wrong name or password" }.count == 5)
        #expect(results.contains { $0.hasPrefix("refused: throttled for ") } && results.last == "ok")
        await rig.stop()
    }

    /// The console reads the operators file at every request: an operator whose password
    /// changed, or who was removed, is logged out at their next request; the others stay.
    @Test func aChangedOrRemovedOperatorIsLoggedOut() async throws {
        let rig = try await ConsoleRig()
        let alice = try await rig.login()
        let victor = try await rig.login("victor", ConsoleRig.viewerPassword)
        var file = try OperatorFile.load(rig.operators)
        try file.add(
            OperatorAccount(name: "alice", role: .operator, passwordHash: try PasswordHash.make(Array("a new passphrase".utf8))), replacing: true)
        try Data(file.encoded()).write(to: URL(fileURLWithPath: rig.operators))
        #expect(try await rig.get("/", cookie: alice).status == 303)
        #expect(try await rig.get("/", cookie: victor).status == 200)
        _ = try await rig.login("alice", "a new passphrase")
        _ = try file.remove(named: "victor")
        try Data(file.encoded()).write(to: URL(fileURLWithPath: rig.operators))
        #expect(try await rig.get("/", cookie: victor).status == 303)
        await rig.stop()
    }
}
