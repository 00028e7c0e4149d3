import ClientFoundation

/// What an operator may do in the console: a viewer sees, an operator acts.
public enum OperatorRole: String, Sendable, CaseIterable, Codable {
    /// Sees every page; every act is refused.
    case viewer
    /// Sees every page and may act: halt, lift, cap, admit, reject.
    case `operator`

    /// Whether this role may act (a POST that changes something).
    public var mayAct: Bool { self == .operator }

    /// The role named `text` (`viewer` or `operator`, exactly).
    /// - Throws: ``ConsoleAccessError`` `.invalidArgument` naming the roles there are.
    public static func named(_ text: String) throws(ConsoleAccessError) -> OperatorRole {
        guard let role = OperatorRole(rawValue: text) else {
            throw ConsoleAccessError(.invalidArgument, "unknown role \(Quoting.quoted(text)): a role is viewer or operator")
        }
        return role
    }
}

/// One operator of the console: a name, a role and the hash of a password
/// (``PasswordHash``). The password itself is never stored.
public struct OperatorAccount: Sendable, Equatable {
    /// The name the operator logs in with; 1 to 64 characters of A–Z, a–z, 0–9, `.`, `_`, `-`.
    public var name: String
    /// What the operator may do.
    public var role: OperatorRole
    /// The password's hash, `$scrypt$…` (``PasswordHash``).
    public var passwordHash: String

    /// An account; `name` must pass ``validate(name:)``.
    public init(name: String, role: OperatorRole, passwordHash: String) throws(ConsoleAccessError) {
        try Self.validate(name: name)
        self.name = name
        self.role = role
        self.passwordHash = passwordHash
    }

    /// The longest name, in characters.
    public static let maxNameLength = 64

    /// Whether `name` is an operator's name: 1 to 64 characters of A–Z, a–z, 0–9, `.`, `_`
    /// and `-`. Such a name is safe in a log line, a file, an HTML page and the audit trail.
    public static func isValid(name: String) -> Bool {
        (1...maxNameLength).contains(name.utf8.count)
            && name.utf8.allSatisfy { b in
                (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == 0x2E || b == 0x5F || b == 0x2D
            }
    }

    /// Throws unless ``isValid(name:)``.
    /// - Throws: ``ConsoleAccessError`` `.invalidArgument` saying what a name may hold.
    public static func validate(name: String) throws(ConsoleAccessError) {
        guard !isValid(name: name) else { return }
        throw ConsoleAccessError(
            .invalidArgument,
            "operator name \(Quoting.quoted(name)) is not 1 to \(maxNameLength) characters of A-Z, a-z, 0-9, '.', '_' and '-'")
    }
}
