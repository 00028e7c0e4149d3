import Foundation

/// JSON form of an ``ApplyPolicy`` in the signed release document:
///
/// ```json
/// {"deadline":"2026-12-01T00:00:00Z","graceSeconds":3600,"idleSeconds":300,"mode":"idle"}
/// ```
///
/// - `mode` (required string): decoded leniently — an unknown mode decodes as ``ApplyMode/nextStart`` with the
///   original text in ``ApplyPolicy/unknownMode``; encoding writes that original text back, so re-encoding a
///   received policy never changes what was signed.
/// - `idleSeconds` (optional integer), `deadline` (optional RFC 3339 string, written in UTC with `Z`),
///   `graceSeconds` (optional integer when read, default 3600; always written). Absent optionals are not written.
///
/// Structural problems (missing `mode`, wrong JSON types) surface as the decoder's `DecodingError`; out-of-range
/// values as ``ApplyPolicyError`` (see ``ApplyPolicy/received(mode:idleSeconds:deadline:graceSeconds:)``).
extension ApplyPolicy: Codable {
    /// The JSON keys.
    private enum CodingKeys: String, CodingKey {
        case mode, idleSeconds, deadline, graceSeconds
    }

    /// Decodes leniently about the mode, strictly about values (see the extension's documentation).
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self = try ApplyPolicy.received(
            mode: try container.decode(String.self, forKey: .mode),
            idleSeconds: try container.decodeIfPresent(Int.self, forKey: .idleSeconds),
            deadline: try container.decodeIfPresent(String.self, forKey: .deadline),
            graceSeconds: try container.decodeIfPresent(Int.self, forKey: .graceSeconds)
        )
    }

    /// Encodes `mode` (the unknown text if there was one), `idleSeconds` and `deadline` when present, `graceSeconds`.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(unknownMode ?? mode.rawValue, forKey: .mode)
        try container.encodeIfPresent(idleSeconds, forKey: .idleSeconds)
        try container.encodeIfPresent(deadline.map(RFC3339Time.string(from:)), forKey: .deadline)
        try container.encode(graceSeconds, forKey: .graceSeconds)
    }
}
