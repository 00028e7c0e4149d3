import Hummingbird
import HummingbirdCore
import NIOCore
import NIOHTTPTypes
import Synchronization

/// Keeps the native shell's own web view ahead of a local connection flood on its loopback
/// origin (docs/native-shell.md#how-the-loopback-origin-works).
///
/// Every peer of the listener is 127.0.0.1, so limits per peer cannot tell the view from a
/// flood. What only the view has is the run's ``LaunchSecret``: a connection becomes
/// *trusted* once a request head on it carries the run's cookie or a launch token the shell
/// minted and has not yet seen spent. Until then it is *untrusted*, and
/// - it has ``untrustedTimeout`` (the listener's header timeout) to send its first request
///   head, or it is closed (a head without the secret is answered `403` as usual);
/// - when the listener holds ``limit`` connections, each new one evicts the oldest
///   untrusted connection instead of waiting in the kernel's backlog: accept pauses only
///   when every open connection is trusted (the view opens a handful).
/// So a flood of idle connections, however large, never delays the view's next connection
/// by more than the time to accept and close the flood's connections queued before it.
package final class ConnectionAdmission: Sendable {
    /// Most connections held open at once (the listener's cap).
    package let limit: Int
    /// How long a new connection may wait before its first request head.
    package let untrustedTimeout: TimeAmount
    let secret: LaunchSecret
    private let state = Mutex(State())

    private struct Entry {
        let id: UInt64
        let channel: any Channel
        var trusted: Bool
    }

    private struct State {
        var nextID: UInt64 = 0
        /// Registered connections, oldest first.
        var entries: [Entry] = []
        var trusted = 0
        /// Connections closed because a newer one needed their place (for logs and tests).
        var evicted = 0
    }

    package init(limit: Int, untrustedTimeout: TimeAmount = .seconds(10), secret: LaunchSecret) {
        self.limit = max(1, limit)
        self.untrustedTimeout = untrustedTimeout
        self.secret = secret
    }

    /// Connections that are open and trusted.
    var trustedCount: Int { state.withLock { $0.trusted } }

    /// Connections closed so far to make room for newer ones.
    package var evictedCount: Int { state.withLock { $0.evicted } }

    /// Registers a new connection; returns its id and closes, if the listener is over its
    /// limit, the oldest untrusted connection other than this one.
    func admit(_ channel: any Channel) -> UInt64 {
        let (id, victim) = state.withLock { state -> (UInt64, (any Channel)?) in
            state.nextID += 1
            let id = state.nextID
            state.entries.append(Entry(id: id, channel: channel, trusted: false))
            guard state.entries.count > limit, let index = state.entries.firstIndex(where: { !$0.trusted && $0.id != id }) else {
                return (id, nil)
            }
            state.evicted += 1
            return (id, state.entries.remove(at: index).channel)
        }
        victim?.close(promise: nil)
        return id
    }

    /// The connection `id` showed the run's secret.
    func trust(_ id: UInt64) {
        state.withLock { state in
            guard let index = state.entries.firstIndex(where: { $0.id == id }), !state.entries[index].trusted else { return }
            state.entries[index].trusted = true
            state.trusted += 1
        }
    }

    /// The connection `id` closed.
    func remove(_ id: UInt64) {
        state.withLock { state in
            guard let index = state.entries.firstIndex(where: { $0.id == id }) else { return }
            if state.entries.remove(at: index).trusted { state.trusted -= 1 }
        }
    }

    /// Whether `head` carries this run's cookie or a launch token still waiting for its navigation.
    func isTrusted(_ head: HTTPRequest) -> Bool {
        if secret.admits(cookieHeaders: head.headerFields[values: .cookie]) { return true }
        guard let target = head.path, let mark = target.firstIndex(of: "?"), target[..<mark] == "/" else { return false }
        guard let token = LaunchSecret.token(inQuery: String(target[target.index(after: mark)...])) else { return false }
        return secret.isWaiting(token)
    }

    /// The listener's accept decision (Hummingbird's ``AvailableConnectionsDelegate``):
    /// below the limit, or while some open connection is untrusted (it will be evicted).
    struct AcceptDelegate: AvailableConnectionsDelegate {
        let admission: ConnectionAdmission
        var open = 0

        mutating func connectionOpened() { open += 1 }
        mutating func connectionClosed() { open -= 1 }
        func isAcceptingNewConnections() -> Bool { open < admission.limit || admission.trustedCount < open }
    }

    /// A handler for one connection (created per connection by the HTTP/1 pipeline).
    func handler() -> AdmissionHandler { AdmissionHandler(admission: self) }
}

/// One connection's side of ``ConnectionAdmission``: registers it, trusts it at the first
/// head that carries the run's secret, closes it if no head comes within the untrusted timeout,
/// and forgets it when it closes. Runs on the connection's event loop.
final class AdmissionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let admission: ConnectionAdmission
    private var id: UInt64?
    private var trusted = false
    private var timer: Scheduled<Void>?

    init(admission: ConnectionAdmission) { self.admission = admission }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { register(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        register(context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            // A head came: the request is answered (`403` without the secret), never cut.
            timer?.cancel()
            timer = nil
            if !trusted, admission.isTrusted(head), let id {
                trusted = true
                admission.trust(id)
            }
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        forget()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { forget() }

    private func register(_ context: ChannelHandlerContext) {
        guard id == nil else { return }
        id = admission.admit(context.channel)
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: admission.untrustedTimeout) { context.close(promise: nil) }
    }

    private func forget() {
        timer?.cancel()
        timer = nil
        if let id { admission.remove(id) }
        id = nil
    }
}
