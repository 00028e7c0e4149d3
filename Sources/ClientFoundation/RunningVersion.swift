/// What a device runs: the embedded seed the shell shipped with, or an installed version.
///
/// In JSON (reports, events, `status --json`) it is one string: `"embedded"` for the seed,
/// else the version's id, as it always was; in Swift the seed is a case, never a string
/// to compare against.
public enum RunningVersion: Hashable, Sendable, CustomStringConvertible {
    /// The seed bundled with the shell (`init --embedded`, or a Meteor app's `www`).
    case embedded
    /// An installed version, by its id (`1.2.0`, or a Meteor version hash).
    case installed(String)

    /// `.installed(id)`, or `.embedded` for `nil` (how `state.json` records the seed).
    public init(_ id: String?) {
        self = id.map(RunningVersion.installed) ?? .embedded
    }

    /// The installed version's id; `nil` for the embedded seed.
    public var installedID: String? {
        if case .installed(let id) = self { return id }
        return nil
    }

    /// `embedded`, or the version's id.
    public var description: String {
        switch self {
        case .embedded: return "embedded"
        case .installed(let id): return id
        }
    }

    /// For messages: `the embedded seed`, or the version's id.
    public var spoken: String { self == .embedded ? "the embedded seed" : description }
}

extension RunningVersion: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        self = text == "embedded" ? .embedded : .installed(text)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
