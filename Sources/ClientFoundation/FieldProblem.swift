/// A field of a request (a root's setup, a release to publish) that failed validation.
///
/// Libraries name fields as their requests and config do (`manifestURL`), never the
/// flags of a command line; other fields a message mentions are quoted in backticks
/// (`` `allowInsecureHTTP` ``). Errors carry it as their `underlying` cause, so a front
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

/// A module's error type that can report a ``FieldProblem``: one home for the `field`
/// constructors of every module.
public protocol FieldReportingError: ClientctlError {
    associatedtype Code
    /// The code of a caller's bad value (`.invalidArgument` in every module).
    static var invalidArgumentCode: Code { get }
    init(_ code: Code, _ message: String, underlying: (any Error & Sendable)?)
}

extension FieldReportingError {
    /// A request field that failed validation.
    public static func field(_ field: String, _ problem: String) -> Self {
        Self.field(invalidArgumentCode, field, problem)
    }

    /// A request field that failed validation, with another code than `.invalidArgument`.
    public static func field(_ code: Code, _ field: String, _ problem: String) -> Self {
        let cause = FieldProblem(field, problem)
        return Self(code, cause.message, underlying: cause)
    }
}
