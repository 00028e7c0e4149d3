import ClientFoundation
import DeviceIdentity
import DeviceTargeting
import Foundation
import StrictJSON

/// Reads typed manifest fields out of a JSON object, throwing a ``ManifestRejection`` that
/// names the field for anything missing, mistyped or malformed.
struct ManifestFieldReader {
    let object: JSONObject

    func value(_ name: String) throws -> JSONValue {
        guard let v = object[name] else { throw ManifestRejection(.missingField, field: name, "required field '\(name)' is missing") }
        return v
    }

    func string(_ name: String) throws -> String {
        let v = try value(name)
        guard case .string(let s) = v else {
            throw ManifestRejection(.wrongType, field: name, "field '\(name)' must be a string, got \(v.typeName)")
        }
        return s
    }

    func optional<T>(_ name: String, _ read: (String) throws -> T) throws -> T? {
        guard object[name] != nil else { return nil }
        return try read(name)
    }

    func invalid(_ name: String, _ why: String) -> ManifestRejection {
        ManifestRejection(.invalidValue, field: name, "field '\(name)' \(why)")
    }

    /// An app id or channel name under ``ReleaseIdentifier``'s rule.
    func identifier(_ kind: ReleaseIdentifier) throws -> String {
        let s = try string(kind.rawValue)
        if let problem = kind.problem(s) { throw invalid(kind.rawValue, "is \(Quoting.quoted(s)): \(problem)") }
        return s
    }

    func version(_ name: String) throws -> Version {
        let s = try string(name)
        guard let v = Version(s) else { throw invalid(name, "is \(Quoting.quoted(s)): not a SemVer 2.0 version (no 'v' prefix)") }
        return v
    }

    func url(_ name: String) throws -> String {
        let s = try string(name)
        guard !s.isEmpty, s.utf8.count <= 4096, s.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else {
            throw invalid(name, "is \(Quoting.quoted(s)): expected a non-empty URL of at most 4096 bytes without spaces or control characters")
        }
        return s
    }

    func sha256(_ name: String) throws -> String {
        let s = try string(name)
        guard s.utf8.count == 64, s.utf8.allSatisfy(Self.isLowerHex) else {
            throw invalid(name, "is \(Quoting.quoted(s)): expected 64 lowercase hex characters")
        }
        return s
    }

    static func isLowerHex(_ b: UInt8) -> Bool { LowerHex.isDigit(b) }

    func size(_ name: String) throws -> Int64 {
        let v = try value(name)
        guard case .integer(let n) = v else {
            throw ManifestRejection(
                .wrongType, field: name,
                "field '\(name)' must be an integer (no fraction or exponent, at most 9007199254740991), got \(v.typeName)")
        }
        guard n >= 0 else { throw invalid(name, "is \(n): must not be negative") }
        guard n <= JSONValue.maxSafeInteger else { throw invalid(name, "is \(n): larger than 9007199254740991") }
        return n
    }

    func date(_ name: String) throws -> Date {
        let s = try string(name)
        guard let d = RFC3339.parse(s) else {
            throw invalid(name, "is \(Quoting.quoted(s)): expected an RFC 3339 UTC time like 2026-05-01T12:00:00Z")
        }
        return d
    }

    func keyId(_ name: String) throws -> String {
        let s = try string(name)
        guard s.utf8.count == 16, s.utf8.allSatisfy(Self.isLowerHex) else {
            throw invalid(name, "is \(Quoting.quoted(s)): expected 16 lowercase hex characters")
        }
        return s
    }

    /// Standard base64 (RFC 4648 §4, with padding, no line breaks) of 64 bytes.
    func signature(_ name: String) throws -> [UInt8] {
        let s = try string(name)
        guard let data = Data(base64Encoded: s), data.base64EncodedString() == s else {
            throw invalid(name, "is not standard base64")
        }
        guard data.count == Ed25519.signatureLength else {
            throw invalid(name, "is \(data.count) bytes, an Ed25519 signature is \(Ed25519.signatureLength)")
        }
        return Array(data)
    }
}

extension ManifestFieldReader {
    /// A target expression (docs/targeting.md): a string in the target language.
    func target(_ name: String) throws -> TargetExpression {
        let text = try string(name)
        do {
            return try TargetExpression(parsing: text)
        } catch let error as DeviceTargetingError {
            throw invalid(name, "is not a target: \(error.message)")
        }
    }
}
