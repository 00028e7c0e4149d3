import ConsoleAccess

/// The operator a request comes from, once its session cookie is checked.
struct SignedIn: Sendable, Equatable {
    /// The session (its CSRF token: every form carries it, every POST must).
    let session: Session

    /// The operator's name (from the operators file).
    var name: String { session.name }
    /// `viewer` or `operator`.
    var roleName: String { session.role.rawValue }
    /// An operator may act; a viewer only sees.
    var mayAct: Bool { session.role.mayAct }
    /// The CSRF token of the session's forms.
    var csrf: String { session.csrf }
}
