import Synchronization

/// One logged-in operator: what the console's session cookie names.
public struct Session: Sendable, Equatable {
    /// The session's id: 32 random bytes in base64url (43 characters), the cookie's value.
    public let id: String
    /// The session's CSRF token: 32 random bytes in base64url, the hidden field of every form.
    public let csrf: String
    /// The operator's name.
    public let name: String
    /// The operator's role when the session was opened.
    public let role: OperatorRole
    /// The clock reading the session was opened at.
    public let opened: Duration
    /// The clock reading it was last used at.
    public internal(set) var lastUsed: Duration
    /// The clock reading it expires at unless used before: the idle timeout after
    /// ``lastUsed``, never later than the lifetime after ``opened``.
    public internal(set) var expires: Duration
    /// The password hash the operator logged in with, when opened from an account: a
    /// session ends when the file holds another (the password was changed).
    let passwordHash: String?

    /// Whether `token` is this session's CSRF token, compared in constant time.
    public func csrfMatches(_ token: String) -> Bool {
        SecretBytes.equal(Array(token.utf8), Array(csrf.utf8))
    }
}

/// The console's logged-in sessions, in memory (a restart logs everyone out).
///
/// Time is a reading of a monotonic clock (a ``ClientFoundation/MonotonicClock``'s `now`,
/// a `Duration` since it was made), which no change of the wall clock moves. A session
/// ends after ``idleTimeout`` without use and after ``lifetime`` in any case. At most
/// ``capacity`` sessions are kept: opening one more first drops the expired ones, then the
/// one used longest ago.
public final class SessionStore: Sendable {
    /// How long a session lasts without use.
    public let idleTimeout: Duration
    /// How long a session lasts at most, however much it is used.
    public let lifetime: Duration
    /// The most sessions kept.
    public let capacity: Int

    private let sessions = Mutex<[String: Session]>([:])

    /// A store whose sessions end after `idleTimeout` without use (30 minutes) and after
    /// `lifetime` in any case (12 hours); it keeps at most `capacity` sessions (1,000).
    public init(idleTimeout: Duration = .seconds(30 * 60), lifetime: Duration = .seconds(12 * 3600), capacity: Int = 1000) {
        self.idleTimeout = max(idleTimeout, .seconds(1))
        self.lifetime = max(lifetime, .seconds(1))
        self.capacity = max(capacity, 1)
    }

    /// Opens a session for `name` with `role` at the reading `now`, with a new random id and
    /// CSRF token.
    public func open(name: String, role: OperatorRole, now: Duration) -> Session {
        open(name: name, role: role, passwordHash: nil, now: now)
    }

    /// Opens a session for `account` (just authenticated) at the reading `now`: like
    /// ``open(name:role:now:)``, and ``session(id:now:operators:)`` ends it once the
    /// operators file no longer holds this account with this role and password.
    public func open(account: OperatorAccount, now: Duration) -> Session {
        open(name: account.name, role: account.role, passwordHash: account.passwordHash, now: now)
    }

    private func open(name: String, role: OperatorRole, passwordHash: String?, now: Duration) -> Session {
        let session = Session(
            id: SecretBytes.base64URL(SecretBytes.random(32)), csrf: SecretBytes.base64URL(SecretBytes.random(32)),
            name: name, role: role, opened: now, lastUsed: now, expires: now + min(idleTimeout, lifetime),
            passwordHash: passwordHash)
        sessions.withLock { all in
            if all.count >= capacity {
                all = all.filter { $0.value.expires > now }
            }
            while all.count >= capacity, let oldest = all.min(by: { $0.value.lastUsed < $1.value.lastUsed }) {
                all[oldest.key] = nil
            }
            all[session.id] = session
        }
        return session
    }

    /// The live session `id` names at the reading `now`, used now (its idle timeout starts
    /// again); nil when there is none or it expired (then it is dropped).
    public func session(id: String, now: Duration) -> Session? {
        sessions.withLock { all in
            guard var session = all[id] else { return nil }
            guard now < session.expires else {
                all[id] = nil
                return nil
            }
            session.lastUsed = max(session.lastUsed, now)
            session.expires = min(session.lastUsed + idleTimeout, session.opened + lifetime)
            all[id] = session
            return session
        }
    }

    /// ``session(id:now:)``, ended (and nil) when `operators` no longer holds its operator,
    /// holds it with another role, or with another password than it logged in with: what
    /// `clientctl operator remove` or `add --replace` did takes effect at the next request.
    public func session(id: String, now: Duration, operators: OperatorFile) -> Session? {
        guard let session = session(id: id, now: now) else { return nil }
        let account = operators.account(named: session.name)
        guard let account, account.role == session.role, session.passwordHash.map({ $0 == account.passwordHash }) ?? true else {
            close(id: id)
            return nil
        }
        return session
    }

    /// Ends the session `id` (a logout); nothing when there is none.
    public func close(id: String) {
        sessions.withLock { all in all[id] = nil }
    }

    /// Ends every session of the operator `name` (removed, or given another role or password).
    public func close(name: String) {
        sessions.withLock { all in all = all.filter { $0.value.name != name } }
    }

    /// How many sessions are kept now (expired ones included until they are dropped).
    public var count: Int { sessions.withLock { $0.count } }

    /// Whether `token` is `session`'s CSRF token, compared in constant time.
    public func csrfMatches(_ session: Session, _ token: String) -> Bool {
        session.csrfMatches(token)
    }
}
