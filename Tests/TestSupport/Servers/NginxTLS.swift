import Foundation

/// nginx (Debian `nginx-light`) on 127.0.0.1, unprivileged-style (own config and prefix,
/// `daemon off`, no master process), serving `root` over TLS on one port per site; a
/// site may add its own directives (e.g. a redirect).
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
        (try? Poll.untilBlocking("nginx to listen", timeout: 2, every: .milliseconds(20)) { LoopbackDaemon.accepts(port) }) != nil
    }
}

private func requirePort(_ port: UInt16?) throws -> UInt16 {
    guard let port else { throw DaemonError("no site given") }
    return port
}
