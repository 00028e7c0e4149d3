import DeviceIdentity
import FleetReports
import Foundation
import HTTPTypes
import Hummingbird

/// Admission and the guard's figures (docs/fleet-reports.md#admission): listing devices and
/// the guard's figures need the read token; admitting, rejecting and forgetting need the
/// admin token (`--admin-token-file`), which a collector started without one has none of.
struct AdminRoutes: Sendable {
    let collector: Collector

    /// An operator's change.
    enum Change: String {
        case admit, reject, forget
    }

    /// The most devices one change may name.
    static let maxNames = 1_000
    /// The largest body of a change.
    static let maxBody = 128 * 1024

    /// `GET /v1/devices[?status=pending|accepted|rejected][&limit=N][&label=KEY=VALUE…]`.
    func devices(_ request: Request) async -> Response {
        if let why = collector.configuration.readToken.refusal(request.headers, allowBasic: false) {
            return Refusal.response(.unauthorized, why)
        }
        let query = request.uri.queryParameters
        var status: DeviceStatus?
        if let text = query["status"] {
            guard let s = DeviceStatus(rawValue: String(text)) else {
                return Refusal.response(.badRequest, "status: not pending, accepted or rejected")
            }
            status = s
        }
        var limit = 100
        if let text = query["limit"] {
            guard let n = Int(text), (1...DeviceList.maxListed).contains(n) else {
                return Refusal.response(.badRequest, "limit: not a number from 1 to \(DeviceList.maxListed)")
            }
            limit = n
        }
        let labels: LabelFilter
        switch ReadRoutes.labelFilter(query[values: "label"].map(String.init)) {
        case .success(let filter): labels = filter
        case .failure(let problem): return Refusal.response(.badRequest, problem.message)
        }
        do {
            let list = try await collector.store.devices(
                status: status, limit: limit, admission: collector.configuration.admission, labels: labels)
            return Refusal.json(try Self.encoder().encode(list) + Data("\n".utf8))
        } catch {
            collector.logger.error("device list failed: \(error)")
            return Refusal.response(.serviceUnavailable, "the report store is unavailable; retry later", retryAfter: 30)
        }
    }

    /// `POST /v1/devices/{admit,reject,forget}` with `{"devices": ["KEY or DEVICE-ID", …]}`.
    func change(_ request: Request, _ change: Change) async -> Response {
        guard let token = collector.configuration.adminToken else {
            return Refusal.response(.forbidden, "this collector takes no admin requests: start it with --admin-token-file")
        }
        if let why = token.refusal(request.headers, allowBasic: false) {
            return Refusal.response(.unauthorized, why.replacingOccurrences(of: "read token", with: "admin token"))
        }
        var body: [UInt8] = []
        do {
            for try await chunk in request.body {
                guard body.count + chunk.readableBytes <= Self.maxBody else {
                    return Refusal.response(.contentTooLarge, "body is more than \(Self.maxBody) bytes")
                }
                body.append(contentsOf: chunk.readableBytesView)
            }
        } catch {
            return Refusal.response(.badRequest, "the body could not be read: \(error)")
        }
        let names: [DeviceReference]
        switch Self.names(body, change: change) {
        case .success(let list): names = list
        case .failure(let why): return Refusal.response(.badRequest, why.message)
        }
        do {
            let result: AdmissionChange
            switch change {
            case .admit: result = try await collector.store.admit(names, now: collector.now())
            case .reject: result = try await collector.store.reject(names, now: collector.now())
            case .forget: result = try await collector.store.forget(devices: names.compactMap(\.id))
            }
            collector.logger.notice(
                "\(change.rawValue): \(result.named) named, \(result.devices) devices changed, \(result.reports) held reports moved or deleted")
            return Refusal.json(try Self.encoder().encode(result) + Data("\n".utf8))
        } catch {
            collector.logger.error("\(change.rawValue) failed: \(error)")
            return Refusal.response(.serviceUnavailable, "the report store is unavailable; retry later", retryAfter: 30)
        }
    }

    /// `GET /v1/guard?app=ID&channel=NAME&version=V[&version=W…][&trusted-before=MS][&since=MS][&label=KEY=VALUE…]`:
    /// with labels, the figures of the devices whose latest labels include them (the answer's
    /// `labels` says so; a collector before labels ignored them and said nothing).
    func guardFigures(_ request: Request) async -> Response {
        if let why = collector.configuration.readToken.refusal(request.headers, allowBasic: false) {
            return Refusal.response(.unauthorized, why)
        }
        let query = request.uri.queryParameters
        guard let app = query["app"].map(String.init), FleetReportsNames.valid(app, maxBytes: 255) else {
            return Refusal.response(.badRequest, "app: missing or not an identifier")
        }
        guard let channel = query["channel"].map(String.init), FleetReportsNames.valid(channel, maxBytes: 64) else {
            return Refusal.response(.badRequest, "channel: missing or not an identifier")
        }
        let versions = query.getAll("version").map { String($0) }
        guard (1...GuardFigures.maxVersions).contains(versions.count),
            versions.allSatisfy({ FleetReportsNames.valid($0.replacingOccurrences(of: "+", with: "-"), maxBytes: 64) })
        else {
            return Refusal.response(.badRequest, "version: 1 to \(GuardFigures.maxVersions) versions are needed (?version=1.2.0)")
        }
        var times: [String: Date] = [:]
        for name in ["trusted-before", "since"] {
            guard let text = query[Substring(name)] else { continue }
            guard let ms = Int64(text), (0...ReportBatch.maxTime).contains(ms) else {
                return Refusal.response(.badRequest, "\(name): not milliseconds since 1970")
            }
            times[name] = Date(timeIntervalSince1970: Double(ms) / 1000)
        }
        let labels: LabelFilter
        switch ReadRoutes.labelFilter(query[values: "label"].map(String.init)) {
        case .success(let filter): labels = filter
        case .failure(let problem): return Refusal.response(.badRequest, problem.message)
        }
        do {
            let figures = try await collector.store.guardFigures(
                app: app, channel: channel, versions: versions, trustedBefore: times["trusted-before"], since: times["since"],
                admission: collector.configuration.admission, labels: labels)
            return Refusal.json(try Self.encoder().encode(figures) + Data("\n".utf8))
        } catch {
            collector.logger.error("guard figures failed: \(error)")
            return Refusal.response(.serviceUnavailable, "the report store is unavailable; retry later", retryAfter: 30)
        }
    }

    struct Problem: Error {
        let message: String
    }

    /// The names of a change's body: keys (64 hex digits) or device ids (32); forget takes ids only.
    static func names(_ body: [UInt8], change: Change) -> Result<[DeviceReference], Problem> {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any], object.count == 1,
            let list = object["devices"] as? [String]
        else {
            return .failure(Problem(message: "body: not {\"devices\": [\"KEY or DEVICE-ID\", …]}"))
        }
        guard (1...maxNames).contains(list.count) else {
            return .failure(Problem(message: "devices: 1 to \(maxNames) keys or device ids are needed"))
        }
        var names: [DeviceReference] = []
        for name in list {
            guard let named = DeviceReference(name), change != .forget || named.id != nil else {
                let what = change == .forget ? "a device id (32 hex digits)" : "a key (64 hex digits) or a device id (32)"
                return .failure(Problem(message: "devices: \"\(name.prefix(70))\" is not \(what)"))
            }
            names.append(named)
        }
        return .success(names)
    }

    static func encoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        e.dateEncodingStrategy = .iso8601
        return e
    }
}
