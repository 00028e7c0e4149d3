import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import FleetReports
import Foundation
import Synchronization

/// Requests to a collector's admission endpoints with a token (`fleet devices`, `fleet
/// admit`, `fleet reject`, `fleet forget`; docs/fleet-reports.md#admission), over the
/// transport devices use. A redirect is an error: the token goes to `--collector` only.
struct CollectorClient {
    /// The collector's base URL.
    var collector: URL
    /// The read token (listing) or the admin token (changes).
    var token: String
    var transport: any Transport = DefaultTransport()
    /// The largest answer read.
    var maxAnswerBytes = 4 << 20

    /// `base/path?query`.
    func url(_ path: String, _ query: [URLQueryItem] = []) throws -> URL {
        var components = URLComponents(url: collector, resolvingAgainstBaseURL: false)
        guard let scheme = components?.scheme?.lowercased(), scheme == "http" || scheme == "https", components?.host?.isEmpty == false else {
            throw CommandError(.invalidArgument, "--collector \(collector.absoluteString): not an http: or https: URL")
        }
        let base = components?.path ?? ""
        components?.path = (base.hasSuffix("/") ? base : base + "/") + path
        components?.percentEncodedQueryItems = query.isEmpty ? nil : Self.percentEncoded(query)
        guard let url = components?.url else {
            throw CommandError(.invalidArgument, "--collector \(collector.absoluteString): cannot make the request URL")
        }
        return url
    }

    /// GET `path`: the answer's bytes (status 200 only).
    /// - Throws: ``CommandError`` as ``FleetQuery/refusal(_:body:url:)`` maps a status;
    ///   ``UpdaterError`` `.network` when the collector cannot be reached.
    func get(_ path: String, _ query: [URLQueryItem] = []) async throws -> Data {
        try await get(url: try url(path, query))
    }

    /// GET `url` (a URL of the collector's): the answer's bytes (status 200 only), at most
    /// ``maxAnswerBytes``; a redirect is returned as an error, never followed.
    func get(url: URL) async throws -> Data {
        let body = Mutex(Data())
        let limit = maxAnswerBytes
        let request = TransportRequest(
            url: url, headers: ["Authorization": "Bearer \(token)", "Accept": "application/json"], idleTimeout: .seconds(30),
            timeLimit: .seconds(120),
            followsRedirects: false)
        let response = try await transport.get(request) { chunk in
            try body.withLock { data in
                guard data.count + chunk.count <= limit else {
                    throw CommandError(.rejected, "GET \(url.absoluteString): the answer is over \(limit >> 20) MiB")
                }
                data.append(contentsOf: chunk)
            }
        }
        let data = body.withLock { $0 }
        guard response.status == 200 else {
            throw FleetQuery.refusal(response.status, body: data, url: url, location: response[header: "location"])
        }
        return data
    }

    /// POST `path` with a JSON body: the answer's bytes (status 200 only).
    func post(_ path: String, json: Data) async throws -> Data {
        let url = try url(path)
        let request = TransportExchange(
            method: "POST", url: url,
            headers: ["Authorization": "Bearer \(token)", "Accept": "application/json", "Content-Type": "application/json"], body: json,
            idleTimeout: .seconds(30), timeLimit: .seconds(120))
        let reply = try await transport.exchange(request)
        guard reply.status == 200 else {
            throw FleetQuery.refusal(reply.status, body: reply.body, url: url, location: reply[header: "location"], method: "POST")
        }
        return reply.body
    }

    /// `items` with every byte of their names and values but ASCII letters, digits and
    /// `- . _ ~` percent-encoded: a `label=store=12` or a version `1.0.0+b` reaches the
    /// collector as it was given, whatever a proxy makes of `=`, `+` or `&` in a query.
    static func percentEncoded(_ items: [URLQueryItem]) -> [URLQueryItem] {
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        func encode(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "" }
        return items.map { URLQueryItem(name: encode($0.name), value: $0.value.map(encode)) }
    }

    /// The decoder of the collector's answers (dates as RFC 3339).
    static func decoder() -> JSONDecoder {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .iso8601
        return d
    }
}
