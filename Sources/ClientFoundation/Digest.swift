internal import COpenSSL
import Foundation

/// A streaming message digest computed by OpenSSL's EVP API (SHA-256, SHA-1 or MD5).
///
/// Not `Sendable`: one digest belongs to one task. The OpenSSL context is freed in
/// `deinit`, so no handle outlives its owner.
public final class Digest {
    /// The digest algorithms clientctl uses.
    public enum Algorithm: Sendable {
        /// SHA-256, for signed archives.
        case sha256
        /// SHA-1, for Meteor asset hashes.
        case sha1
        /// MD5, for a Debian package's `DEBIAN/md5sums` (an integrity list dpkg reads, not security).
        case md5
    }

    private let context: OpaquePointer
    private var finished = false

    /// Starts a new digest.
    public init(_ algorithm: Algorithm) {
        // EVP_MD_CTX_new only fails when memory is exhausted; trap then, as Swift does.
        guard let ctx = EVP_MD_CTX_new() else { preconditionFailure("EVP_MD_CTX_new failed: out of memory") }
        context = ctx
        let md: OpaquePointer?
        switch algorithm {
        case .sha256: md = EVP_sha256()
        case .sha1: md = EVP_sha1()
        case .md5: md = EVP_md5()
        }
        let ok = EVP_DigestInit_ex(ctx, md, nil)
        precondition(ok == 1, "EVP_DigestInit_ex failed")
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Feeds bytes into the digest.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        precondition(!finished, "Digest.update after finalize")
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    /// Feeds bytes into the digest.
    public func update<D: DataProtocol>(_ data: D) {
        for region in data.regions {
            region.withUnsafeBytes { update($0) }
        }
    }

    /// Finishes the digest and returns it as lowercase hex.
    public func finalizeHex() -> String {
        precondition(!finished, "Digest finalized twice")
        finished = true
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &out, &length)
        return Self.hex(out.prefix(Int(length)))
    }

    /// The hex digest of a whole buffer.
    public static func hex<D: DataProtocol>(_ algorithm: Algorithm, of data: D) -> String {
        let d = Digest(algorithm)
        d.update(data)
        return d.finalizeHex()
    }

    /// The hex digest of a file's contents, read in chunks (never whole into memory).
    public static func hex(_ algorithm: Algorithm, ofFileAt path: String) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileSystemError.io("cannot open", path: path, errno: errno) }
        defer { close(fd) }
        return try hex(algorithm, ofDescriptor: fd, path: path)
    }

    /// The hex digest of what remains readable from a file descriptor.
    public static func hex(_ algorithm: Algorithm, ofDescriptor fd: Int32, path: String) throws -> String {
        let d = Digest(algorithm)
        let size = 1 << 16
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer.baseAddress, size)
            if n < 0 {
                if errno == EINTR { continue }
                throw FileSystemError.io("cannot read", path: path, errno: errno)
            }
            if n == 0 { break }
            d.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
        return d.finalizeHex()
    }

    /// `bytes` as lowercase hex, two digits a byte (the hex of every digest and key).
    public static func hex<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
        var chars: [UInt8] = []
        for b in bytes {
            chars.append(digits[Int(b >> 4)])
            chars.append(digits[Int(b & 0x0f)])
        }
        return String(decoding: chars, as: UTF8.self)
    }
}
