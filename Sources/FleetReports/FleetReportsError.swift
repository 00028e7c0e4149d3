import ClientFoundation

/// An error of the fleet report model: a batch or summary that is not what the schema says.
///
/// Its message names the field and why (`reports[3].type: unknown report type "boot"`).
public typealias FleetReportsError = ModuleError<FleetReportsErrorCode>

/// The code of ``FleetReportsError``. New codes may be added in later versions.
public struct FleetReportsErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case malformed, unknownSchema, invalidField, tooLarge
    }
    fileprivate let base: Base
    public var description: String { "\(base)" }

    /// Not strictly valid JSON, or not an object where one is needed.
    public static let malformed = Self(base: .malformed)
    /// A `schema` this version does not know.
    public static let unknownSchema = Self(base: .unknownSchema)
    /// A field that is missing, of the wrong type, out of range or not allowed.
    public static let invalidField = Self(base: .invalidField)
    /// More bytes or more reports than a batch may hold.
    public static let tooLarge = Self(base: .tooLarge)

    /// Every code is bad data (sysexits 65).
    public func kind(underlying: (any Error & Sendable)?) -> FailureKind { .dataError }
}
