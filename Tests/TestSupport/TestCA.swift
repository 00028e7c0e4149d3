import Foundation

/// A private certificate authority made by the test with the `openssl` command line,
/// issuing server certificates for 127.0.0.1 (and `localhost`), valid or expired.
public final class TestCA: @unchecked Sendable {
    // @unchecked Sendable: immutable after init; openssl runs serially in `issue`.
    public let folder: String
    /// The CA certificate (PEM): what a device's `caFile` names.
    public let certificate: String
    private let lock = NSLock()

    /// Makes a new CA (P-256 key, `CA:TRUE`) named `name` in `folder`.
    public init(in folder: String, name: String = "clientctl test CA") throws {
        self.folder = folder
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        certificate = folder + "/ca.pem"
        try Self.openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                          "-keyout", folder + "/ca.key", "-out", certificate, "-days", "30", "-subj", "/CN=\(name)",
                          "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
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
        try lock.withLock {
            let key = folder + "/\(name).key", csr = folder + "/\(name).csr", cert = folder + "/\(name).pem"
            try Self.openssl(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                              "-keyout", key, "-out", csr, "-subj", "/CN=127.0.0.1"])
            if expired {
                try Self.openssl(["ca", "-batch", "-config", folder + "/ca.cnf", "-in", csr, "-out", cert, "-notext",
                                  "-startdate", "20200101000000Z", "-enddate", "20200201000000Z", "-extfile", folder + "/server.ext"])
            } else {
                try Self.openssl(["x509", "-req", "-in", csr, "-CA", certificate, "-CAkey", folder + "/ca.key",
                                  "-CAcreateserial", "-out", cert, "-days", "30", "-extfile", folder + "/server.ext"])
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

/// nginx (Debian `nginx-light`) on 127.0.0.1, unprivileged-style (own config and prefix,
/// `daemon off`), serving `root` over TLS on one port per certificate given, plus
/// optional plain-HTTP and redirect servers.
public final class NginxTLS: @unchecked Sendable {
    // @unchecked Sendable: immutable after init.
    public struct Site: Sendable {
        public var certificate: String
        public var key: String
        /// nginx directives added to the `server` block (e.g. `return 302 http://…;`).
        public var extra: String
        public init(certificate: String, key: String, extra: String = "") {
            self.certificate = certificate
            self.key = key
            self.extra = extra
        }
    }

    public let daemon: LoopbackDaemon
    /// The port of each site, in the order given.
    public let ports: [UInt16]
    public let folder: String

    public init(root: String, sites: [Site], in folder: String) throws {
        guard let binary = LoopbackDaemon.find("nginx") else { throw DaemonError("nginx not installed") }
        self.folder = folder
        try FileManager.default.createDirectory(atPath: folder + "/tmp", withIntermediateDirectories: true)
        var ports: [UInt16] = []
        var servers = ""
        for site in sites {
            let port = try LoopbackHTTPServer.unusedPort()
            ports.append(port)
            servers += """
                  server {
                    listen 127.0.0.1:\(port) ssl;
                    ssl_certificate \(site.certificate);
                    ssl_certificate_key \(site.key);
                    root \(root);
                    \(site.extra)
                  }

                """
        }
        self.ports = ports
        let config = """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(folder)/nginx.pid;
            error_log \(folder)/error.log warn;
            events { worker_connections 128; }
            http {
              access_log \(folder)/access.log;
              client_body_temp_path \(folder)/tmp/body;
              proxy_temp_path \(folder)/tmp/proxy;
              fastcgi_temp_path \(folder)/tmp/fastcgi;
              uwsgi_temp_path \(folder)/tmp/uwsgi;
              scgi_temp_path \(folder)/tmp/scgi;
              types { application/json json; application/gzip gz; text/html html; }
              default_type application/octet-stream;
            \(servers)
            }

            """
        try config.write(toFile: folder + "/nginx.conf", atomically: true, encoding: .utf8)
        let first = try requirePort(ports.first)
        daemon = try LoopbackDaemon(binary, ["-p", folder, "-c", folder + "/nginx.conf"], port: first, log: folder + "/nginx.out")
        for port in ports.dropFirst() where !Self.waitFor(port) { throw DaemonError("nginx did not listen on \(port)") }
    }

    /// `https://127.0.0.1:<port of site i><path>`.
    public func url(_ site: Int, _ path: String) -> URL {
        URL(string: "https://127.0.0.1:\(ports[site])\(path)") ?? URL(fileURLWithPath: "/")
    }

    /// Lines of nginx's access log.
    public var accessLog: [String] {
        ((try? String(contentsOfFile: folder + "/access.log", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    public func stop() { daemon.stop() }

    private static func waitFor(_ port: UInt16) -> Bool {
        for _ in 0..<100 {
            if LoopbackDaemon.accepts(port) { return true }
            usleep(20_000)
        }
        return false
    }
}

private func requirePort(_ port: UInt16?) throws -> UInt16 {
    guard let port else { throw DaemonError("no site given") }
    return port
}
