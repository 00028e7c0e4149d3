internal import COpenSSL
import ClientFoundation
import Foundation

/// Ed25519 (pure) keys and signatures through OpenSSL's EVP API.
///
/// Keys are PEM files the `openssl` command line reads and writes: PKCS#8 private keys
/// (`BEGIN PRIVATE KEY`, as `openssl genpkey -algorithm ed25519` makes) and
/// SubjectPublicKeyInfo public keys (`BEGIN PUBLIC KEY`).
public enum Ed25519 {
    /// Length of a signature in bytes.
    public static let signatureLength = 64
    /// Length of a raw public key in bytes.
    public static let publicKeyLength = 32

    /// The key id (docs/formats.md#keys-and-key-id): the first 16 hex characters of SHA-256 over the DER
    /// SubjectPublicKeyInfo of a public key.
    public static func keyId(subjectPublicKeyInfo der: [UInt8]) -> String {
        String(Digest.hex(.sha256, of: der).prefix(16))
    }

    /// Public keys parsed from PEM text, by the exact UTF-8 bytes of that text: a device
    /// reads the same `--trust` keys and trust-root keys at every status read, and parsing
    /// PEM is OpenSSL's decoder machinery (its provider locks) each time. At most 64 keys,
    /// the least recently used dropped first: a key's text is about 110 bytes, and at most
    /// what one file a device reads whole holds (64 KiB for a trust root). Only keys that
    /// parsed are kept, so bad text is refused again at every read.
    package static let parsedPEMs = BoundedCache<[UInt8], PublicKey>(capacity: 64)

    /// A public key. A value type holding the 32 raw key bytes and an immutable OpenSSL key
    /// made once from them, so it is `Sendable` and can live in a verifier shared between
    /// tasks. Two keys are equal when their raw bytes are.
    public struct PublicKey: Sendable, Hashable, CustomStringConvertible {
        /// The 32 raw key bytes (RFC 8032 encoding).
        public let rawRepresentation: [UInt8]
        /// The DER SubjectPublicKeyInfo encoding.
        public let derRepresentation: [UInt8]
        /// First 16 hex characters of SHA-256 over ``derRepresentation``.
        public let keyId: String
        /// The OpenSSL key signatures are verified with.
        private let verifying: VerifyingKey

        /// A key from its 32 raw bytes.
        public init(rawRepresentation raw: [UInt8]) throws {
            guard raw.count == Ed25519.publicKeyLength else {
                throw SignedManifestError(.invalidKey, "an Ed25519 public key is \(Ed25519.publicKeyLength) bytes, got \(raw.count)")
            }
            OpenSSLErrorQueue.clear()
            guard let p = raw.withUnsafeBufferPointer({ EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, $0.baseAddress, $0.count) }) else {
                throw OpenSSLErrorQueue.error(.invalidKey, "not a valid Ed25519 public key")
            }
            let handle = PKeyHandle(p)
            try self.init(handle: handle, publicOnly: true)
        }

        /// A key from PEM text (`-----BEGIN PUBLIC KEY-----`, SubjectPublicKeyInfo). The same
        /// PEM bytes give the key parsed from them before (`Ed25519.parsedPEMs`).
        /// - Parameters:
        ///   - pem: the PEM text.
        ///   - source: names the key in error messages (a path).
        public init(pem: String, source: String = "public key") throws {
            let bytes = Array(pem.utf8)
            if let parsed = Ed25519.parsedPEMs.value(for: bytes) {
                self = parsed
                return
            }
            try self.init(parsing: bytes, pem: pem, source: source)
            Ed25519.parsedPEMs.insert(self, for: bytes)
        }

        private init(parsing bytes: [UInt8], pem: String, source: String) throws {
            OpenSSLErrorQueue.clear()
            let bio = try MemoryBIO()
            try bio.write(bytes)
            guard let p = PEM_read_bio_PUBKEY(bio.pointer, nil, nil, nil) else {
                let hint = pem.contains("PRIVATE KEY") ? ": it is a private key; pass the .pub.pem file" : ""
                throw OpenSSLErrorQueue.error(.invalidKey, "\(source) is not a PEM public key (BEGIN PUBLIC KEY)\(hint)")
            }
            let handle = PKeyHandle(p)
            guard EVP_PKEY_get_id(handle.pointer) == EVP_PKEY_ED25519 else {
                throw SignedManifestError(.invalidKey, "\(source) is not an Ed25519 key")
            }
            try self.init(handle: handle, publicOnly: true)
        }

        /// Reads a PEM public key file.
        public init(pemFile path: String) throws {
            try self.init(pem: try Ed25519.readKeyFile(path), source: path)
        }

        /// The key of `handle`. When `publicOnly`, the handle holds nothing else and the
        /// key keeps a reference to it for verification; otherwise (a private key's handle)
        /// a public-only OpenSSL key is made from the raw bytes, so no private material is
        /// kept alive by a public key.
        init(handle: borrowing PKeyHandle, publicOnly: Bool) throws {
            var raw = [UInt8](repeating: 0, count: Ed25519.publicKeyLength)
            var length = raw.count
            guard EVP_PKEY_get_raw_public_key(handle.pointer, &raw, &length) == 1, length == Ed25519.publicKeyLength else {
                throw OpenSSLErrorQueue.error(.invalidKey, "cannot read the raw Ed25519 public key")
            }
            var derPointer: UnsafeMutablePointer<UInt8>? = nil
            let derLength = i2d_PUBKEY(handle.pointer, &derPointer)
            guard derLength > 0, let derPointer else {
                throw OpenSSLErrorQueue.error(.crypto, "cannot encode the public key as SubjectPublicKeyInfo")
            }
            let der = Array(UnsafeBufferPointer(start: derPointer, count: Int(derLength)))
            CRYPTO_free(derPointer, #fileID, #line)
            let verifying = publicOnly ? VerifyingKey(sharing: handle.pointer) : VerifyingKey(raw: raw)
            guard let verifying else { throw OpenSSLErrorQueue.error(.invalidKey, "not a valid Ed25519 public key") }
            rawRepresentation = raw
            derRepresentation = der
            keyId = Ed25519.keyId(subjectPublicKeyInfo: der)
            self.verifying = verifying
        }

        /// Equal when the raw key bytes are (the DER encoding and the key id follow from them).
        public static func == (a: PublicKey, b: PublicKey) -> Bool { a.rawRepresentation == b.rawRepresentation }

        /// Hashes the raw key bytes, as ``==(_:_:)`` compares them.
        public func hash(into hasher: inout Hasher) { hasher.combine(rawRepresentation) }

        /// PEM text (`-----BEGIN PUBLIC KEY-----`), as `openssl pkey -pubout` writes it.
        public var pemRepresentation: String {
            let body = Data(derRepresentation).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            return "-----BEGIN PUBLIC KEY-----\n\(body)\n-----END PUBLIC KEY-----\n"
        }

        /// True when `signature` is a valid Ed25519 signature of `message` by this key.
        /// Any failure (wrong length, OpenSSL error) is `false`: verification fails closed.
        public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
            verifying.isValidSignature(signature, for: message)
        }

        public var description: String { "Ed25519 public key \(keyId)" }
    }

    /// True when `signature` is a valid Ed25519 signature of `message` by the 32-byte raw
    /// public key `raw`: one OpenSSL key, nothing else derived (no SubjectPublicKeyInfo, no
    /// key id), for a verifier of many signers such as the report collector. Any failure (a
    /// key that is not a point, a wrong length) is `false`: verification fails closed.
    public static func isValidSignature(_ signature: [UInt8], for message: [UInt8], rawPublicKey raw: [UInt8]) -> Bool {
        guard signature.count == signatureLength, raw.count == publicKeyLength else { return false }
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        guard let p = raw.withUnsafeBufferPointer({ EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, $0.baseAddress, $0.count) }) else {
            return false
        }
        let key = PKeyHandle(p)
        guard let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, nil, nil, key.pointer) == 1 else { return false }
        let result = signature.withUnsafeBufferPointer { sig in
            message.withUnsafeBufferPointer { msg in
                EVP_DigestVerify(ctx, sig.baseAddress, sig.count, msg.baseAddress, msg.count)
            }
        }
        return result == 1
    }

    /// A private key. Owns an OpenSSL `EVP_PKEY`, freed when the last reference goes away;
    /// not `Sendable` (confine a signing key to one task).
    public final class PrivateKey {
        private let pointer: OpaquePointer
        /// The matching public key.
        public let publicKey: PublicKey

        private init(owning pointer: OpaquePointer) throws {
            self.pointer = pointer
            do {
                // The handle holds its own reference, released when it goes out of scope.
                EVP_PKEY_up_ref(pointer)
                let extra = PKeyHandle(pointer)
                publicKey = try PublicKey(handle: extra, publicOnly: false)
            } catch {
                EVP_PKEY_free(pointer)
                throw error
            }
        }

        deinit { EVP_PKEY_free(pointer) }

        /// Generates a new random key pair.
        public static func generate() throws -> PrivateKey {
            OpenSSLErrorQueue.clear()
            guard let ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nil) else {
                throw OpenSSLErrorQueue.error(.crypto, "cannot create an Ed25519 key generator")
            }
            defer { EVP_PKEY_CTX_free(ctx) }
            var key: OpaquePointer? = nil
            guard EVP_PKEY_keygen_init(ctx) == 1, EVP_PKEY_keygen(ctx, &key) == 1, let key else {
                throw OpenSSLErrorQueue.error(.crypto, "Ed25519 key generation failed")
            }
            return try PrivateKey(owning: key)
        }

        /// A key from PEM text (`-----BEGIN PRIVATE KEY-----`, unencrypted PKCS#8).
        public convenience init(pem: String, source: String = "private key") throws {
            OpenSSLErrorQueue.clear()
            let bio = try MemoryBIO()
            try bio.write(Array(pem.utf8))
            // A callback that supplies no passphrase: encrypted keys fail instead of prompting.
            guard let p = PEM_read_bio_PrivateKey(bio.pointer, nil, { _, _, _, _ in 0 }, nil) else {
                let hint = pem.contains("ENCRYPTED") ? " (encrypted keys are not supported)" : ""
                throw OpenSSLErrorQueue.error(.invalidKey, "\(source) is not an unencrypted PEM private key\(hint)")
            }
            guard EVP_PKEY_get_id(p) == EVP_PKEY_ED25519 else {
                EVP_PKEY_free(p)
                throw SignedManifestError(.invalidKey, "\(source) is not an Ed25519 key")
            }
            try self.init(owning: p)
        }

        /// Reads a PEM private key file.
        public convenience init(pemFile path: String) throws {
            try self.init(pem: try Ed25519.readKeyFile(path), source: path)
        }

        /// PKCS#8 PEM text (`-----BEGIN PRIVATE KEY-----`), unencrypted.
        public func pemRepresentation() throws -> String {
            OpenSSLErrorQueue.clear()
            let bio = try MemoryBIO()
            guard PEM_write_bio_PrivateKey(bio.pointer, pointer, nil, nil, 0, nil, nil) == 1 else {
                throw OpenSSLErrorQueue.error(.crypto, "cannot encode the private key as PEM")
            }
            return String(decoding: bio.contents(), as: UTF8.self)
        }

        /// The Ed25519 signature (64 bytes) of `message`.
        public func signature(for message: [UInt8]) throws -> [UInt8] {
            OpenSSLErrorQueue.clear()
            guard let ctx = EVP_MD_CTX_new() else { throw OpenSSLErrorQueue.error(.crypto, "cannot allocate a signing context") }
            defer { EVP_MD_CTX_free(ctx) }
            guard EVP_DigestSignInit(ctx, nil, nil, nil, pointer) == 1 else {
                throw OpenSSLErrorQueue.error(.crypto, "cannot start an Ed25519 signature")
            }
            var signature = [UInt8](repeating: 0, count: Ed25519.signatureLength)
            var length = signature.count
            let ok = message.withUnsafeBufferPointer { msg in
                EVP_DigestSign(ctx, &signature, &length, msg.baseAddress, msg.count)
            }
            guard ok == 1, length == Ed25519.signatureLength else {
                throw OpenSSLErrorQueue.error(.crypto, "Ed25519 signing failed")
            }
            return signature
        }
    }

    /// Reads a key file (at most 64 KiB), naming it in errors.
    static func readKeyFile(_ path: String) throws -> String {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir), !isDir.boolValue else {
            throw SignedManifestError(.notFound, "key file \(path) does not exist")
        }
        guard let data = try BoundedFile.read(path, cap: 64 * 1024, code: SignedManifestError.Code.notFound, tooLarge: .invalidKey) else {
            throw SignedManifestError(.notFound, "cannot read key file \(path)")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
