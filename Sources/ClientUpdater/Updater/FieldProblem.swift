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

extension UpdaterError {
    /// A request field that failed validation (``FieldProblem``).
    public static func field(_ field: String, _ problem: String) -> UpdaterError {
        Self.field(.invalidArgument, field, problem)
    }

    /// A request field that failed validation, with another code than `.invalidArgument`.
    public static func field(_ code: Code, _ field: String, _ problem: String) -> UpdaterError {
        let cause = FieldProblem(field, problem)
        return UpdaterError(code, cause.message, underlying: cause)
    }
}
