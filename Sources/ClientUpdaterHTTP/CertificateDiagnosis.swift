import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// Says *why* a server's certificate failed verification, for the error message.
///
/// BoringSSL reports only `CERTIFICATE_VERIFY_FAILED` through AsyncHTTPClient. After such
/// a failure on a direct connection, one more handshake is made with a verification
/// callback that records the certificates the server presents and refuses them; the
/// leaf's validity dates then tell an expired (or not yet valid) certificate apart. Any
/// problem during the diagnosis just leaves the generic message.
enum CertificateDiagnosis {
    /// The problem with the certificate `host:port` presents, when its dates explain it.
    static func validityProblem(host: String, port: Int, timeout: Duration) async -> String? {
        let seen = NIOLockedValueBox<[NIOSSLCertificate]>([])
        do {
            let context = try NIOSSLContext(configuration: TLSConfiguration.makeClientConfiguration())
            let serverName: String? = host.contains(":") || host.allSatisfy({ $0.isNumber || $0 == "." }) ? nil : host
            let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(TimeAmount(timeout))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let refuse: NIOSSLCustomVerificationCallback = { certificates, verdict in
                            seen.withLockedValue { $0 = certificates }
                            verdict.succeed(NIOSSLVerificationResult.failed)
                        }
                        let handler = try NIOSSLClientHandler(context: context, serverHostname: serverName, customVerificationCallback: refuse)
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                }
            let channel = try await bootstrap.connect(host: host, port: port).get()
            let giveUp = TimeAmount(timeout)
            channel.eventLoop.scheduleTask(in: giveUp) { channel.close(promise: nil as EventLoopPromise<Void>?) }
            try? await channel.closeFuture.get()
        } catch {
            // The diagnosis is best effort.
        }
        guard let leaf = seen.withLockedValue({ $0.first }) else { return nil }
        let now = time(nil)
        if leaf.notValidAfter < now { return "it expired on \(Self.date(leaf.notValidAfter))" }
        if leaf.notValidBefore > now { return "it is not valid before \(Self.date(leaf.notValidBefore))" }
        return nil
    }

    static func date(_ t: time_t) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(t)))
    }
}
