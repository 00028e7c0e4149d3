/// Why the collector refused a batch: a closed set, the `reason` label of
/// `fleet_collector_batches_refused_total` and the start of each refusal's message.
public enum RefusalReason: String, Sendable, CaseIterable {
    /// Not strictly valid JSON, or not an object.
    case malformed
    /// A `schema` the collector does not know.
    case unknownSchema = "unknown-schema"
    /// A field missing, mistyped, out of range or unknown.
    case invalidField = "invalid-field"
    /// A body or batch over the limits.
    case tooLarge = "too-large"
    /// A `Content-Encoding` other than zstd or none, or a body that is not valid zstd.
    case encoding
    /// A `Content-Type` other than `application/json`.
    case contentType = "content-type"
    /// Rate-limited (by source address or device id).
    case rateLimited = "rate-limited"
    /// Too many batches in flight, or the store failed.
    case unavailable
    /// The body did not arrive in time.
    case timeout
    /// A schema-2 batch without a valid signature by the key it names.
    case badSignature = "bad-signature"
    /// Signed by another key than the one bound to its device id.
    case keyMismatch = "key-mismatch"
    /// Signed by a key that already speaks for another device id.
    case keyBound = "key-bound"
    /// Signed by a device's key for another app than the one it was bound with.
    case appMismatch = "app-mismatch"
    /// Unsigned, for a device id bound to a key, or under `listed`/`manual` admission.
    case unsigned
    /// From a device an operator rejected.
    case rejected
    /// From a device not admitted whose held reports are at their bound.
    case heldFull = "held-full"
}
