import ClientFoundation
import ClientUpdater
import Foundation
import NIOSSL

/// A `caFile` (`init --ca-file`, `config.json`'s `caFile`): read with a cap and parsed as
/// the transport trusts it, so `init` refuses exactly what every request would.
package enum CAFile {
    /// The largest CA file read (1 MiB: thousands of certificates). A larger file is
    /// refused from its size, before any byte is read.
    package static let cap = 1 << 20

    /// The certificates of the PEM file at `path`, parsed by the TLS library the transport
    /// uses (`NIOSSLCertificate.fromPEMBytes`).
    /// - Throws: ``HTTPTransportError`` `.notFound` when the file is missing, `.io` when it cannot
    ///   be read or is not a regular file, `.tooLarge` over ``cap``, `.rejected` when it
    ///   holds no PEM certificate or a `CERTIFICATE` block that is not one. Messages start
    ///   with `caFile PATH`.
    package static func load(_ path: String) throws -> [NIOSSLCertificate] {
        var st = stat()
        if stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_size > cap {
            throw HTTPTransportError(
                .tooLarge, "caFile \(path) is \(st.st_size) bytes, over the \(cap >> 20) MiB cap for a CA file: refusing to read it")
        }
        let data: Data
        do {
            // Capped again while reading: a file that grows after the check stops at the cap.
            guard let bytes = try BoundedFile.read(path, cap: cap, code: HTTPTransportError.Code.io) else {
                throw HTTPTransportError(.notFound, "caFile \(path) cannot be read: no such file")
            }
            data = bytes
        } catch let error as HTTPTransportError where error.code == .io {
            throw HTTPTransportError(.io, "caFile \(path) cannot be read (\(error.message))")
        }
        guard String(decoding: data, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
            throw HTTPTransportError(.rejected, "caFile \(path) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        do {
            return try NIOSSLCertificate.fromPEMBytes(Array(data))
        } catch {
            throw HTTPTransportError(
                .rejected, "caFile \(path) cannot be used: a CERTIFICATE block in it is not a valid X.509 certificate in PEM (base64 DER)")
        }
    }
}
