import DeviceIdentity
import DeviceTargeting
import Foundation
import StrictJSON

/// What a device sends to a collector: reports of one device, app and channel
/// (docs/fleet-reports.md#a-batch). Its JSON is one object:
///
/// ```json
/// {"schema": 2, "device": "0f…32 hex…", "key": "…64 hex…", "stream": "…16 hex…",
///  "app": "com.example.notes", "channel": "stable",
///  "reports": [{"seq": 7, "time": 1764090000000, "type": "committed", "running": "1.1.0",
///               "version": "1.1.0", "ms": 840}]}
/// ```
///
/// Schema 2 names the device's public key (its Ed25519 key, 32 bytes as hex) and the
/// journal's stream; the body is signed with that key (the `Clientctl-Signature` header,
/// ``signatureHeader``). Schema 1, of devices made before device keys, has neither.
///
/// Either schema may carry the device's labels, `"labels": {"ring": "beta", "store": "12"}`
/// (written only when the device has some), after `channel`.
public struct ReportBatch: Sendable, Equatable {
    /// The schema this version writes for a device with a key.
    public static let schema: Int64 = 2
    /// The schema of devices made before device keys (no `key`, no `stream`): still read.
    public static let unsignedSchema: Int64 = 1
    /// The HTTP header that carries the batch's Ed25519 signature over the exact JSON bytes
    /// (before compression), as 128 lowercase hex digits.
    public static let signatureHeader = "Clientctl-Signature"
    /// The most reports in one batch.
    public static let maxReports = 500
    /// The largest batch, in bytes of JSON (after decompression).
    public static let maxBytes = 256 * 1024

    /// The device's random id (`<root>/device-id`), 32 lowercase hex digits on the wire.
    public var device: DeviceID
    /// The app's identifier.
    public var app: String
    /// The channel's name.
    public var channel: String
    /// 1 to ``maxReports`` reports, in sequence order.
    public var reports: [FleetReport]
    /// The device's Ed25519 public key, 64 lowercase hex digits on the wire (schema 2; nil: schema 1).
    public var key: DevicePublicKey?
    /// The journal's stream: 16 lowercase hex digits, new whenever the device's journal state
    /// is lost, so sequence numbers that start again are never taken for duplicates (schema 2;
    /// nil: schema 1, the empty stream).
    public var stream: String?
    /// The device's labels (its `config.json`'s) when the batch was sent; none when empty.
    public var labels: DeviceLabels

    /// A batch of `reports`; with `key` and `stream`, a schema-2 batch.
    public init(
        device: DeviceID, app: String, channel: String, reports: [FleetReport], key: DevicePublicKey? = nil, stream: String? = nil,
        labels: DeviceLabels = DeviceLabels()
    ) {
        self.device = device
        self.app = app
        self.channel = channel
        self.reports = reports
        self.key = key
        self.stream = stream
        self.labels = labels
    }

    /// The stream as stored: the empty string for a schema-1 batch.
    public var streamKey: String { stream ?? "" }

    // MARK: Writing

    /// The batch's JSON, compact, fields in a fixed order.
    public func encoded() -> Data {
        var out = "{\"schema\":\(key == nil ? Self.unsignedSchema : Self.schema),\"device\":" + Self.quote(device.text)
        if let key { out += ",\"key\":" + Self.quote(key.hex) + ",\"stream\":" + Self.quote(stream ?? "") }
        out += ",\"app\":" + Self.quote(app)
        out += ",\"channel\":" + Self.quote(channel)
        if !labels.isEmpty { out += ",\"labels\":" + Self.labelsJSON(labels) }
        out += ",\"reports\":["
        for (i, report) in reports.enumerated() {
            if i > 0 { out += "," }
            out += Self.encode(report)
        }
        out += "]}"
        return Data(out.utf8)
    }

    /// The batch's labels as ``labelsJSON(_:)`` writes them: what a collector stores.
    public var labelsJSON: String { Self.labelsJSON(labels) }

    /// Labels as canonical JSON: one compact object, keys in byte order
    /// (`{"ring":"beta","store":"12"}`), or the empty string when there are none. Neither a
    /// label's key nor its value holds a character JSON escapes, so a label `KEY=VALUE` is in
    /// it exactly when it contains `"KEY":"VALUE"` (``LabelFilter/patterns``).
    public static func labelsJSON(_ labels: DeviceLabels) -> String {
        guard !labels.isEmpty else { return "" }
        let members = labels.values.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { quote($0.key) + ":" + quote($0.value) }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// One report as a JSON object (also a line of the device's journal).
    public static func encode(_ r: FleetReport) -> String {
        var out = "{\"seq\":\(r.seq),\"time\":\(millis(r.time)),\"type\":" + quote(r.type.rawValue)
        out += ",\"running\":" + quote(r.running)
        if let v = r.shell { out += ",\"shell\":" + quote(v) }
        if let v = r.version { out += ",\"version\":" + quote(v) }
        if let v = r.from { out += ",\"from\":" + quote(v) }
        if let v = r.reason { out += ",\"reason\":" + quote(v.rawValue) }
        if let v = r.detail { out += ",\"detail\":" + quote(v) }
        if let v = r.via { out += ",\"via\":" + quote(v.rawValue) }
        if let v = r.bytes { out += ",\"bytes\":\(v)" }
        if let v = r.mirrorBytes { out += ",\"mirrorBytes\":\(v)" }
        if let v = r.ms { out += ",\"ms\":\(v)" }
        if let v = r.count { out += ",\"count\":\(v)" }
        if let v = r.rollout { out += ",\"rollout\":{\"percent\":\(v.percent),\"paused\":\(v.paused)}" }
        return out + "}"
    }

    /// Milliseconds since 1970, to the nearest (exact back and forth for every time
    /// ``maxTime`` allows).
    public static func millis(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// The latest `time` a report may carry: 2⁴⁵ ms, the year 3084.
    public static let maxTime: Int64 = 1 << 45

    static func quote(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 || u.value == 0x7f {
                    out += String(format: "\\u%04x", u.value)
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out + "\""
    }

    // MARK: Reading

    /// Reads and checks a batch: strict JSON, the known schema, every field's type, range
    /// and size; unknown fields are refused (a batch is never partly stored).
    /// - Throws: ``FleetReportsError`` naming the field and why.
    public static func decode(_ bytes: some Collection<UInt8>) throws -> ReportBatch {
        guard bytes.count <= maxBytes else {
            throw FleetReportsError(.tooLarge, "batch is \(bytes.count) bytes, more than the \(maxBytes)-byte limit")
        }
        let value: JSONValue
        do {
            value = try StrictJSON.parse(bytes, limits: .init(maxBytes: maxBytes, maxDepth: 4), source: "batch")
        } catch let error as StrictJSONError {
            throw FleetReportsError(.malformed, error.message, underlying: error)
        }
        guard case .object(let object) = value else { throw FleetReportsError(.malformed, "batch: not a JSON object") }
        var fields = FieldReader(object, at: .batch)
        guard let schema = object["schema"] else { throw FleetReportsError(.invalidField, "schema: missing") }
        guard case .integer(let n) = schema else { throw FleetReportsError(.invalidField, "schema: not an integer") }
        guard n == Self.schema || n == Self.unsignedSchema else {
            throw FleetReportsError(.unknownSchema, "schema: \(n) is not a schema this collector knows (1, 2)")
        }
        _ = fields.take("schema")
        let device = try fields.deviceID("device")
        var key: DevicePublicKey?
        var stream: String?
        if n == Self.schema {
            key = try fields.deviceKey("key")
            stream = try fields.string("stream", rule: .hex(digits: 16))
        }
        let app = try fields.string("app", rule: .identifier(maxBytes: 255))
        let channel = try fields.string("channel", rule: .identifier(maxBytes: 64))
        let labels = try fields.take("labels").map(decodeLabels) ?? DeviceLabels()
        let list = try fields.array("reports")
        guard !list.isEmpty else { throw FleetReportsError(.invalidField, "reports: empty") }
        guard list.count <= maxReports else {
            throw FleetReportsError(.tooLarge, "reports: \(list.count) reports, more than \(maxReports)")
        }
        try fields.noneLeft()
        var reports: [FleetReport] = []
        reports.reserveCapacity(list.count)
        for (i, item) in list.enumerated() {
            reports.append(try decodeReport(item, at: .element(i)))
        }
        return ReportBatch(device: device, app: app, channel: channel, reports: reports, key: key, stream: stream, labels: labels)
    }

    /// Reads a batch's `labels`: an object of at most `DeviceLabels.maxCount` members whose
    /// keys and values follow the label grammar (an empty object is no labels).
    /// - Throws: ``FleetReportsError`` `.invalidField` naming the label and why.
    static func decodeLabels(_ value: JSONValue) throws -> DeviceLabels {
        guard case .object(let object) = value else { throw FleetReportsError(.invalidField, "labels: not an object") }
        guard object.members.count <= DeviceLabels.maxCount else {
            throw FleetReportsError(.invalidField, "labels: \(object.members.count) labels, more than \(DeviceLabels.maxCount)")
        }
        var values: [String: String] = [:]
        for member in object {
            let key = FieldReader.printable(member.key)
            if let why = DeviceLabels.keyProblem(member.key) {
                throw FleetReportsError(.invalidField, "labels: the key \"\(key)\" \(why)")
            }
            guard case .string(let text) = member.value else { throw FleetReportsError(.invalidField, "labels.\(key): not a string") }
            if let why = DeviceLabels.valueProblem(text) { throw FleetReportsError(.invalidField, "labels.\(key): the value \(why)") }
            values[member.key] = text
        }
        do {
            return try DeviceLabels(values)
        } catch let error as DeviceIdentityError {
            throw FleetReportsError(.invalidField, "labels: \(error.message)", underlying: error)
        }
    }

    /// Reads and checks one report (a batch element or a journal line).
    /// - Throws: ``FleetReportsError`` naming the field and why.
    public static func decodeReport(_ value: JSONValue, path: String = "report") throws -> FleetReport {
        try decodeReport(value, at: .named(path))
    }

    /// Reads and checks one report at `place` (named in error messages only).
    static func decodeReport(_ value: JSONValue, at place: FieldReader.ReportPlace) throws -> FleetReport {
        guard case .object(let object) = value else { throw FleetReportsError(.invalidField, "\(place.path): not an object") }
        var f = FieldReader(object, at: .report(place))
        let seq = try f.integer("seq", in: 1...JSONValue.maxSafeInteger)
        let time = try f.integer("time", in: 0...maxTime)
        let typeName = try f.string("type", rule: .word)
        guard let type = ReportKind(rawValue: typeName) else {
            throw FleetReportsError(.invalidField, "\(place.path).type: unknown report type \"\(typeName)\"")
        }
        var r = FleetReport(
            seq: seq, time: Date(timeIntervalSince1970: Double(time) / 1000), type: type,
            running: try f.string("running", rule: .version))
        r.shell = try f.optionalString("shell", rule: .version)
        r.version = try f.optionalString("version", rule: .version)
        r.from = try f.optionalString("from", rule: .version)
        if let reason = try f.optionalString("reason", rule: .word) {
            guard let known = ReportReason(rawValue: reason) else {
                throw FleetReportsError(.invalidField, "\(place.path).reason: unknown reason \"\(reason)\"")
            }
            r.reason = known
        }
        r.detail = try f.optionalString("detail", rule: .text(maxBytes: FleetReport.maxDetailBytes))
        if let via = try f.optionalString("via", rule: .word) {
            guard let known = FleetReport.Transfer(rawValue: via) else {
                throw FleetReportsError(.invalidField, "\(place.path).via: unknown transfer \"\(via)\"")
            }
            r.via = known
        }
        r.bytes = try f.optionalInteger("bytes", in: 0...JSONValue.maxSafeInteger)
        r.mirrorBytes = try f.optionalInteger("mirrorBytes", in: 0...JSONValue.maxSafeInteger)
        r.ms = try f.optionalInteger("ms", in: 0...JSONValue.maxSafeInteger)
        r.count = try f.optionalInteger("count", in: 1...JSONValue.maxSafeInteger)
        if let rollout = f.take("rollout") {
            guard case .object(let o) = rollout else { throw FleetReportsError(.invalidField, "\(place.path).rollout: not an object") }
            var rf = FieldReader(o, at: .rollout(place))
            let percent = try rf.integer("percent", in: 0...100)
            let paused = try rf.bool("paused")
            try rf.noneLeft()
            r.rollout = RolloutSeen(percent: Int(percent), paused: paused)
        }
        try f.noneLeft()
        return r
    }
}
