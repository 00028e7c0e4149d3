import Foundation
import Hummingbird
import Synchronization

/// The DNS-rebinding guard of `clientctl serve`: every request must name this server's
/// own loopback listener in `Host` (`127.0.0.1:PORT`, `localhost:PORT` or `[::1]:PORT`),
/// and a POST that carries an `Origin` must come from that same origin.
///
/// A site whose name is rebound to 127.0.0.1 is same-origin with the shim's endpoints in
/// the browser, so the `X-Clientctl-Shim` header alone does not stop it; but its requests
/// carry its own name in `Host` (`evil.example:PORT`), which is refused here with `421
/// Misdirected Request`. A POST whose `Origin` is another origin (another port, another
/// name, `null`) is refused with `403`. Requests without `Origin` (curl, the command
/// line) are judged by `Host` alone. Both answers are JSON `{"error": …}`.
package final class HostGuard: Sendable {
    /// Written once the listener is bound.
    private let boundPort: Mutex<Int>

    /// - Parameter port: the configured port; 0 until ``bind(port:)`` tells the real one.
    package init(port: Int) { boundPort = Mutex(port) }

    /// Records the port the listener was bound to (port 0 lets the system choose).
    package func bind(port: Int) { boundPort.withLock { $0 = port } }

    /// The refusal for `request`, or `nil` when it may be answered.
    func refusal(for request: Request) -> Response? {
        let port = boundPort.withLock { $0 }
        guard let host = request.head.authority, Self.isOwnHost(host, port: port),
            request.headers[values: Self.hostField].isEmpty
        else {
            let named = request.head.authority.map { "Host \($0)" } ?? "no Host"
            return JSONResponse.make(
                .misdirectedRequest, ["error": "\(named) is not this server: it answers 127.0.0.1:\(port), localhost:\(port) and [::1]:\(port) only"])
        }
        if request.method == .post, let origin = request.headers[.origin],
            origin.lowercased() != "http://" + host.lowercased()
        {
            return JSONResponse.make(.forbidden, ["error": "a POST from origin \(origin) is refused: only pages of http://\(host) may post here"])
        }
        return nil
    }

    /// A second `Host` header stays among the fields (the first became the authority).
    static let hostField = HTTPFields.Element.Name.token("Host")

    /// True when `host` (a `Host` value) names the loopback listener on `port`.
    static func isOwnHost(_ host: String, port: Int) -> Bool {
        let names = ["127.0.0.1", "localhost", "[::1]"]
        let lowered = host.lowercased()
        return names.contains { lowered == "\($0):\(port)" || (port == 80 && lowered == $0) }
    }
}
