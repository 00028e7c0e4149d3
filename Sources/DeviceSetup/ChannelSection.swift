import Foundation

/// The keys of `config.json` or `state.json` that belong to the root's channel.
///
/// The core reads and writes only its own keys; every other key of the file is the
/// channel's, kept here as JSON the core never interprets. A channel reads its keys with
/// ``decode(_:)`` into its own `Codable` type and writes them back with ``init(_:)``
/// (the whole section at once: a root has one channel, so it owns every other key).
/// On disk the section's keys sit beside the core's, as they always have.
package struct ChannelSection: Sendable, Equatable {
    /// The channel's keys and their JSON values.
    package private(set) var values: [String: StoredJSON]

    /// An empty section.
    package init() { values = [:] }

    /// The section that encodes `fields` (a channel's own `Encodable` type).
    /// - Throws: when `fields` does not encode to a JSON object.
    package init<Fields: Encodable>(_ fields: Fields) throws {
        let data = try JSONEncoder().encode(fields)
        guard case .object(let object) = try JSONDecoder().decode(StoredJSON.self, from: data) else {
            throw DeviceSetupError(.invalidArgument, "a channel section must encode to a JSON object")
        }
        values = object
    }

    package init(values: [String: StoredJSON]) { self.values = values }

    /// The section read as the channel's own type.
    package func decode<Fields: Decodable>(_ type: Fields.Type = Fields.self) throws -> Fields {
        try JSONDecoder().decode(Fields.self, from: try JSONEncoder().encode(StoredJSON.object(values)))
    }

    /// Writes the core's keys (`encodeCore`) and this section's keys into one JSON object;
    /// a section key that the core owns is refused rather than written twice.
    package func encode(to encoder: any Encoder, coreKeys: Set<String>, encodeCore: (any Encoder) throws -> Void) throws {
        try encodeCore(encoder)
        var container = encoder.container(keyedBy: AnyKey.self)
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            guard !coreKeys.contains(key) else {
                throw EncodingError.invalidValue(value, .init(codingPath: [AnyKey(key)], debugDescription: "'\(key)' belongs to the core"))
            }
            try container.encode(value, forKey: AnyKey(key))
        }
    }

    /// Every key of `decoder`'s object that the core does not own.
    package static func decode(from decoder: any Decoder, coreKeys: Set<String>) throws -> ChannelSection {
        let container = try decoder.container(keyedBy: AnyKey.self)
        var values: [String: StoredJSON] = [:]
        for key in container.allKeys where !coreKeys.contains(key.stringValue) {
            values[key.stringValue] = try container.decode(StoredJSON.self, forKey: key)
        }
        return ChannelSection(values: values)
    }
}

/// A JSON value kept as read (numbers as `Double`: channel sections hold names, URLs,
/// keys and small counts, never integers above 2^53).
package indirect enum StoredJSON: Codable, Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([StoredJSON])
    case object([String: StoredJSON])

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([StoredJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: StoredJSON].self))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

/// A coding key for any string (the channel's keys are not known to the core).
package struct AnyKey: CodingKey {
    package var stringValue: String
    package var intValue: Int? { nil }
    package init(_ string: String) { stringValue = string }
    package init?(stringValue: String) { self.stringValue = stringValue }
    package init?(intValue: Int) { nil }
}
