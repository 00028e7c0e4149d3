import Hummingbird
import NIOCore

/// The collector's request context: Hummingbird's storage plus the peer's address (the key
/// of the per-address rate limit).
public struct CollectorRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The connection's peer, without its port (`127.0.0.1`, `::1`).
    public let sourceAddress: String
    /// The connection (the body reader's watchdog closes it when a body falls behind).
    let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        sourceAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
        channel = source.channel
    }
}
