import AsyncHTTPClient
import DeviceIdentity
import FleetReports
import Foundation
import NIOCore

/// The console's requests to the collector (docs/fleet-reports.md#the-collector): the fleet
/// summary and the devices with the read token, admit and reject with the admin token.
/// Every answer is bounded in size and time; a redirect is refused, never followed (a token
/// goes to `--collector` and nowhere else).
struct CollectorReader: Sendable {
    let client: HTTPClient
    /// The collector's base URL, ending in `/`.
    let base: String
    let readToken: String
    let adminToken: String
    /// The largest answer read.
    var maxAnswerBytes = 16 << 20
    /// The time one request may take.
    var timeout: TimeAmount = .seconds(15)

    /// A client that follows no redirect and gives up on a silent collector.
    static func makeClient() -> HTTPClient {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5), read: .seconds(15)))
        configuration.decompression = .disabled
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// `GET /v1/fleet?app=A&channel=C`.
    func fleet(app: String, channel: String) async throws -> FleetSummary {
        try Self.decode(FleetSummary.self, try await get("v1/fleet", ["app": app, "channel": channel]), "GET /v1/fleet")
    }

    /// `GET /v1/devices?status=pending&limit=N`.
    func pending(limit: Int = 200) async throws -> DeviceList {
        try Self.decode(DeviceList.self, try await get("v1/devices", ["status": "pending", "limit": "\(limit)"]), "GET /v1/devices")
    }

    /// `GET /v1/problems?app=A&channel=C`: the raw answer (nil: this collector has no such route).
    func problems(app: String, channel: String) async throws -> Data? {
        do {
            return try await get("v1/problems", ["app": app, "channel": channel])
        } catch let error as OperatorConsoleError where error.message.hasPrefix("404 ") {
            return nil
        }
    }

    /// `POST /v1/devices/admit` or `reject` with `{"devices": [id]}` and the admin token.
    func change(_ act: String, device: DeviceID) async throws -> AdmissionChange {
        let body = try JSONEncoder().encode(["devices": [device.text]])
        let data = try await send(post: true, "v1/devices/\(act)", [:], token: adminToken, body: body)
        return try Self.decode(AdmissionChange.self, data, "POST /v1/devices/\(act)")
    }

    private func get(_ path: String, _ query: [String: String]) async throws -> Data {
        try await send(post: false, path, query, token: readToken, body: nil)
    }

    private func send(post: Bool, _ path: String, _ query: [String: String], token: String, body: Data?) async throws -> Data {
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let encoded = query.sorted { $0.key < $1.key }.map {
            "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "")"
        }
        let url = base + path + (encoded.isEmpty ? "" : "?" + encoded.joined(separator: "&"))
        var request = HTTPClientRequest(url: url)
        if post { request.method = .POST }
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Accept", value: "application/json")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let shown = "\(post ? "POST" : "GET") \(base)\(path)"
        do {
            let response = try await client.execute(request, timeout: timeout)
            let buffer = try await response.body.collect(upTo: maxAnswerBytes)
            let data = Data(buffer.readableBytesView)
            guard response.status == .ok else {
                let why = (try? JSONDecoder().decode([String: String].self, from: data))?["error"] ?? ""
                throw OperatorConsoleError(
                    .rejected, "\(response.status.code) from the collector (\(shown))\(why.isEmpty ? "" : ": " + why)")
            }
            return data
        } catch let error as OperatorConsoleError {
            throw error
        } catch {
            throw OperatorConsoleError(.io, "the collector did not answer \(shown): \(error)")
        }
    }

    /// `data` as a `T`, or ``OperatorConsoleError`` `.rejected` naming the request.
    static func decode<T: Decodable>(_ type: T.Type, _ data: Data, _ request: String) throws -> T {
        do {
            return try decoder().decode(type, from: data)
        } catch {
            throw OperatorConsoleError(.rejected, "the collector's answer to \(request) is not what it should be: \(error)")
        }
    }

    /// The decoder of the collector's answers (dates as RFC 3339).
    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
