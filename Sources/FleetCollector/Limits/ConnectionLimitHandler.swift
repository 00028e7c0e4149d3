import NIOCore

/// The first look at a connection: takes a place of its source address in the
/// ``ConnectionLimit`` when it becomes active, or closes it at once when the address holds
/// every place; gives the place back when it closes. Everything read passes through.
final class ConnectionLimitHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    let limit: ConnectionLimit
    /// The address whose place this connection holds.
    private var holding: String?
    private var decided = false

    init(limit: ConnectionLimit) { self.limit = limit }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { decide(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        decide(context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        release()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { release() }

    private func decide(_ context: ChannelHandlerContext) {
        guard !decided else { return }
        decided = true
        let address = context.channel.remoteAddress?.ipAddress ?? "unknown"
        if limit.slots.enter(address) {
            holding = address
        } else {
            limit.refused.increment()
            context.close(promise: nil)
        }
    }

    private func release() {
        guard let address = holding else { return }
        holding = nil
        limit.slots.leave(address)
    }
}
