import ClientFoundation
import Foundation
import StrictJSON

/// What breaks, per version: the answer of `GET /v1/problems` (docs/fleet-reports.md#what-breaks).
///
/// Per version, newest SemVer first, the problem kinds its devices reported within the
/// window, most frequent first, and for `page-errors` the messages the devices kept, most
/// frequent first. Bounded whatever devices send: at most ``maxVersions`` versions,
/// ``maxProblems`` kinds a version (kinds are report types and reasons, closed sets) and
/// ``maxMessages`` messages of at most ``maxMessageBytes`` bytes each.
public struct ProblemSummary: Sendable, Equatable, Codable {
    /// The most versions one answer lists (`versions=N`, and `version=V` asked by name).
    public static let maxVersions = 20
    /// The versions listed when a request does not say.
    public static let defaultVersions = 10
    /// The most problem kinds listed for one version.
    public static let maxProblems = 24
    /// The most kept messages listed for one version's `page-errors`.
    public static let maxMessages = 5
    /// The longest kept message, in UTF-8 bytes (a device keeps at most this: docs/page-errors.md).
    public static let maxMessageBytes = 60
    /// The largest answer ``decode(_:)`` reads: far above what the bounds above allow (about 100 KiB).
    public static let maxBytes = 512 << 10

    /// The report types that count as problems: a trial rolled back, a web process that died,
    /// a download that failed, errors after start. Each is a ``ProblemCount/kind``.
    public static let kinds: [ReportKind] = [.rolledBack, .webProcessDied, .downloadFailed, .pageErrors]

    /// The app's identifier.
    public var app: String
    /// The channel's name.
    public var channel: String
    /// When the collector made the answer.
    public var generated: Date
    /// Only reports dated within this many seconds before ``generated`` count.
    public var windowSeconds: Int
    /// The versions with problems in the window, newest SemVer first (then other ids, byte
    /// by byte), and those asked for by name, problems or not.
    public var versions: [VersionProblems]

    /// An answer.
    public init(app: String, channel: String, generated: Date, windowSeconds: Int, versions: [VersionProblems] = []) {
        self.app = app
        self.channel = channel
        self.generated = generated
        self.windowSeconds = windowSeconds
        self.versions = versions
    }

    /// The encoder of the wire form: sorted keys, dates as RFC 3339.
    public static func encoder() -> JSONEncoder { FleetSummary.encoder() }

    /// A lenient decoder of the wire form (for the collector's own tests); a client reads an
    /// answer with ``decode(_:)``.
    public static func decoder() -> JSONDecoder { FleetSummary.decoder() }
}

/// One version's problems in a ``ProblemSummary``.
public struct VersionProblems: Sendable, Equatable, Codable {
    /// The version (SemVer, or the embedded seed's id).
    public var version: String
    /// Its problem kinds, most frequent first (by ``ProblemCount/count``, then devices).
    public var problems: [ProblemCount]

    /// A version's problems.
    public init(version: String, problems: [ProblemCount] = []) {
        self.version = version
        self.problems = problems
    }
}

/// One kind of problem of one version.
public struct ProblemCount: Sendable, Equatable, Codable {
    /// The report type (one of ``ProblemSummary/kinds``): `rolled-back`, `web-process-died`,
    /// `download-failed` or `page-errors`.
    public var kind: String
    /// The report's reason (``ReportReason`` raw value: `timed-out`, `crashed`, `network`…);
    /// nil for `page-errors`, and for a report that gave none.
    public var reason: String?
    /// Events in the window: reports, or for `page-errors` the problems they count.
    public var count: Int64
    /// Distinct devices that reported it.
    public var devices: Int
    /// For `page-errors`: the messages the devices kept, most frequent first (at most
    /// ``ProblemSummary/maxMessages``); nil for the other kinds.
    public var messages: [KeptMessage]?

    /// A kind's figures.
    public init(kind: String, reason: String? = nil, count: Int64, devices: Int, messages: [KeptMessage]? = nil) {
        self.kind = kind
        self.reason = reason
        self.count = count
        self.devices = devices
        self.messages = messages
    }
}

/// A message devices kept with their `page-errors` (docs/page-errors.md), exactly as kept:
/// text from devices, to be escaped wherever it is shown.
public struct KeptMessage: Sendable, Equatable, Codable {
    /// The message (at most ``ProblemSummary/maxMessageBytes`` bytes).
    public var message: String
    /// The reports (periods of use) that kept it.
    public var count: Int

    /// A message.
    public init(message: String, count: Int) {
        self.message = message
        self.count = count
    }
}

extension ProblemSummary {
    /// Reads and checks an answer of `GET /v1/problems` strictly: strict JSON of at most
    /// ``maxBytes``, every field of its type and within its bounds (at most ``maxVersions``
    /// versions, ``maxProblems`` kinds each, ``maxMessages`` messages each of at most
    /// ``maxMessageBytes`` bytes without control characters), kinds and reasons from the
    /// closed sets, unknown fields refused. What a hostile collector sends is refused in one
    /// line naming the field, never used in part.
    /// - Throws: ``FleetReportsError`` naming the field and why.
    public static func decode(_ bytes: some Collection<UInt8>) throws -> ProblemSummary {
        guard bytes.count <= maxBytes else {
            throw FleetReportsError(.tooLarge, "problems: \(bytes.count) bytes, more than \(maxBytes)")
        }
        let value: JSONValue
        do {
            value = try StrictJSON.parse(bytes, limits: .init(maxBytes: maxBytes, maxDepth: 7), source: "problems")
        } catch let error as StrictJSONError {
            throw FleetReportsError(.malformed, error.message, underlying: error)
        }
        guard case .object(let object) = value else { throw FleetReportsError(.malformed, "problems: not a JSON object") }
        var f = FieldReader(object, at: .report(.named("problems")))
        let app = try f.string("app", rule: .identifier(maxBytes: 255))
        let channel = try f.string("channel", rule: .identifier(maxBytes: 64))
        let stamp = try f.string("generated", rule: .text(maxBytes: 35))
        guard case .success(let generated) = RFC3339.read(stamp) else {
            throw FleetReportsError(.invalidField, "problems.generated: not an RFC 3339 time")
        }
        let window = try f.integer("windowSeconds", in: 1...JSONValue.maxSafeInteger)
        let list = try f.array("versions")
        guard list.count <= maxVersions else {
            throw FleetReportsError(.tooLarge, "problems.versions: \(list.count) versions, more than \(maxVersions)")
        }
        try f.noneLeft()
        var versions: [VersionProblems] = []
        for (i, item) in list.enumerated() { versions.append(try decodeVersion(item, path: "versions[\(i)]")) }
        return ProblemSummary(app: app, channel: channel, generated: generated, windowSeconds: Int(window), versions: versions)
    }

    private static func object(_ value: JSONValue, _ path: String) throws -> FieldReader {
        guard case .object(let object) = value else { throw FleetReportsError(.invalidField, "\(path): not an object") }
        return FieldReader(object, at: .report(.named(path)))
    }

    private static func decodeVersion(_ value: JSONValue, path: String) throws -> VersionProblems {
        var f = try object(value, path)
        let version = try f.string("version", rule: .version)
        let list = try f.array("problems")
        guard list.count <= maxProblems else {
            throw FleetReportsError(.tooLarge, "\(path).problems: \(list.count) kinds, more than \(maxProblems)")
        }
        try f.noneLeft()
        var problems: [ProblemCount] = []
        for (j, item) in list.enumerated() { problems.append(try decodeProblem(item, path: "\(path).problems[\(j)]")) }
        return VersionProblems(version: version, problems: problems)
    }

    private static func decodeProblem(_ value: JSONValue, path: String) throws -> ProblemCount {
        var f = try object(value, path)
        let kind = try f.string("kind", rule: .word)
        guard let type = ReportKind(rawValue: kind), kinds.contains(type) else {
            throw FleetReportsError(.invalidField, "\(path).kind: \"\(kind)\" is not a problem kind")
        }
        let reason = try f.optionalString("reason", rule: .word)
        if let reason, ReportReason(rawValue: reason) == nil {
            throw FleetReportsError(.invalidField, "\(path).reason: unknown reason \"\(reason)\"")
        }
        let count = try f.integer("count", in: 0...JSONValue.maxSafeInteger)
        let devices = try f.integer("devices", in: 0...JSONValue.maxSafeInteger)
        var messages: [KeptMessage]?
        if let found = f.take("messages"), found != .null {
            guard type == .pageErrors else { throw FleetReportsError(.invalidField, "\(path).messages: only page-errors keep messages") }
            guard case .array(let list) = found else { throw FleetReportsError(.invalidField, "\(path).messages: not an array") }
            guard list.count <= maxMessages else {
                throw FleetReportsError(.tooLarge, "\(path).messages: \(list.count) messages, more than \(maxMessages)")
            }
            messages = try list.enumerated().map { k, item in
                var m = try object(item, "\(path).messages[\(k)]")
                let text = try m.string("message", rule: .text(maxBytes: maxMessageBytes))
                let n = try m.integer("count", in: 0...JSONValue.maxSafeInteger)
                try m.noneLeft()
                return KeptMessage(message: text, count: Int(n))
            }
        }
        try f.noneLeft()
        return ProblemCount(kind: kind, reason: reason, count: count, devices: Int(devices), messages: messages)
    }
}
