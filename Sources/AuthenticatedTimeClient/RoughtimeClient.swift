import AuthenticatedTime
import ClientFoundation
import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// Asks one Roughtime server over UDP: the device's client of the pure steps of
/// AuthenticatedTime (`Roughtime.request(nonce:serverKey:)`, `RoughtimeResponse.parse(_:)`,
/// `Roughtime.verify(_:request:longTermKey:)`) on a socket of NIO's.
public enum RoughtimeClient {
    /// Sends one request with a fresh nonce to `server` and waits at most `timeout` for an
    /// answer that verifies.
    ///
    /// Datagrams from another address or port are ignored, as are answers that do not parse
    /// or verify (another nonce, a bad signature: anyone can send a datagram); the wait goes
    /// on until a valid one or the timeout. Nothing blocks a thread: the socket is NIO's, on
    /// its event loop (a host name is resolved on the blocking executor first). Cancelling
    /// the task ends the wait.
    /// - Throws: ``AuthenticatedTimeClientErrorCode/timedOut`` (naming the last answer ignored
    ///   and why), ``AuthenticatedTimeClientErrorCode/network``,
    ///   ``AuthenticatedTimeClientErrorCode/unresolved`` for a host that does not resolve.
    public static func query(_ server: RoughtimeServer, timeout: Duration) async throws -> RoughtimeAnswer {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        let address = try await resolve(server)
        let nonce = Roughtime.randomNonce()
        let request = Roughtime.request(nonce: nonce, serverKey: server.publicKey)
        let group = MultiThreadedEventLoopGroup.singleton
        let loop = group.next()
        let promise = loop.makePromise(of: RoughtimeAnswer.self)
        let handler = AnswerHandler(server: server, address: address, request: request, promise: promise)
        let channel: any Channel
        do {
            channel = try await DatagramBootstrap(group: loop)
                .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: Roughtime.requestSize + 256))
                .channelInitializer { channel in channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(handler) } }
                .bind(host: address.protocol == .inet6 ? "::" : "0.0.0.0", port: 0)
                .get()
        } catch {
            promise.fail(error)
            throw AuthenticatedTimeClientError(.network, "\(server): cannot open a UDP socket: \(error)", underlying: error)
        }
        defer { channel.close(promise: nil) }
        let remaining = deadline - clock.now
        let timer = loop.scheduleTask(in: .nanoseconds(max(0, remaining.nanoseconds))) {
            promise.fail(AuthenticatedTimeClientError(.timedOut, "\(server): no valid answer within \(timeout)\(handler.ignoredNote)"))
        }
        defer { timer.cancel() }
        handler.sentAt.withLock { $0 = clock.now }
        var buffer = channel.allocator.buffer(capacity: request.count)
        buffer.writeBytes(request)
        channel.writeAndFlush(AddressedEnvelope(remoteAddress: address, data: buffer)).whenFailure { error in
            promise.fail(AuthenticatedTimeClientError(.network, "\(server): cannot send the request: \(error)", underlying: error))
        }
        return try await withTaskCancellationHandler {
            try await promise.futureResult.get()
        } onCancel: {
            promise.fail(CancellationError())
        }
    }

    /// The server's socket address: an IP literal as is, a name through getaddrinfo on the
    /// blocking executor (it may block).
    static func resolve(_ server: RoughtimeServer) async throws -> SocketAddress {
        if let address = try? SocketAddress(ipAddress: server.host, port: server.port) { return address }
        do {
            return try await BlockingExecutor.run { try SocketAddress.makeAddressResolvingHost(server.host, port: server.port) }
        } catch {
            throw AuthenticatedTimeClientError(.unresolved, "\(server): cannot resolve \(server.host): \(error)", underlying: error)
        }
    }
}

extension Duration {
    /// Whole nanoseconds (saturating).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? (seconds < 0 ? .min : .max) : product + attoseconds / 1_000_000_000
    }
}

/// Reads datagrams until one from the server's address verifies, then fulfils the promise.
/// Runs on its channel's event loop only.
private final class AnswerHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    let server: RoughtimeServer
    let address: SocketAddress
    let request: [UInt8]
    let promise: EventLoopPromise<RoughtimeAnswer>
    /// When the request left, set before it is sent.
    let sentAt = Mutex<ContinuousClock.Instant?>(nil)
    /// Why the last datagram was ignored (for the timeout's message).
    private let ignored = Mutex<String?>(nil)

    init(server: RoughtimeServer, address: SocketAddress, request: [UInt8], promise: EventLoopPromise<RoughtimeAnswer>) {
        self.server = server
        self.address = address
        self.request = request
        self.promise = promise
    }

    var ignoredNote: String { ignored.withLock { $0.map { "; ignored an answer: \($0)" } ?? "" } }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        let receivedAt = ContinuousClock.now
        guard envelope.remoteAddress == address else {
            ignored.withLock { $0 = "a datagram from \(envelope.remoteAddress), not the server" }
            return
        }
        let bytes = Array(envelope.data.readableBytesView)
        do {
            let response = try RoughtimeResponse.parse(bytes)
            let time = try Roughtime.verify(response, request: request, longTermKey: server.publicKey)
            let sent = sentAt.withLock { $0 } ?? receivedAt
            promise.succeed(
                RoughtimeAnswer(
                    server: server, time: time, roundTrip: receivedAt - sent, receivedAt: receivedAt, bytesSent: request.count,
                    bytesReceived: bytes.count))
        } catch let error as AuthenticatedTimeError {
            ignored.withLock { $0 = error.message }
        } catch {
            ignored.withLock { $0 = "\(error)" }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // An ICMP port unreachable surfaces here on Linux; the server may still answer a
        // retry of someone else's, so it only becomes the timeout's note.
        ignored.withLock { $0 = "socket error: \(error)" }
    }
}
