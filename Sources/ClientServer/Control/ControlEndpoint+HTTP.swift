import ClientShim
import Hummingbird
import LoopbackHTTP

extension ControlEndpoint {
    /// The endpoint's method as Hummingbird names it.
    var httpMethod: HTTPRequest.Method { HTTPRequest.Method(rawValue: method) ?? .get }

    /// ``ControlEndpoint/shimHeaderName`` as a header name (a static string for the token).
    static let shimHeader = HTTPFields.Element.Name.token("X-Clientctl-Shim")
}
