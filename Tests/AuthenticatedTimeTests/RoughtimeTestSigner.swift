import Foundation
import SignedManifest

@testable import AuthenticatedTime

/// A Roughtime server of the tests' own, on bytes only: it signs answers with keys of its
/// own as RFC 10049 says, and each part can be spoiled on purpose (the hand-made vectors).
/// The answers of a real outside server are in ``RecordedVector`` and RoughtimeInteropTests.
struct RoughtimeTestSigner {
    let longTerm: Ed25519.PrivateKey
    let delegated: Ed25519.PrivateKey
    var minimumTime: UInt64 = 1_700_000_000
    var maximumTime: UInt64 = 1_900_000_000

    init() throws {
        longTerm = try Ed25519.PrivateKey.generate()
        delegated = try Ed25519.PrivateKey.generate()
    }

    /// A signer of the keys in `keys` (``pems``): a fake server on another thread makes its own.
    init(pems keys: [String]) throws {
        longTerm = try Ed25519.PrivateKey(pem: keys[0])
        delegated = try Ed25519.PrivateKey(pem: keys[1])
    }

    /// Both keys as PEM text (`Sendable`, unlike the keys).
    func pems() throws -> [String] { [try longTerm.pemRepresentation(), try delegated.pemRepresentation()] }

    var publicKey: [UInt8] { longTerm.publicKey.rawRepresentation }

    /// The fields of one answer before framing; a test changes any of them.
    struct Parts {
        var signedResponse: [RoughtimeMessage.Field]
        var delegation: [RoughtimeMessage.Field]
        var certificateSignature: [UInt8]
        var signature: [UInt8]
        var top: [RoughtimeMessage.Field]

        /// The answer packet (re-signing nothing: change a signed part and the signature breaks).
        func packet() -> [UInt8] {
            let cert = RoughtimeMessage([
                .init(tag: .dele, value: RoughtimeMessage(delegation).encoded()), .init(tag: .sig, value: certificateSignature),
            ])
            return RoughtimePacket.frame(
                RoughtimeMessage(
                    top + [
                        .init(tag: .sig, value: signature), .init(tag: .srep, value: RoughtimeMessage(signedResponse).encoded()),
                        .init(tag: .cert, value: cert.encoded()),
                    ]
                )
                .encoded())
        }
    }

    /// The parts of an answer to `requests[index]`, all answered in one Merkle tree.
    func parts(
        requests: [[UInt8]], index: Int, midpoint: UInt64 = 1_800_000_000, radius: UInt32 = 3, version: UInt32 = 1, versions: [UInt32] = [1]
    ) throws -> Parts {
        let (root, path) = Self.merkle(requests, index: index)
        let signedResponse: [RoughtimeMessage.Field] = [
            .init(tag: .radi, value: Wire.bytes(radius)), .init(tag: .midp, value: Wire.bytes(midpoint)),
            .init(tag: .ver, value: Wire.bytes(version)), .init(tag: .root, value: root),
            .init(tag: .vers, value: versions.flatMap { Wire.bytes($0) }),
        ]
        let delegation: [RoughtimeMessage.Field] = [
            .init(tag: .pubk, value: delegated.publicKey.rawRepresentation), .init(tag: .mint, value: Wire.bytes(minimumTime)),
            .init(tag: .maxt, value: Wire.bytes(maximumTime)),
        ]
        let nonce = try RoughtimeMessage.parse(RoughtimePacket.unframe(requests[index], what: "request"), what: "request").require(
            .nonc, in: "request")
        return Parts(
            signedResponse: signedResponse, delegation: delegation,
            certificateSignature: try longTerm.signature(for: Roughtime.delegationContext + RoughtimeMessage(delegation).encoded()),
            signature: try delegated.signature(for: Roughtime.responseContext + RoughtimeMessage(signedResponse).encoded()),
            top: [
                .init(tag: .nonc, value: nonce), .init(tag: .type, value: Wire.bytes(UInt32(1))),
                .init(tag: .path, value: path.flatMap { $0 }), .init(tag: .indx, value: Wire.bytes(UInt32(index))),
            ])
    }

    /// The answer packet to `requests[index]`.
    func answer(requests: [[UInt8]], index: Int = 0, midpoint: UInt64 = 1_800_000_000, radius: UInt32 = 3) throws -> [UInt8] {
        try parts(requests: requests, index: index, midpoint: midpoint, radius: radius).packet()
    }

    /// The root of the tree of `requests` (leaves padded to a power of two with the last)
    /// and the path of `index`, written independently of `Roughtime.merkleRoot`.
    static func merkle(_ requests: [[UInt8]], index: Int) -> (root: [UInt8], path: [[UInt8]]) {
        var level = requests.map { RoughtimeHash.hash([0], $0) }
        while level.count & (level.count - 1) != 0 { level.append(level[level.count - 1]) }
        var path: [[UInt8]] = []
        var i = index
        while level.count > 1 {
            path.append(level[i ^ 1])
            level = stride(from: 0, to: level.count, by: 2).map { RoughtimeHash.hash([1], level[$0], level[$0 + 1]) }
            i /= 2
        }
        return (level[0], path)
    }
}

extension Array where Element == UInt8 {
    /// Bytes from base64 text that may be spread over lines.
    init(base64Lines text: String) {
        self = Array(Data(base64Encoded: text.filter { !$0.isWhitespace }) ?? Data())
    }
}
