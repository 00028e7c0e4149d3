/// A field of a request (a root's setup, a release to publish) that failed validation.
///
/// Libraries name fields as their requests and config do (`manifestURL`), never the
/// flags of a command line; other fields a message mentions are quoted in backticks in
/// its text. Errors carry it as their `underlying` cause, so a front
/// end can say the same in its own words (the command line names its flags).
public struct FieldProblem: Error, Sendable, Equatable {
    /// The field, as the request names it.
    public var field: String
    /// What is wrong, in words that follow the field's name.
    public var problem: String

    public init(_ field: String, _ problem: String) {
        self.field = field
        self.problem = problem
    }

    /// `field problem`, as libraries report it.
    public var message: String { "`\(field)` \(problem)" }
}

/// The code of a module whose errors can report a ``FieldProblem``: it has an
/// `invalidArgument` code for a caller's bad value.
public protocol FieldReportingCode: ClientctlErrorCode {
    /// The code of a caller's bad value.
    static var invalidArgument: Self { get }
}

extension ModuleError where Code: FieldReportingCode {
    /// A request field that failed validation.
    public static func field(_ field: String, _ problem: String) -> Self {
        Self.field(.invalidArgument, field, problem)
    }
}

extension ModuleError {
    /// A request field that failed validation, with the code `code`.
    public static func field(_ code: Code, _ field: String, _ problem: String) -> Self {
        let cause = FieldProblem(field, problem)
        return Self(code, cause.message, underlying: cause)
    }
}
