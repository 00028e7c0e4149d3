import ClientFoundation
import Foundation
import SignedManifest

/// Roughtime version 1 as RFC 10049 states it, one pure step per function, all on bytes:
/// ``request(nonce:serverKey:)`` builds a request, ``RoughtimeResponse/parse(_:)`` reads an
/// answer strictly, and ``verify(_:request:longTermKey:)`` checks it in the order of
/// docs/authenticated-time.md: the nonce, the version, the delegation, the signature, the
/// Merkle proof, the delegation's window, the radius.
public enum Roughtime {
    /// The version spoken: 1, the RFC's (the drafts' versions were `0x8000000N`).
    public static let version: UInt32 = 1
    /// A request is padded to this many bytes, and an answer may be no larger (RFC 10049 §5.1.1:
    /// a server never answers with more bytes than it was sent).
    public static let requestSize = 1024
    /// Bytes of a nonce.
    public static let nonceSize = 32
    /// Longest Merkle path accepted (RFC 10049 §5.2.4: at most 32 nodes).
    public static let maximumPathLength = 32
    /// The last second of the year 9999: a midpoint past it is no time clientctl can use.
    static let latestMidpoint: UInt64 = 253_402_300_799
    /// Context of the delegation's signature by the long-term key (with its NUL).
    static let delegationContext: [UInt8] = Array("Roughtime v1 delegation signature".utf8) + [0]
    /// Context of the signed response's signature by the delegated key (with its NUL).
    static let responseContext: [UInt8] = Array("Roughtime v1 response signature".utf8) + [0]

    /// A fresh random nonce (32 bytes from the system's random source).
    public static func randomNonce() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<nonceSize).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// The request packet for `nonce`: `VER` (1), `NONC`, `TYPE` (0, a request), `SRV` (the
    /// server's key hash, when `serverKey` is given) and `ZZZZ` zeros up to ``requestSize``.
    public static func request(nonce: [UInt8], serverKey: [UInt8]? = nil) -> [UInt8] {
        var fields = [
            RoughtimeMessage.Field(tag: .ver, value: Wire.bytes(version)),
            RoughtimeMessage.Field(tag: .nonc, value: nonce),
            RoughtimeMessage.Field(tag: .type, value: Wire.bytes(UInt32(0))),
        ]
        if let serverKey { fields.append(.init(tag: .srv, value: RoughtimeHash.hash([0xff], serverKey))) }
        let unpadded = RoughtimeMessage(fields).encoded().count + RoughtimePacket.headerSize
        // The padding adds one offset and one tag (8 bytes) besides its value.
        let padding = max(0, requestSize - unpadded - 8)
        fields.append(.init(tag: .zzzz, value: [UInt8](repeating: 0, count: padding)))
        return RoughtimePacket.frame(RoughtimeMessage(fields).encoded())
    }

    /// Verifies `response`, an answer to the request packet `request`, for the server whose
    /// long-term Ed25519 public key is `longTermKey` (32 raw bytes), and returns the time it
    /// proves. Each failure is an ``AuthenticatedTimeErrorCode/unverified`` error naming the step.
    public static func verify(_ response: RoughtimeResponse, request: [UInt8], longTermKey: [UInt8]) throws -> RoughtimeTime {
        try checkNonce(response, request: request)
        try checkVersion(response)
        try checkDelegation(response.certificate, longTermKey: longTermKey)
        try checkSignature(response)
        try checkMerkleProof(response, request: request)
        try checkValidity(response)
        guard response.signedResponse.radius > 0 else { throw AuthenticatedTimeError(.unverified, "SREP.RADI is zero") }
        guard response.signedResponse.midpoint <= latestMidpoint else {
            throw AuthenticatedTimeError(.unverified, "SREP.MIDP \(response.signedResponse.midpoint) is past the year 9999")
        }
        return RoughtimeTime(midpoint: response.signedResponse.midpoint, radius: response.signedResponse.radius)
    }

    /// The answer echoes the request's nonce and says it is a response (`TYPE` 1).
    public static func checkNonce(_ response: RoughtimeResponse, request: [UInt8]) throws {
        let message = try RoughtimeMessage.parse(RoughtimePacket.unframe(request, what: "request"), what: "request")
        guard try message.require(.nonc, in: "request") == response.nonce else {
            throw AuthenticatedTimeError(.unverified, "the answer's NONC is not the request's nonce")
        }
        guard response.type == 1 else { throw AuthenticatedTimeError(.unverified, "the answer's TYPE is \(response.type), not 1 (a response)") }
    }

    /// The signed version is 1, and is among the signed list of versions, which is ascending.
    public static func checkVersion(_ response: RoughtimeResponse) throws {
        let signed = response.signedResponse
        guard signed.version == version else {
            throw AuthenticatedTimeError(.unverified, "SREP.VER is 0x\(String(signed.version, radix: 16)), not version 1")
        }
        guard zip(signed.versions, signed.versions.dropFirst()).allSatisfy({ $0 < $1 }) else {
            throw AuthenticatedTimeError(.unverified, "SREP.VERS is not strictly ascending")
        }
        guard signed.versions.contains(version) else { throw AuthenticatedTimeError(.unverified, "SREP.VERS does not list version 1") }
    }

    /// The long-term key signed the delegation (`CERT.SIG` over the context and `CERT.DELE`).
    public static func checkDelegation(_ certificate: RoughtimeCertificate, longTermKey: [UInt8]) throws {
        guard Ed25519.isValidSignature(certificate.signature, for: delegationContext + certificate.delegationBytes, rawPublicKey: longTermKey) else {
            throw AuthenticatedTimeError(.unverified, "CERT.SIG: the delegation is not signed by the server's long-term key")
        }
    }

    /// The delegated key signed the signed response (`SIG` over the context and `SREP`).
    public static func checkSignature(_ response: RoughtimeResponse) throws {
        let key = response.certificate.delegatedKey
        guard Ed25519.isValidSignature(response.signature, for: responseContext + response.signedResponseBytes, rawPublicKey: key) else {
            throw AuthenticatedTimeError(.unverified, "SIG: the signed response is not signed by the delegated key")
        }
    }

    /// `INDX` and `PATH` lead from the hash of the request packet to `SREP.ROOT`.
    public static func checkMerkleProof(_ response: RoughtimeResponse, request: [UInt8]) throws {
        guard merkleRoot(request: request, index: response.index, path: response.path) == response.signedResponse.root else {
            throw AuthenticatedTimeError(.unverified, "PATH and INDX do not prove the request is in SREP.ROOT")
        }
    }

    /// The root that `path` and `index` lead to from the leaf of `request` (RFC 10049 §5.3):
    /// the leaf is H(0x00 ‖ request), each node H(0x01 ‖ left ‖ right); bit i of `index`
    /// (from the lowest) set means the node at depth i is a right child. Index bits beyond
    /// the path lead nowhere: such an index is no proof (nil).
    public static func merkleRoot(request: [UInt8], index: UInt32, path: [[UInt8]]) -> [UInt8]? {
        guard path.count <= maximumPathLength, path.count >= 32 || index >> UInt32(path.count) == 0 else { return nil }
        var node = RoughtimeHash.hash([0x00], request)
        for (depth, sibling) in path.enumerated() {
            node = (index >> UInt32(depth)) & 1 == 0 ? RoughtimeHash.hash([0x01], node, sibling) : RoughtimeHash.hash([0x01], sibling, node)
        }
        return node
    }

    /// The midpoint is inside the delegation's window `[MINT, MAXT]`.
    public static func checkValidity(_ response: RoughtimeResponse) throws {
        let delegation = response.certificate
        let midpoint = response.signedResponse.midpoint
        guard delegation.minimumTime <= midpoint, midpoint <= delegation.maximumTime else {
            throw AuthenticatedTimeError(
                .unverified,
                "SREP.MIDP \(midpoint) is outside the delegation's window [\(delegation.minimumTime), \(delegation.maximumTime)]")
        }
    }
}

/// The time an answer proves: the server's clock was within `radius` seconds of `midpoint`
/// (seconds since 1970, UTC, leap seconds smeared) at some moment of the round trip.
public struct RoughtimeTime: Sendable, Hashable, Codable {
    /// Seconds since 1970-01-01 UTC.
    public var midpoint: UInt64
    /// Seconds either side.
    public var radius: UInt32

    /// A time and its radius.
    public init(midpoint: UInt64, radius: UInt32) {
        self.midpoint = midpoint
        self.radius = radius
    }
}

/// The signed part of an answer (`SREP`).
public struct RoughtimeSignedResponse: Sendable, Hashable {
    /// `VER`: the version of the answer.
    public var version: UInt32
    /// `VERS`: the versions the server speaks.
    public var versions: [UInt32]
    /// `RADI`: seconds.
    public var radius: UInt32
    /// `MIDP`: seconds since 1970.
    public var midpoint: UInt64
    /// `ROOT`: the Merkle root of the requests answered together.
    public var root: [UInt8]
}

/// The delegation certificate (`CERT`): the long-term key's signature over `DELE`, which
/// holds the delegated key and its window.
public struct RoughtimeCertificate: Sendable, Hashable {
    /// `DELE` as received (what `SIG` signs).
    public var delegationBytes: [UInt8]
    /// `CERT.SIG`.
    public var signature: [UInt8]
    /// `DELE.PUBK`: the delegated Ed25519 key.
    public var delegatedKey: [UInt8]
    /// `DELE.MINT`: seconds since 1970.
    public var minimumTime: UInt64
    /// `DELE.MAXT`: seconds since 1970.
    public var maximumTime: UInt64
}

/// An answer, parsed but not yet verified.
public struct RoughtimeResponse: Sendable, Hashable {
    /// `SIG`: the delegated key's signature over ``signedResponseBytes``.
    public var signature: [UInt8]
    /// `NONC`: the nonce echoed.
    public var nonce: [UInt8]
    /// `TYPE`: 1 for a response.
    public var type: UInt32
    /// `PATH`: the Merkle path, 32-byte nodes from the leaf up.
    public var path: [[UInt8]]
    /// `INDX`: the leaf's index.
    public var index: UInt32
    /// `SREP` as received (what `SIG` signs).
    public var signedResponseBytes: [UInt8]
    /// `SREP`, parsed.
    public var signedResponse: RoughtimeSignedResponse
    /// `CERT`, parsed.
    public var certificate: RoughtimeCertificate

    /// Parses an answer packet strictly: the framing, the message and the nested `SREP`,
    /// `CERT` and `DELE`, each field present with its size. Anything else is a
    /// ``AuthenticatedTimeErrorCode/malformed`` error naming the field; unknown tags are
    /// ignored, as the RFC asks.
    public static func parse(_ packet: [UInt8]) throws -> RoughtimeResponse {
        guard packet.count <= Roughtime.requestSize else {
            throw AuthenticatedTimeError(.malformed, "answer: \(packet.count) bytes, more than the \(Roughtime.requestSize) a request may get")
        }
        let message = try RoughtimeMessage.parse(RoughtimePacket.unframe(packet, what: "answer"), what: "answer")
        let signature = try message.require(.sig, in: "answer")
        guard signature.count == Ed25519.signatureLength else {
            throw AuthenticatedTimeError(.malformed, "answer.SIG: \(signature.count) bytes, expected \(Ed25519.signatureLength)")
        }
        let nonce = try message.require(.nonc, in: "answer")
        guard nonce.count == Roughtime.nonceSize else {
            throw AuthenticatedTimeError(.malformed, "answer.NONC: \(nonce.count) bytes, expected \(Roughtime.nonceSize)")
        }
        let pathBytes = try message.require(.path, in: "answer")
        guard pathBytes.count % RoughtimeHash.length == 0, pathBytes.count / RoughtimeHash.length <= Roughtime.maximumPathLength else {
            throw AuthenticatedTimeError(
                .malformed, "answer.PATH: \(pathBytes.count) bytes, not at most \(Roughtime.maximumPathLength) nodes of \(RoughtimeHash.length)")
        }
        let path = stride(from: 0, to: pathBytes.count, by: RoughtimeHash.length).map { Array(pathBytes[$0..<($0 + RoughtimeHash.length)]) }
        let signedBytes = try message.require(.srep, in: "answer")
        return RoughtimeResponse(
            signature: signature, nonce: nonce, type: try message.uint32(.type, in: "answer"), path: path,
            index: try message.uint32(.indx, in: "answer"), signedResponseBytes: signedBytes,
            signedResponse: try parseSignedResponse(signedBytes), certificate: try parseCertificate(message.require(.cert, in: "answer")))
    }

    static func parseSignedResponse(_ bytes: [UInt8]) throws -> RoughtimeSignedResponse {
        let message = try RoughtimeMessage.parse(bytes, what: "SREP")
        let root = try message.require(.root, in: "SREP")
        guard root.count == RoughtimeHash.length else {
            throw AuthenticatedTimeError(.malformed, "SREP.ROOT: \(root.count) bytes, expected \(RoughtimeHash.length)")
        }
        let versions = try message.require(.vers, in: "SREP")
        guard !versions.isEmpty, versions.count % 4 == 0, versions.count / 4 <= 32 else {
            throw AuthenticatedTimeError(.malformed, "SREP.VERS: \(versions.count) bytes, not 1 to 32 versions of 4")
        }
        return RoughtimeSignedResponse(
            version: try message.uint32(.ver, in: "SREP"), versions: stride(from: 0, to: versions.count, by: 4).map { Wire.uint32(versions, at: $0) },
            radius: try message.uint32(.radi, in: "SREP"), midpoint: try message.uint64(.midp, in: "SREP"), root: root)
    }

    static func parseCertificate(_ bytes: [UInt8]) throws -> RoughtimeCertificate {
        let message = try RoughtimeMessage.parse(bytes, what: "CERT")
        let signature = try message.require(.sig, in: "CERT")
        guard signature.count == Ed25519.signatureLength else {
            throw AuthenticatedTimeError(.malformed, "CERT.SIG: \(signature.count) bytes, expected \(Ed25519.signatureLength)")
        }
        let deleBytes = try message.require(.dele, in: "CERT")
        let dele = try RoughtimeMessage.parse(deleBytes, what: "CERT.DELE")
        let key = try dele.require(.pubk, in: "CERT.DELE")
        guard key.count == Ed25519.publicKeyLength else {
            throw AuthenticatedTimeError(.malformed, "CERT.DELE.PUBK: \(key.count) bytes, expected \(Ed25519.publicKeyLength)")
        }
        return RoughtimeCertificate(
            delegationBytes: deleBytes, signature: signature, delegatedKey: key,
            minimumTime: try dele.uint64(.mint, in: "CERT.DELE"), maximumTime: try dele.uint64(.maxt, in: "CERT.DELE"))
    }
}
