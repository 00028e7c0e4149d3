import Hummingbird
import NIOCore

/// The request context of `serve`: Hummingbird's core storage plus the connection's close
/// future, so a long-lived response (the event stream) ends the moment its client leaves
/// instead of at the next write.
package struct ServeRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    /// Completes when the request's connection closes.
    package let connectionClosed: EventLoopFuture<Void>?

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        connectionClosed = source.channel.closeFuture
    }
}
