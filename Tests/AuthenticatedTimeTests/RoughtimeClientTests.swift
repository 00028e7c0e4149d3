import AuthenticatedTimeClient
import NIOCore
import NIOPosix
import Synchronization
import TestSupport
import Testing

@testable import AuthenticatedTime

/// The UDP query against a fake server of the tests' own on loopback, which can answer
/// from another port, with another nonce, too large, or not at all.
@Suite struct RoughtimeClientTests {
    @Test func answersFromAnotherPortOrForAnotherNonceAreIgnored() async throws {
        let signer = try RoughtimeTestSigner()
        let keys = try signer.pems()
        let fake = try await FakeRoughtimeServer { request, send in
            let signer = try RoughtimeTestSigner(pems: keys)
            // First a valid answer from another port, then one to another nonce, then garbage,
            // each saying another time; the server's own answer last.
            try send(signer.answer(requests: [request], midpoint: 1_900_000_000), true)
            try send(signer.answer(requests: [Roughtime.request(nonce: Roughtime.randomNonce())], midpoint: 1_900_000_001), false)
            try send([UInt8](repeating: 0x41, count: 64), false)
            try send(signer.answer(requests: [request], midpoint: 1_800_000_000), false)
        }
        defer { fake.close() }
        let server = try RoughtimeServer(host: "127.0.0.1", port: fake.port, publicKey: signer.publicKey)
        let answer = try await RoughtimeClient.query(server, timeout: .seconds(30))
        #expect(answer.time == RoughtimeTime(midpoint: 1_800_000_000, radius: 3))
        #expect(answer.bytesSent == 1024 && answer.bytesReceived < 1024 && answer.server == server)
        #expect(answer.roundTrip > .zero && answer.roundTrip < .seconds(30))
        #expect(fake.requests == 1)
    }

    /// A server that never answers ends the query at its timeout, naming the server.
    @Test func silenceTimesOutInBoundedTime() async throws {
        let fake = try await FakeRoughtimeServer { _, _ in }
        defer { fake.close() }
        let server = try RoughtimeServer(host: "127.0.0.1", port: fake.port, publicKey: [UInt8](repeating: 9, count: 32))
        let clock = ContinuousClock()
        let start = clock.now
        let error = await #expect(throws: AuthenticatedTimeClientError.self) { try await RoughtimeClient.query(server, timeout: .milliseconds(300)) }
        let took = clock.now - start
        #expect(error?.code == .timedOut)
        #expect(error?.message == "roughtime://127.0.0.1:\(fake.port): no valid answer within 0.3 seconds")
        #expect(took >= .milliseconds(300) && took < .seconds(10))
        #expect(fake.requests == 1)
    }

    /// An answer past the spec's size, or one that does not verify, is ignored: the timeout
    /// then says why.
    @Test func oversizedOrUnverifiedAnswersAreIgnoredAndNamed() async throws {
        let signer = try RoughtimeTestSigner()
        let oversized = try await FakeRoughtimeServer { _, send in
            try send(RoughtimePacket.frame([UInt8](repeating: 0, count: 2988)), false)
            try send(RoughtimePacket.frame([UInt8](repeating: 0, count: 1088)), false)
        }
        defer { oversized.close() }
        let first = try RoughtimeServer(host: "127.0.0.1", port: oversized.port, publicKey: signer.publicKey)
        let tooLarge = await #expect(throws: AuthenticatedTimeClientError.self) { try await RoughtimeClient.query(first, timeout: .seconds(5)) }
        #expect(
            tooLarge?.message.hasSuffix("; ignored an answer: answer: 1100 bytes, more than the 1024 a request may get") == true,
            "\(tooLarge?.message ?? "")")
        let keys = try signer.pems()
        let impostor = try await FakeRoughtimeServer { request, send in try send(RoughtimeTestSigner(pems: keys).answer(requests: [request]), false) }
        defer { impostor.close() }
        let second = try RoughtimeServer(host: "127.0.0.1", port: impostor.port, publicKey: try RoughtimeTestSigner().publicKey)
        let unverified = await #expect(throws: AuthenticatedTimeClientError.self) { try await RoughtimeClient.query(second, timeout: .seconds(5)) }
        #expect(unverified?.message.hasSuffix("ignored an answer: CERT.SIG: the delegation is not signed by the server's long-term key") == true)
    }

    @Test func cancellingEndsTheWait() async throws {
        let fake = try await FakeRoughtimeServer { _, _ in }
        defer { fake.close() }
        let server = try RoughtimeServer(host: "127.0.0.1", port: fake.port, publicKey: [UInt8](repeating: 9, count: 32))
        let task = Task { try await RoughtimeClient.query(server, timeout: .seconds(600)) }
        try await fake.received.wait(for: "the request") { $0 == 1 }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }
}

/// A UDP server on 127.0.0.1 that hands each request to `respond`, which answers through
/// `send(bytes, fromAnotherPort)`: from the server's own socket, or from a second one. The
/// answers leave in order, each after the one before was written.
final class FakeRoughtimeServer: Sendable {
    typealias Respond = @Sendable (_ request: [UInt8], _ send: ([UInt8], Bool) throws -> Void) throws -> Void

    let channel: any Channel
    let decoy: any Channel
    let port: Int
    /// Requests received.
    let received: Observed<Int>

    var requests: Int { received.value }

    init(respond: @escaping Respond) async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let decoy = try await DatagramBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        let counter = Observed(0)
        received = counter
        let channel = try await DatagramBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Handler(respond: respond, decoy: decoy, counter: counter))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        self.channel = channel
        self.decoy = decoy
        port = channel.localAddress?.port ?? 0
    }

    func close() {
        channel.close(promise: nil)
        decoy.close(promise: nil)
    }

    private final class Handler: ChannelInboundHandler, Sendable {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>
        let respond: Respond
        let decoy: any Channel
        let counter: Observed<Int>

        init(respond: @escaping Respond, decoy: any Channel, counter: Observed<Int>) {
            self.respond = respond
            self.decoy = decoy
            self.counter = counter
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let envelope = unwrapInboundIn(data)
            counter.update { $0 += 1 }
            var sends: [([UInt8], Bool)] = []
            try? respond(Array(envelope.data.readableBytesView)) { bytes, fromDecoy in sends.append((bytes, fromDecoy)) }
            let channel = context.channel
            let decoy = decoy
            var sent = channel.eventLoop.makeSucceededVoidFuture()
            for (bytes, fromDecoy) in sends {
                sent = sent.flatMap {
                    (fromDecoy ? decoy : channel).writeAndFlush(
                        AddressedEnvelope(remoteAddress: envelope.remoteAddress, data: ByteBuffer(bytes: bytes)))
                }
            }
        }
    }
}
