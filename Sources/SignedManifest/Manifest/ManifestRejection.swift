/// Why a manifest was not accepted as valid: a status value, not a policy decision.
public struct ManifestRejection: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure.
    public enum Reason: String, Sendable, Equatable {
        /// The bytes are not strict JSON, or not an object.
        case malformedJSON
        /// A required field is absent.
        case missingField
        /// A field has the wrong JSON type.
        case wrongType
        /// A field's value breaks its rule (SemVer, hex, date…).
        case invalidValue
        /// `format` is not `signed-client-v1`.
        case unsupportedFormat
        /// No trusted key has the manifest's `keyId`.
        case untrustedKey
        /// The signature does not verify over the canonical bytes.
        case badSignature
        /// Fewer distinct release keys signed than the trust root's threshold.
        case thresholdNotMet
    }

    public var reason: Reason
    /// The field at fault, when there is one.
    public var field: String?
    /// One line: what is wrong, naming the field.
    public var message: String

    public init(_ reason: Reason, field: String?, _ message: String) {
        self.reason = reason
        self.field = field
        self.message = message
    }

    public var description: String { message }

    /// The same failure as a ``SignedManifestError`` (code by reason) for the command line.
    public func error(context: String? = nil) -> SignedManifestError {
        let code: SignedManifestError.Code
        switch reason {
        case .malformedJSON: code = .malformedJSON
        case .untrustedKey: code = .untrustedKey
        case .badSignature: code = .invalidSignature
        case .thresholdNotMet: code = .thresholdNotMet
        case .missingField, .wrongType, .invalidValue, .unsupportedFormat: code = .invalidManifest
        }
        let text = context.map { "\($0): \(message)" } ?? message
        return SignedManifestError(code, text, underlying: self)
    }
}
