import Hummingbird
import NIOCore

/// The console's request context: Hummingbird's storage plus the peer's address (the key of
/// the login throttle, and the address the audit trail records).
public struct ConsoleRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The connection's peer, without its port (`127.0.0.1`, `::1`).
    public let sourceAddress: String

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        sourceAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }
}
