import ClientFoundation
import Foundation

/// A Roughtime server to ask: `roughtime://HOST:PORT` and its long-term Ed25519 public key.
public struct RoughtimeServer: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The host: an IPv4 or IPv6 address, or a name.
    public let host: String
    /// The UDP port.
    public let port: Int
    /// The long-term public key: 32 raw Ed25519 bytes.
    public let publicKey: [UInt8]

    /// `roughtime://HOST:PORT` (an IPv6 address in brackets).
    public var description: String { "roughtime://\(host.contains(":") ? "[\(host)]" : host):\(port)" }

    /// A server from its address and key.
    /// - Parameters:
    ///   - address: `roughtime://HOST:PORT`; an IPv6 host in brackets.
    ///   - key: the long-term public key, 32 bytes as base64 (44 characters) or hex (64).
    /// - Throws: ``AuthenticatedTimeErrorCode/invalidServer`` naming what is wrong.
    public init(address: String, key: String) throws {
        let scheme = "roughtime://"
        guard address.hasPrefix(scheme) else {
            throw AuthenticatedTimeError(.invalidServer, "time server \(address): not roughtime://HOST:PORT")
        }
        let rest = address.dropFirst(scheme.count)
        let host: Substring
        let portText: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]"), rest[rest.index(after: close)...].hasPrefix(":") else {
                throw AuthenticatedTimeError(.invalidServer, "time server \(address): an IPv6 host is [ADDRESS]:PORT")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            portText = rest[rest.index(close, offsetBy: 2)...]
        } else {
            guard let colon = rest.lastIndex(of: ":") else {
                throw AuthenticatedTimeError(.invalidServer, "time server \(address): no port (roughtime://HOST:PORT)")
            }
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isLetter || $0.isNumber || ".-:_".contains($0) }) else {
            throw AuthenticatedTimeError(.invalidServer, "time server \(address): not a host name or address")
        }
        guard let port = Int(portText), (1...65535).contains(port), portText.allSatisfy(\.isASCII) else {
            throw AuthenticatedTimeError(.invalidServer, "time server \(address): port \"\(portText)\" is not 1 to 65535")
        }
        guard let raw = Self.decodeKey(key) else {
            throw AuthenticatedTimeError(
                .invalidServer, "time server \(address): key is not a 32-byte Ed25519 public key in base64 (44 characters) or hex (64)")
        }
        try self.init(host: String(host), port: port, publicKey: raw)
    }

    /// A server from its parts.
    /// - Throws: ``AuthenticatedTimeErrorCode/invalidServer`` for a port outside 1–65535 or
    ///   a key that is not 32 bytes.
    public init(host: String, port: Int, publicKey: [UInt8]) throws {
        guard (1...65535).contains(port), publicKey.count == 32, !host.isEmpty else {
            throw AuthenticatedTimeError(.invalidServer, "time server \(host):\(port): needs a host, a port 1 to 65535 and a 32-byte key")
        }
        self.host = host
        self.port = port
        self.publicKey = publicKey
    }

    /// 32 bytes from base64 or hex text, or nil.
    static func decodeKey(_ text: String) -> [UInt8]? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        // Hex in either case (as servers print their keys), read by the one hex rule.
        if trimmed.utf8.count == 64, let bytes = LowerHex.decode(trimmed.lowercased()) { return bytes }
        guard let data = Data(base64Encoded: trimmed), data.count == 32 else { return nil }
        return Array(data)
    }
}
