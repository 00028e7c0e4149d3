import Foundation
import Testing

@testable import ConsoleAccess

/// Sessions on readings of a monotonic clock, advanced by hand: the idle timeout, the
/// lifetime, logout, the bound on their number, and CSRF tokens.
@Suite struct SessionStoreTests {
    static let minute = Duration.seconds(60)

    @Test func aSessionHasRandomUnguessableIdAndToken() {
        let store = SessionStore()
        let a = store.open(name: "alice", role: .operator, now: .zero)
        let b = store.open(name: "alice", role: .operator, now: .zero)
        #expect(a.id != b.id && a.csrf != b.csrf && a.id != a.csrf)
        for token in [a.id, a.csrf] {
            #expect(token.count == 43, "32 bytes in unpadded base64url: \(token)")
            #expect(token.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }, "\(token)")
        }
        #expect(a.name == "alice" && a.role == .operator)
        #expect(a.expires == Self.minute * 30)
        #expect(store.session(id: a.id, now: .zero) == a)
        #expect(store.session(id: "not-a-session", now: .zero) == nil)
    }

    /// Used within 30 minutes a session lives on; 30 minutes unused, it is gone.
    @Test func aSessionEndsAfterItsIdleTimeout() {
        let store = SessionStore()
        let session = store.open(name: "alice", role: .viewer, now: .seconds(100))
        var now = Duration.seconds(100)
        for _ in 0..<5 {
            now += Self.minute * 29
            let used = store.session(id: session.id, now: now)
            #expect(used != nil, "used again after 29 minutes")
            #expect(used?.expires == now + Self.minute * 30)
        }
        now += Self.minute * 30
        #expect(store.session(id: session.id, now: now) == nil, "30 minutes unused")
        #expect(store.session(id: session.id, now: now - Self.minute) == nil, "dropped, not just hidden")
        #expect(store.count == 0)
    }

    /// However often it is used, a session ends 12 hours after it was opened; its `expires`
    /// never says later than that.
    @Test func aSessionEndsAfterItsLifetimeWhateverItsUse() {
        let store = SessionStore()
        let session = store.open(name: "alice", role: .operator, now: .zero)
        var now = Duration.zero
        while now + Self.minute * 20 < .seconds(12 * 3600) {
            now += Self.minute * 20
            let used = store.session(id: session.id, now: now)
            #expect(used != nil, "at \(now)")
            #expect((used?.expires ?? .zero) <= .seconds(12 * 3600))
        }
        #expect(store.session(id: session.id, now: .seconds(12 * 3600)) == nil)
    }

    @Test func logoutAndRemovalEndSessions() {
        let store = SessionStore()
        let a = store.open(name: "alice", role: .operator, now: .zero)
        let b = store.open(name: "bob", role: .viewer, now: .zero)
        let b2 = store.open(name: "bob", role: .viewer, now: .zero)
        store.close(id: a.id)
        #expect(store.session(id: a.id, now: .zero) == nil)
        store.close(name: "bob")
        #expect(store.session(id: b.id, now: .zero) == nil && store.session(id: b2.id, now: .zero) == nil)
    }

    /// At capacity, expired sessions go first, then the one used longest ago; the others live.
    @Test func theStoreIsBoundedAndDropsTheLeastRecentlyUsed() {
        let store = SessionStore(capacity: 3)
        let a = store.open(name: "a", role: .viewer, now: .zero)
        let b = store.open(name: "b", role: .viewer, now: .seconds(1))
        let c = store.open(name: "c", role: .viewer, now: .seconds(2))
        _ = store.session(id: a.id, now: .seconds(3))  // a used: b is now the oldest
        let d = store.open(name: "d", role: .viewer, now: .seconds(4))
        #expect(store.count == 3)
        #expect(store.session(id: b.id, now: .seconds(4)) == nil)
        #expect(store.session(id: a.id, now: .seconds(4)) != nil)
        #expect(store.session(id: c.id, now: .seconds(4)) != nil && store.session(id: d.id, now: .seconds(4)) != nil)
        for k in 0..<100 { _ = store.open(name: "flood\(k)", role: .viewer, now: .seconds(5)) }
        #expect(store.count == 3)
    }

    @Test func csrfTokensMatchOnlyExactly() {
        let store = SessionStore()
        let session = store.open(name: "alice", role: .operator, now: .zero)
        let other = store.open(name: "alice", role: .operator, now: .zero)
        #expect(store.csrfMatches(session, session.csrf))
        #expect(!store.csrfMatches(session, other.csrf))
        #expect(!store.csrfMatches(session, ""))
        #expect(!store.csrfMatches(session, String(session.csrf.dropLast())))
        #expect(!store.csrfMatches(session, session.csrf + "x"))
        #expect(!store.csrfMatches(session, session.csrf.uppercased()))
        #expect(!store.csrfMatches(session, session.id))
    }

    /// A session opened from an account ends at its next use once the file no longer holds
    /// that operator, or holds it with another role or another password.
    @Test func aSessionEndsWhenItsOperatorIsRemovedOrChanged() throws {
        let cost = PasswordHashTests.cheap
        let alice = try OperatorAccount(name: "alice", role: .operator, passwordHash: PasswordHash.make(Array("a".utf8), cost: cost))
        let bob = try OperatorAccount(name: "bob", role: .operator, passwordHash: PasswordHash.make(Array("b".utf8), cost: cost))
        let carol = try OperatorAccount(name: "carol", role: .operator, passwordHash: PasswordHash.make(Array("c".utf8), cost: cost))
        var file = try OperatorFile(accounts: [alice, bob, carol])
        let store = SessionStore()
        let a = store.open(account: alice, now: .zero)
        let b = store.open(account: bob, now: .zero)
        let c = store.open(account: carol, now: .zero)
        for s in [a, b, c] { #expect(store.session(id: s.id, now: .seconds(1), operators: file) != nil) }

        try file.remove(named: "alice")
        var viewer = bob
        viewer.role = .viewer
        try file.add(viewer, replacing: true)
        var newPassword = carol
        newPassword.passwordHash = try PasswordHash.make(Array("c2".utf8), cost: cost)
        try file.add(newPassword, replacing: true)
        for s in [a, b, c] {
            #expect(store.session(id: s.id, now: .seconds(2), operators: file) == nil, "\(s.name)")
            #expect(store.session(id: s.id, now: .seconds(2)) == nil, "\(s.name)'s session is closed, not only refused")
        }
    }
}
