import Foundation
import HTTPTypes

/// The secret that reads (the JSON API, `/metrics`, the page): read from a file that only
/// its owner may read, as ssh treats a private key. Writes need no token.
public struct ReadToken: Sendable {
    let bytes: [UInt8]

    /// A token (at least 16 bytes, printable ASCII, no spaces).
    /// - Throws: ``FleetCollectorError`` `.tokenUnreadable`.
    public init(_ text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.utf8.count >= 16, trimmed.utf8.count <= 1024, trimmed.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            throw FleetCollectorError(.tokenUnreadable, "the token must be 16 to 1024 printable ASCII characters without spaces")
        }
        bytes = Array(trimmed.utf8)
    }

    /// Reads `path`: refused when group or others may read or write it (chmod 600), or when it
    /// is missing, unreadable or not a token.
    /// - Throws: ``FleetCollectorError`` `.tokenUnreadable` or `.tokenTooOpen`.
    public static func load(path: String, flag: String = "--read-token-file") throws -> ReadToken {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw FleetCollectorError(.tokenUnreadable, "\(flag) \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw FleetCollectorError(.tokenUnreadable, "\(flag) \(path): not a regular file")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw FleetCollectorError(
                .tokenTooOpen,
                "\(flag) \(path): mode \(String(info.st_mode & 0o777, radix: 8)) lets others read it; chmod 600 \(path)")
        }
        guard let data = FileManager.default.contents(atPath: path), data.count <= 4096 else {
            throw FleetCollectorError(.tokenUnreadable, "\(flag) \(path): cannot be read (or is over 4096 bytes)")
        }
        do {
            return try ReadToken(String(decoding: data, as: UTF8.self))
        } catch let error as FleetCollectorError {
            throw FleetCollectorError(.tokenUnreadable, "\(flag) \(path): " + error.message)
        }
    }

    /// Whether `candidate` is the token, compared in constant time.
    func matches(_ candidate: Substring) -> Bool {
        let given = Array(candidate.utf8)
        guard given.count == bytes.count else { return false }
        var diff: UInt8 = 0
        for (a, b) in zip(given, bytes) { diff |= a ^ b }
        return diff == 0
    }

    /// Why a request's `Authorization` does not carry the token (`nil`: it does): a bearer
    /// token, or HTTP basic auth with the token as the password (any user name).
    func refusal(_ headers: HTTPFields, allowBasic: Bool) -> String? {
        guard let value = headers[.authorization] else { return "no Authorization header: the read token is needed" }
        if value.hasPrefix("Bearer ") {
            return matches(value.dropFirst("Bearer ".count)) ? nil : "wrong read token"
        }
        if allowBasic, value.hasPrefix("Basic "), let decoded = Data(base64Encoded: String(value.dropFirst("Basic ".count))) {
            let pair = String(decoding: decoded, as: UTF8.self)
            guard let colon = pair.firstIndex(of: ":") else { return "basic auth without a password" }
            return matches(pair[pair.index(after: colon)...]) ? nil : "wrong read token"
        }
        return allowBasic ? "Authorization is neither Bearer nor Basic" : "Authorization is not Bearer"
    }
}
