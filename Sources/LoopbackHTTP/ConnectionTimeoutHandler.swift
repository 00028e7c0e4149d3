import NIOCore
import NIOHTTPTypes

/// Closes connections that do not send a request head in time: from accept until the first
/// head (the header-read timeout, which also ends slowloris trickles) and from the end of
/// each response until the next head (the idle keep-alive timeout). It is never armed while
/// a request is being answered, so a long response (the event stream) is never cut; and it
/// closes a connection whose client has gone.
final class ConnectionTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let headerTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private var timer: Scheduled<Void>?
    /// Requests whose head arrived and whose response end is not yet written out.
    private var inFlight = 0

    init(headerTimeout: TimeAmount, idleTimeout: TimeAmount) {
        self.headerTimeout = headerTimeout
        self.idleTimeout = idleTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context, headerTimeout) }
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context, headerTimeout)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) {
            inFlight += 1
            disarm()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            let written = promise ?? context.eventLoop.makePromise()
            context.write(data, promise: written)
            // Idle from the moment the last byte left, unless the next request already came.
            // On the channel's event loop, like every call of this handler.
            written.futureResult.assumeIsolated().whenComplete { [weak self] _ in
                guard let self else { return }
                self.inFlight = max(0, self.inFlight - 1)
                if self.inFlight == 0, context.channel.isActive { self.arm(context, self.idleTimeout) }
            }
            return
        }
        context.write(data, promise: promise)
    }

    /// A client that closed its side is gone: the server's half-closure support would keep
    /// a long response (an event stream) writing into the void until the next heartbeat,
    /// so the connection is closed at once. (Browsers and web views never half-close.)
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            disarm()
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { disarm() }

    private func arm(_ context: ChannelHandlerContext, _ after: TimeAmount) {
        disarm()
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: after) { context.close(promise: nil) }
    }

    private func disarm() {
        timer?.cancel()
        timer = nil
    }
}
