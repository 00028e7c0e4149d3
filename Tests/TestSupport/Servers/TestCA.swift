import Foundation
import Synchronization

/// A private certificate authority made by the test with the `openssl` command line,
/// issuing server certificates for 127.0.0.1 (and `localhost`), valid or expired.
public final class TestCA: Sendable {
    public let folder: String
    /// The CA certificate (PEM): what a device's `caFile` names.
    public let certificate: String
    /// `issue` runs openssl serially (it keeps the CA's serial and index in files).
    private let serial = Mutex(())

    /// Makes a new CA (P-256 key, `CA:TRUE`) named `name` in `folder`.
    public init(in folder: String, name: String = "clientctl test CA") throws {
        self.folder = folder
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        certificate = folder + "/ca.pem"
        try Self.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", folder + "/ca.key", "-out", certificate, "-days", "30", "-subj", "/CN=\(name)",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
        try "".write(toFile: folder + "/index.txt", atomically: true, encoding: .utf8)
        try "1000\n".write(toFile: folder + "/serial", atomically: true, encoding: .utf8)
        try """
        [ ca ]
        default_ca = test_ca
        [ test_ca ]
        database = \(folder)/index.txt
        new_certs_dir = \(folder)
        serial = \(folder)/serial
        certificate = \(certificate)
        private_key = \(folder)/ca.key
        default_md = sha256
        policy = any_name
        unique_subject = no
        [ any_name ]
        commonName = supplied

        """.write(toFile: folder + "/ca.cnf", atomically: true, encoding: .utf8)
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
            .write(toFile: folder + "/server.ext", atomically: true, encoding: .utf8)
    }

    /// A server certificate and key for 127.0.0.1; `expired` makes one valid only in
    /// January 2020 (`openssl ca -startdate/-enddate`).
    /// - Returns: the certificate and key paths.
    public func issue(_ name: String, expired: Bool = false) throws -> (certificate: String, key: String) {
        try serial.withLock { _ in
            let key = folder + "/\(name).key"
            let csr = folder + "/\(name).csr"
            let cert = folder + "/\(name).pem"
            try Self.openssl([
                "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", key, "-out", csr, "-subj", "/CN=127.0.0.1",
            ])
            if expired {
                try Self.openssl([
                    "ca", "-batch", "-config", folder + "/ca.cnf", "-in", csr, "-out", cert, "-notext",
                    "-startdate", "20200101000000Z", "-enddate", "20200201000000Z", "-extfile", folder + "/server.ext",
                ])
            } else {
                try Self.openssl([
                    "x509", "-req", "-in", csr, "-CA", certificate, "-CAkey", folder + "/ca.key",
                    "-CAcreateserial", "-out", cert, "-days", "30", "-extfile", folder + "/server.ext",
                ])
            }
            return (cert, key)
        }
    }

    static func openssl(_ arguments: [String]) throws {
        let result = try Subprocess.run("openssl", arguments)
        guard result.status == 0 else {
            throw DaemonError("openssl \(arguments.prefix(2).joined(separator: " ")) failed: \(result.errorOutput.suffix(400))")
        }
    }
}
