internal import COpenSSL
import ClientFoundation
import Foundation

/// AWS Signature Version 4 (the signing process of the AWS documentation, "Create a
/// signed AWS API request"): canonical request → string to sign → signing key derived
/// from the secret by HMAC-SHA256 over date, region, service and `aws4_request` →
/// `Authorization` header. One file, no state; HMAC and SHA-256 from libcrypto.
///
/// Public only for ``Credentials``, what an `S3Location` carries; the signing is the push's.
public struct SigV4: Sendable {
    /// An access key, its secret and (temporary credentials) the session token.
    public struct Credentials: Sendable, Equatable {
        public var accessKeyId: String
        public var secretAccessKey: String
        public var sessionToken: String?
        public init(accessKeyId: String, secretAccessKey: String, sessionToken: String? = nil) {
            self.accessKeyId = accessKeyId
            self.secretAccessKey = secretAccessKey
            self.sessionToken = sessionToken
        }
    }

    package var credentials: Credentials
    package var region: String
    package var service: String

    package init(credentials: Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The headers to add to a request so that it is signed: `x-amz-date`, the session
    /// token when there is one, and `Authorization`. Every header of `headers` (which must
    /// include `host`) is signed. `payloadHash` is the hex SHA-256 of the body (S3 also
    /// wants it sent as `x-amz-content-sha256`, which the caller puts in `headers`).
    package func authorization(
        method: String, url: URL, headers: [String: String], payloadHash: String, date: Date
    ) -> [String: String] {
        let amzDate = Self.timestamp(date)
        let day = String(amzDate.prefix(8))
        var signed = headers
        signed["x-amz-date"] = amzDate
        if let token = credentials.sessionToken { signed["x-amz-security-token"] = token }
        let request = Self.canonicalRequest(method: method, url: url, headers: signed, payloadHash: payloadHash)
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = "AWS4-HMAC-SHA256\n\(amzDate)\n\(scope)\n\(Self.hex(Self.sha256(Array(request.text.utf8))))"
        var key = Self.hmac(Array(("AWS4" + credentials.secretAccessKey).utf8), Array(day.utf8))
        for part in [region, service, "aws4_request"] { key = Self.hmac(key, Array(part.utf8)) }
        let signature = Self.hex(Self.hmac(key, Array(stringToSign.utf8)))
        var added = ["x-amz-date": amzDate]
        if let token = credentials.sessionToken { added["x-amz-security-token"] = token }
        added["authorization"] =
            "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyId)/\(scope), SignedHeaders=\(request.signedHeaders), Signature=\(signature)"
        return added
    }

    /// The canonical request and its signed-header list.
    static func canonicalRequest(method: String, url: URL, headers: [String: String], payloadHash: String) -> (text: String, signedHeaders: String) {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let path = components?.percentEncodedPath ?? "/"
        var segments: [String] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: false) {
            let raw = String(segment)
            segments.append(encode(raw.removingPercentEncoding ?? raw))
        }
        let canonicalPath = path.isEmpty ? "/" : segments.joined(separator: "/")
        var pairs: [(String, String)] = []
        for item in components?.percentEncodedQueryItems ?? [] {
            let name = item.name.removingPercentEncoding ?? item.name
            let value = item.value ?? ""
            pairs.append((encode(name), encode(value.removingPercentEncoding ?? value)))
        }
        pairs.sort { $0.0 == $1.0 ? $0.1 < $1.1 : $0.0 < $1.0 }
        let query = pairs.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        let normalized = headers.map { (name: $0.key.lowercased(), value: trimmed($0.value)) }.sorted { $0.name < $1.name }
        let canonicalHeaders = normalized.map { "\($0.name):\($0.value)\n" }.joined()
        let signedHeaders = normalized.map(\.name).joined(separator: ";")
        return ([method, canonicalPath, query, canonicalHeaders, signedHeaders, payloadHash].joined(separator: "\n"), signedHeaders)
    }

    /// RFC 3986 unreserved characters stay; everything else is `%XX` (uppercase hex).
    static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.append(Character(UnicodeScalar(byte)))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    /// Leading and trailing spaces removed, inner runs of spaces made one.
    static func trimmed(_ value: String) -> String {
        value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }

    /// `YYYYMMDD'T'HHMMSS'Z'` in UTC.
    static func timestamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(format: "%04d%02d%02dT%02d%02d%02dZ", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0, c.second ?? 0)
    }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        _ = bytes.withUnsafeBufferPointer { SHA256($0.baseAddress, $0.count, &out) }
        return out
    }

    static func hmac(_ key: [UInt8], _ data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        key.withUnsafeBufferPointer { k in
            data.withUnsafeBufferPointer { d in
                _ = HMAC(EVP_sha256(), k.baseAddress, Int32(k.count), d.baseAddress, d.count, &out, &length)
            }
        }
        return out
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}
