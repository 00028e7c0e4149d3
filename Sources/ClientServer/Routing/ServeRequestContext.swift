import Hummingbird
import NIOCore

/// The request context of `serve`: Hummingbird's core storage plus the connection's close
/// future, so a long-lived response (the event stream) ends the moment its client leaves
/// instead of at the next write.
public struct ServeRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Completes when the request's connection closes.
    let connectionClosed: EventLoopFuture<Void>?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        connectionClosed = source.channel.closeFuture
    }
}
