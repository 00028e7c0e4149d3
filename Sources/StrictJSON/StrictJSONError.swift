import ClientFoundation

/// An error of the strict JSON reader: a document that is not strictly valid JSON (syntax,
/// duplicate keys, depth, size, UTF-8).
///
/// Its message names the document and where (line, column, byte offset) and what is
/// wrong; its `underlying` is a ``StrictJSON/ParseError``.
public typealias StrictJSONError = ModuleError<StrictJSONErrorCode>

/// The code of ``StrictJSONError``: what kind of failure it is. New codes may be added in later versions.
public struct StrictJSONErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case malformedJSON
    }
    fileprivate let base: Base
    public var description: String { "\(base)" }

    /// JSON text that is not strictly valid (syntax, duplicate keys, depth, size, UTF-8).
    public static let malformedJSON = Self(base: .malformedJSON)

    /// The sysexits status: 65, bad data.
    public func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .malformedJSON: return .dataError
        }
    }
}
